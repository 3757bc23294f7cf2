"""Every setting resolves the same way: a flag beats the environment, which beats the file, which
beats the default; a list given at a higher level replaces the lower one whole.

One table row per setting. The first test fails when a row of ``SETTINGS`` has no row here, so
a new setting cannot ship without its precedence being tested.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme

from runvil._faces.config import SETTINGS, Config, declared_settings, load_config
from tests.faces_helpers import user_config


@dataclass(frozen=True)
class Row:
    """A setting's value at each level: ``file`` as TOML text, ``env`` as the variable's text,
    ``flag`` as the command line hands it over (``None``: the setting has no flag), then the
    effective value each level gives."""

    key: str
    file: str
    env: str
    flag: Any
    from_file: Any
    from_env: Any
    from_flag: Any = None


ROWS = [
    Row("envelope", "false", "on", False, False, True, False),
    Row("approval", '"deny"', "ask", "auto", "deny", "ask", "auto"),
    Row("web", "false", "yes", False, False, True, False),
    Row("fetch.user_agent", '"file/1"', "env/1", "flag/1", "file/1", "env/1", "flag/1"),
    Row("fetch.private_hosts", '["a.corp.example", "b.corp.example"]', "c.corp.example",
        ("d.corp.example", "e.corp.example:8080,f.corp.example"),
        ("a.corp.example", "b.corp.example"), ("c.corp.example",),
        ("d.corp.example", "e.corp.example:8080", "f.corp.example")),
    Row("fetch.allowed_domains", '["file.example", "python.org"]', "env.example",
        ("flag.example",), ("file.example", "python.org"), ("env.example",), ("flag.example",)),
    Row("fetch.blocked_domains", '["file.example"]', "env.example other.example",
        ("flag.example",), ("file.example",), ("env.example", "other.example"),
        ("flag.example",)),
    Row("fetch.proxy", '"http://file.proxy:3128"', "http://env.proxy:3128", None,
        "http://file.proxy:3128", "http://env.proxy:3128"),
    Row("search.proxy", '"http://file.proxy:3128"', "none", None,
        "http://file.proxy:3128", None),
    Row("fetch.ca_bundle", '"{dir}/file.pem"', "{dir}/env.pem", "{dir}/flag.pem",
        "{dir}/file.pem", "{dir}/env.pem", "{dir}/flag.pem"),
    Row("mcp.tools", '["web_fetch"]', "web_search", "web_fetch,notes_echo",
        ("web_fetch",), ("web_search",), ("web_fetch", "notes_echo")),
    Row("mcp.packs", '["example/notes"]', "acme/one", ("acme/two", "acme/three"),
        ("example/notes",), ("acme/one",), ("acme/two", "acme/three")),
    Row("mcp.max_sessions", "10", "20", 30, 10, 20, 30),
    Row("mcp.sessions_per_peer", "4", "5", 6, 4, 5, 6),
    Row("mcp.session_idle_timeout", "30", "45.5", 60.0, 30.0, 45.5, 60.0),
    Row("search.rate", "2", "0.5", None, 2.0, 0.5),
    Row("mcp.allowed_hosts", '["file.example"]', "env.example *.svc.example",
        ("flag.example", "*.cluster.local"), ("file.example",), ("env.example", "*.svc.example"),
        ("flag.example", "*.cluster.local")),
    Row("mcp.state", '"redis://file.example:6379/0"', "redis://env.example:6379/1",
        "redis://flag.example:6380/2", "redis://file.example:6379/0",
        "redis://env.example:6379/1", "redis://flag.example:6380/2"),
    Row("fetch.continuation", "false", "on", False, False, True, False),
    Row("fetch.pdf", "false", "on", False, False, True, False),
    Row("fetch.pdf_max_pages", "10", "20", None, 10, 20),
    Row("fetch.robots", "true", "off", True, True, False, True),
    Row("fetch.browser", '"always"', "never", "auto", "always", "never", "auto"),
    Row("fetch.browser_path", '"/file/chromium"', "/env/chromium", None,
        "/file/chromium", "/env/chromium"),
]
BY_KEY = {row.key: row for row in ROWS}


def test_every_setting_has_a_row() -> None:
    assert sorted(BY_KEY) == sorted(setting.key for setting in SETTINGS)
    for setting in SETTINGS:
        assert (BY_KEY[setting.key].flag is None) == (setting.flag is None), setting.key


def effective(config: Config, key: str) -> Any:
    """The value ``config`` holds for ``key``, or the marker ``"unset"`` when only the default
    applies to a Pack's setting (the Pack is handed only the settings that were set)."""
    owner = declared_settings(installed=False).owners[key]
    if owner is not None:
        return config.pack_settings.get(owner, {}).get(key, "unset")
    return getattr(config, key.replace(".", "_"))


def toml(key: str, literal: str) -> str:
    table, _, name = key.rpartition(".")
    return f"[{table}]\n{name} = {literal}\n" if table else f"{key} = {literal}\n"


