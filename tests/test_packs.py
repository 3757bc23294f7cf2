"""The Pack boundary: built Packs handed to the Host, Packs found through the ``runvil.packs``
entry points, and a third-party Pack served by the same rules as the web Pack."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runvil import (
    DEFAULT_PLUGINS,
    Approval,
    ApprovalRequest,
    Host,
    OfferError,
    Pack,
    RunError,
    ToolError,
    ToolErrorKind,
)
from runvil.web import WebPack, web_pack
from tests.fixtures import example_pack
from tests.fixtures.example_pack import NotesPack
from tests.test_host_fakes import Fakes, fakes

__all__ = ["fakes"]

PROVIDER = object()


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example distribution installed (its metadata on ``sys.path``) for this test only."""
    monkeypatch.syspath_prepend(str(example_pack.install(tmp_path / "site")))
    example_pack.BUILT.clear()
    yield
    example_pack.BUILT.clear()


# -- built Packs --------------------------------------------------------------------------------


def test_a_built_web_pack_serves_both_forms_from_one_build(fakes: Fakes) -> None:
    net, policy = object(), object()
    pack = web_pack(provider=PROVIDER, network=net, policy=policy)
    assert isinstance(pack, WebPack) and isinstance(pack, Pack)
    h = Host(packs=[pack])
    assert list(h.tools) == ["web/fetch", "web/search"]
    assert list(h.plugin_tools) == ["promptforge/web/fetch", "promptforge/web/search"]
    assert fakes.builds == [(PROVIDER, net, policy)]
    assert h.tools["web/fetch"].catalog is h.plugin_tools["promptforge/web/fetch"].catalog


def test_plugins_pick_the_forms_of_built_packs(fakes: Fakes) -> None:
    h = Host(packs=[web_pack(provider=PROVIDER)], plugins=("runvil/web",))
    assert list(h.packs) == ["web"] and dict(h.plugins) == {}
    assert Host(packs=[web_pack(provider=PROVIDER)], plugins=()).packs == {}


def test_a_built_web_pack_without_a_provider_has_the_seed_reasons(fakes: Fakes) -> None:
    h = Host(packs=[web_pack(provider=None)])
    assert h.packs["web"].reason == (
        "web needs runvil/search-provider, and this host provides none"
    )
    assert h.plugins["promptforge/web"].reason == (
        "promptforge/web needs promptforge/search-provider, and this host provides none"
    )
    assert fakes.builds == []


@pytest.mark.asyncio
async def test_another_pack_beside_the_web_pack(fakes: Fakes) -> None:
    notes = NotesPack()
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.ONCE

    async with Host(
        packs=[web_pack(provider=PROVIDER), notes], config={"notes": {"prefix": "> "}},
        approve=approve,
    ) as h:
        assert list(h.tools) == ["notes/echo", "web/fetch", "web/search"]
        assert list(h.packs) == ["web", "notes"]
        assert h.pack("example/notes") is h.packs["notes"]
        assert h.pack("notes") is None  # a bare entry means the runvil Pack of that id
        assert h.tools["notes/echo"].wire_name == "notes_echo"
        assert await h.call("notes/echo", {"text": "hi"}, envelope=False) == "> hi"
        assert [tool.id for tool in h.offer_pack("example/notes")] == ["notes/echo"]
        assert h.prepare(uses=["example/notes", "web"]) == (h.packs["notes"], h.packs["web"])
    assert asked == [ApprovalRequest("notes/echo", "echo hi")]
    assert notes.echo is not None and notes.echo.closed


def test_a_pack_s_own_configuration_problem_and_requirement(fakes: Fakes) -> None:
    bad = Host(packs=[NotesPack()], config={"notes": {"colour": "red"}})
    assert bad.packs["notes"].reason == "notes takes only a prefix string"
    missing = Host(packs=[NotesPack(needs_clock=True)])
    assert missing.packs["notes"].reason == "notes needs runvil/clock, and this host provides none"
    with pytest.raises(RunError) as caught:
        missing.prepare(uses=["example/notes"])
    assert str(caught.value) == (
        "the environment cannot satisfy this prompt:\n"
        "- notes is unavailable: notes needs runvil/clock, and this host provides none"
    )
    with pytest.raises(OfferError, match=r"^packs\.offer: the notes Pack is unavailable in this "
                       r"run: notes needs runvil/clock, and this host provides none$"):
        missing.offer_pack("example/notes")
    both = Host(packs=[NotesPack(needs_clock=True)], config={"notes": 1})
    assert both.packs["notes"].reason == "notes takes only a prefix string"  # configuration first


