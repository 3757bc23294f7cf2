"""A Pack owns its settings: a third-party Pack declares one (``notes.suffix``) and it is a
``runvil.toml`` key, a variable and a flag like runvil's own, with the same precedence, the same
"did you mean" for a typo, a line in ``runvil config``, and its value handed to the Pack."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from runvil import Host, Setting
from runvil._faces.config import ConfigError, describe, load_config
from runvil._faces.wiring import wire
from tests.faces_helpers import REPO, child_env, run_cli, user_config, write_seam
from tests.fixtures import example_pack
from tests.fixtures.internet import FakeInternet
from tests.test_host_fakes import Fakes, fakes

__all__ = ["fakes"]


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example distribution installed (its metadata on ``sys.path``) for this test only."""
    site = example_pack.install(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    example_pack.BUILT.clear()
    yield site
    example_pack.BUILT.clear()


def test_a_pack_s_setting_resolves_flag_then_environment_then_file(
    installed: Path, tmp_path: Path
) -> None:
    home = {"HOME": str(tmp_path)}
    assert load_config(env=home, cwd=tmp_path).pack_settings.get("example/notes") is None
    user_config(tmp_path).write_text('[notes]\nsuffix = "-file"\n', encoding="utf-8")
    cfg = load_config(env=home, cwd=tmp_path)
    assert (cfg.pack_settings["example/notes"], cfg.sources["notes.suffix"]) == (
        {"notes.suffix": "-file"}, f"file:{user_config(tmp_path)}",
    )
    env = {**home, "RUNVIL_NOTES_SUFFIX": "-env"}
    cfg = load_config(env=env, cwd=tmp_path)
    assert (cfg.setting("notes.suffix"), cfg.sources["notes.suffix"]) == (
        "-env", "env:RUNVIL_NOTES_SUFFIX",
    )
    cfg = load_config({"notes_suffix": "-flag"}, env=env, cwd=tmp_path)
    assert (cfg.setting("notes.suffix"), cfg.sources["notes.suffix"]) == ("-flag", "flag")
    assert describe(cfg)["notes"] == {"suffix": "-flag"}


@pytest.mark.parametrize(
    ("file", "env", "message"),
    [
        ('[notes]\nsufix = "!"\n', {},
         "{path}: unknown key notes.sufix; did you mean notes.suffix?"),
        ("[notes]\nsuffix = 3\n", {}, "{path}: notes.suffix must be a string, not 3"),
        ("", {"RUNVIL_NOTES_SUFIX": "!"},
         "unknown environment variable RUNVIL_NOTES_SUFIX; did you mean RUNVIL_NOTES_SUFFIX?"),
    ],
)
def test_a_pack_s_setting_is_checked_like_runvil_s_own(
    installed: Path, tmp_path: Path, file: str, env: dict[str, str], message: str
) -> None:
    path = user_config(tmp_path)
    path.write_text(file, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path), **env}, cwd=tmp_path)
    assert str(info.value) == message.format(path=path)


def test_without_the_pack_its_setting_is_an_unknown_key(tmp_path: Path) -> None:
    path = user_config(tmp_path)
    path.write_text('[notes]\nsuffix = "!"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r": unknown key notes; known: approval, envelope, "):
        load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)


async def test_the_host_hands_the_pack_its_settings(installed: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "RUNVIL_NOTES_SUFFIX": "!"}
    async with wire(load_config(env=env, cwd=tmp_path)).host(plugins=["example/notes"]):
        echo = example_pack.BUILT[-1].echo
        assert echo is not None and await echo.call({"text": "hi"}) == "hi!"
    # An embedding application hands the same settings to the Host itself.
    settings = {"example/notes": {"notes.suffix": "?"}}
    async with Host(plugins=["example/notes"], settings=settings):
        echo = example_pack.BUILT[-1].echo
        assert echo is not None and await echo.call({"text": "hi"}) == "hi?"


def test_a_declaration_outside_the_pack_s_table_is_left_out(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A Pack can add settings, never take over runvil's: a key in ``[fetch]``, or a variable
    another setting reads, is ignored with a warning."""
    stray = Setting("fetch.robots", ("RUNVIL_NOTES_ROBOTS",), lambda v, w: v)
    clash = Setting("notes.other", ("RUNVIL_FETCH_ROBOTS",), lambda v, w: v)
    monkeypatch.setattr(example_pack.plugin, "settings", (example_pack.SUFFIX, stray, clash))
    cfg = load_config(env={"HOME": str(tmp_path), "RUNVIL_FETCH_ROBOTS": "on"}, cwd=tmp_path)
    assert cfg.fetch == {"robots": True} and "notes.other" not in cfg.sources
    assert [r.getMessage() for r in caplog.records] == [
        "ignoring a setting of Pack example/notes: fetch.robots is not in the Pack's own table "
        "[notes]",
        "ignoring a setting of Pack example/notes: notes.other: its variable is another "
        "setting's",
    ]


async def test_the_command_line_takes_a_pack_s_flag(
    internet: FakeInternet, tmp_path: Path
) -> None:
    site = example_pack.install(tmp_path / "site")
    env = {
        **child_env(write_seam(internet, tmp_path), tmp_path),
        "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
    }
    code, out, err = await run_cli("config", "--notes-suffix", "!", env=env, cwd=tmp_path)
    assert (code, err) == (0, "")
    assert '\n[mcp]\n' not in out and '\n[notes]\nsuffix = "!"  # flag\n' in out
    code, out, _ = await run_cli("mcp", "--help", env=env, cwd=tmp_path)
    assert code == 0 and "--notes-suffix TEXT" in out and "Text after every echoed note." in out
    code, out, _ = await run_cli("fetch", "--help", env=env, cwd=tmp_path)
    assert code == 0 and "--notes-suffix" not in out
    code, out, err = await run_cli("config", "--notes-sufix", "!", env=env, cwd=tmp_path)
    assert code == 2 and err.endswith(
        "Error: No such option '--notes-sufix'. Did you mean '--notes-suffix'?\n"
    )


# -- the Host: generic per-Pack settings, and the web Pack's given the short way ----------------


def test_the_web_plugin_makes_its_policy_from_its_settings(fakes: Fakes) -> None:
    from runvil.web import FetchPolicy

    provider = object()
    Host(search_provider=provider, settings={"runvil/web": {"fetch.robots": True}})
    base = FetchPolicy(max_chars=500)
    Host(
        search_provider=provider, fetch_policy=base,
        settings={"runvil/web": {"fetch.user_agent": "acme/1"}},
    )
    Host(search_provider=provider, fetch_policy=base)
    Host(search_provider=provider)
    assert [policy for _, _, policy in fakes.builds] == [
        FetchPolicy(robots=True),
        FetchPolicy(max_chars=500, user_agent="acme/1"),  # a setting over Host(fetch_policy=)
        base,  # Host(fetch_policy=...) as it always was
        None,  # nothing given: the tool's FetchPolicy()
    ]


def test_a_plugin_reads_the_fetch_policy_it_was_given_as_before() -> None:
    from runvil import PackContext

    policy = object()
    assert PackContext(settings={"fetch_policy": policy}).fetch_policy is policy
    assert PackContext().fetch_policy is None and PackContext().settings == {}


def test_settings_must_map_plugin_names() -> None:
    message = r"^settings maps a Plugin's name to its settings, not list$"
    with pytest.raises(TypeError, match=message):
        Host(plugins=(), settings=[])  # type: ignore[arg-type]