@pytest.mark.parametrize("row", ROWS, ids=[row.key for row in ROWS])
def test_flag_then_environment_then_file_then_default(row: Row, tmp_path: Path) -> None:
    setting = next(s for s in SETTINGS if s.key == row.key)
    ca = trustme.CA()
    for name in ("file", "env", "flag"):
        ca.cert_pem.write_to_path(str(tmp_path / f"{name}.pem"))

    def filled(value: Any) -> Any:
        return value.format(dir=tmp_path) if isinstance(value, str) else value

    home = {"HOME": str(tmp_path)}
    default = load_config(env=home, cwd=tmp_path)
    assert default.sources[row.key] == "default"
    owned = declared_settings(installed=False).owners[row.key] is not None
    assert effective(default, row.key) == ("unset" if owned else setting.default)

    user_config(tmp_path).write_text(toml(row.key, filled(row.file)), encoding="utf-8")
    from_file = load_config(env=home, cwd=tmp_path)
    assert (effective(from_file, row.key), from_file.sources[row.key]) == (
        filled(row.from_file), f"file:{user_config(tmp_path)}",
    )

    env = {**home, setting.env[0]: filled(row.env)}
    from_env = load_config(env=env, cwd=tmp_path)
    assert (effective(from_env, row.key), from_env.sources[row.key]) == (
        filled(row.from_env), f"env:{setting.env[0]}",
    )

    if setting.flag is not None:
        from_flag = load_config({setting.flag: filled(row.flag)}, env=env, cwd=tmp_path)
        assert (effective(from_flag, row.key), from_flag.sources[row.key]) == (
            filled(row.from_flag), "flag",
        )


# --- the settings outside the table: search and model roles --------------------------------


@pytest.mark.parametrize(
    ("file", "variable", "flag", "read"),
    [
        ('api_key = "file-key"', ("BRAVE_API_KEY", "env-key"), {"search_api_key": "flag-key"},
         lambda c: c.search.api_key),
        ('url = "https://file.example/"', ("SEARXNG_URL", "https://env.example/"),
         {"search_url": "https://flag.example/"}, lambda c: c.search.url),
        ("allow_private = true", ("RUNVIL_SEARXNG_ALLOW_PRIVATE", "false"),
         {"search_allow_private": True}, lambda c: c.search.allow_private),
    ],
    ids=["search.api_key", "search.url", "search.allow_private"],
)
def test_the_search_settings(
    tmp_path: Path, file: str, variable: tuple[str, str], flag: dict[str, Any], read: Any
) -> None:
    provider = "brave" if "api_key" in file else "searxng"
    home = {"HOME": str(tmp_path)}
    # searxng needs a URL at every level: the file gives one when the row is not the URL's own.
    needs_url = provider == "searxng" and "url =" not in file
    extra = 'url = "https://file.example/"\n' if needs_url else ""
    user_config(tmp_path).write_text(f'[search]\nprovider = "{provider}"\n{extra}{file}\n')
    values = [
        read(load_config(env=home, cwd=tmp_path)),
        read(load_config(env={**home, variable[0]: variable[1]}, cwd=tmp_path)),
        read(load_config(flag, env={**home, variable[0]: variable[1]}, cwd=tmp_path)),
    ]
    expected = {
        "search.api_key": ["file-key", "env-key", "flag-key"],
        "search.url": ["https://file.example/", "https://env.example/", "https://flag.example/"],
        "search.allow_private": [True, False, True],
    }
    key = next(k for k in expected if k.split(".")[1] in file)
    assert values == expected[key]


def test_the_search_provider(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path), "BRAVE_API_KEY": "b", "TAVILY_API_KEY": "t"}
    # By default a key's variable picks its provider; the file beats that guess.
    assert load_config(env=home, cwd=tmp_path).sources["search.provider"] == "env:BRAVE_API_KEY"
    user_config(tmp_path).write_text('[search]\nprovider = "tavily"\n')
    levels = [
        load_config(env=home, cwd=tmp_path),
        load_config(env={**home, "RUNVIL_SEARCH_PROVIDER": "none"}, cwd=tmp_path),
        load_config({"search_provider": "brave"},
                    env={**home, "RUNVIL_SEARCH_PROVIDER": "none"}, cwd=tmp_path),
    ]
    assert [(c.search.provider, c.sources["search.provider"]) for c in levels] == [
        ("tavily", f"file:{user_config(tmp_path)}"),
        ("none", "env:RUNVIL_SEARCH_PROVIDER"),
        ("brave", "flag"),
    ]


def test_a_model_role(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    user_config(tmp_path).write_text('[models]\nwriter = "openai:file"\n')
    env = {**home, "RUNVIL_MODEL_WRITER": "openai:env"}
    levels = [
        load_config(env=home, cwd=tmp_path),
        load_config(env=env, cwd=tmp_path),
        load_config({"models": {"writer": "openai:flag"}}, env=env, cwd=tmp_path),
    ]
    assert [(c.models["writer"], c.sources["models.writer"]) for c in levels] == [
        ("openai:file", f"file:{user_config(tmp_path)}"),
        ("openai:env", "env:RUNVIL_MODEL_WRITER"),
        ("openai:flag", "flag"),
    ]


def test_the_network_flags_are_on_fetch_run_mcp_and_config_and_repeatable() -> None:
    from runvil._faces.cli import cli

    for name, command in cli.commands.items():
        options = {opt: param for param in command.params for opt in param.opts}
        network = ("--private-host", "--allow-domain", "--block-domain")
        if name in ("fetch", "run", "mcp", "config"):
            assert all(options[flag].multiple for flag in network), name
        else:
            assert not set(network) & set(options), name
        assert "--ca-bundle" in options, name
        assert ("--packs" in options) == (name in ("mcp", "config")), name