@pytest.mark.asyncio
async def test_a_pack_s_tool_fails_in_its_own_words(fakes: Fakes) -> None:
    async with Host(packs=[NotesPack()]) as h:
        with pytest.raises(ToolError) as caught:
            await h.call("notes/echo", None)
    assert (caught.value.kind, caught.value.message) == (
        ToolErrorKind.InvalidArguments, "notes_echo: missing text argument",
    )


@pytest.mark.parametrize(
    ("packs", "error", "message"),
    [
        ([object()], TypeError, "packs holds built Pack objects, not object"),
        ([NotesPack(), NotesPack()], ValueError,
         "two Packs with the Pack id notes: example/notes, example/notes"),
    ],
)
def test_packs_the_host_refuses(packs: list[Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        Host(packs=packs)
    assert str(caught.value) == message


def test_a_pack_name_must_be_vendor_slash_id() -> None:
    pack = NotesPack()
    pack.name = "notes"  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"^a Pack's name is vendor/id, not 'notes'$"):
        Host(packs=[pack])


def test_a_tool_outside_its_pack_s_ids_is_refused() -> None:
    pack = NotesPack()
    pack.name = "example/other"  # type: ignore[misc]
    with pytest.raises(ValueError) as caught:
        Host(packs=[pack])
    assert str(caught.value) == (
        "Pack example/other built tool 'notes/echo'; its tool ids are other/NAME, each once"
    )


# -- Packs found through entry points ------------------------------------------------------------


def test_a_third_party_pack_is_found_by_its_entry_point(fakes: Fakes, installed: None) -> None:
    h = Host(plugins=(*DEFAULT_PLUGINS, "example/notes"), search_provider=PROVIDER)
    assert list(h.packs) == ["web", "notes"]
    assert list(h.tools) == ["notes/echo", "web/fetch", "web/search"]
    assert len(example_pack.BUILT) == 1 and example_pack.BUILT[0].builds == 1


def test_the_entry_point_plugin_gets_the_host_s_services(installed: None) -> None:
    clock = object()
    Host(plugins=("example/notes",), search_provider=clock)
    assert example_pack.BUILT[0].clock is None  # the Host has a search provider, not a clock


def test_an_unknown_plugin_names_every_plugin_the_host_knows(installed: None) -> None:
    with pytest.raises(ValueError) as caught:
        Host(plugins=("acme/web",), search_provider=PROVIDER)
    assert str(caught.value) == (
        "unknown Plugin 'acme/web'; this host knows runvil/web, promptforge/web, example/notes"
    )
    assert example_pack.BUILT == []


def test_an_unknown_plugin_is_refused_before_any_plugin_runs(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[Any] = []
    monkeypatch.setattr("runvil.web._pack._provider_from_env", read.append)
    with pytest.raises(ValueError, match=r"^unknown Plugin 'acme/web'"):
        Host(plugins=("runvil/web", "acme/web"))
    assert read == [] and fakes.builds == []


def test_the_web_plugin_is_one_entry_point_under_both_names(fakes: Fakes) -> None:
    from importlib.metadata import entry_points

    found = {e.name: e.value for e in entry_points(group="runvil.packs")}
    assert found["runvil/web"] == found["promptforge/web"] == "runvil.web._pack:plugin"
    Host(search_provider=PROVIDER)
    assert len(fakes.builds) == 1


def test_the_host_package_imports_nothing_from_web_until_a_plugin_is_called() -> None:
    import subprocess

    code = (
        "import sys\n"
        "from runvil import Host\n"
        "Host(plugins=())\n"
        "print(sorted(m for m in sys.modules if m.startswith('runvil.web')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out == "[]\n"


def test_another_distribution_cannot_replace_the_web_pack(
    fakes: Fakes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site = example_pack.install(
        tmp_path / "site", names=("runvil/web", "promptforge/web", "runvil/extra"),
        dist="shadow_pack-1.0.dist-info",
    )
    monkeypatch.syspath_prepend(str(site))  # first on sys.path: it would win an equal contest
    example_pack.BUILT.clear()
    h = Host(search_provider=PROVIDER)
    assert list(h.tools) == ["web/fetch", "web/search"] and len(fakes.builds) == 1
    assert example_pack.BUILT == []
    with pytest.raises(ValueError, match=r"^unknown Plugin 'runvil/extra'"):
        Host(plugins=("runvil/extra",), search_provider=PROVIDER)
    assert "ignoring the runvil.packs entry point 'runvil/web' of shadow-pack" in caplog.text


def test_without_any_plugin_installed_the_message_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("runvil._host.host.installed_plugins", dict)
    with pytest.raises(ValueError) as caught:
        Host(search_provider=PROVIDER)
    assert str(caught.value) == (
        "unknown Plugin 'runvil/web'; no Plugin is installed (runvil registers its own as entry "
        "points: install it, or pip install -e . in a checkout)"
    )
