"""One call path: every face calls its tools through a Host run, and a call's result is typed.

The command line's fetch and search are checked through public seams only: ``main(network=...)``
(the embedding entry point the launcher uses) and ``runvil.current_run``, which a Host run sets
for each call it makes and which is ``None`` for a tool called on its own. A resolver that
notes the run it is asked from therefore tells a call through a Host from a direct one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from runvil import (
    CallResult,
    Host,
    RunScope,
    Tool,
    ToolError,
    ToolErrorKind,
    ToolOutcome,
    TypedToolImplementation,
    current_run,
    envelope,
)
from runvil._faces.cli import main
from runvil._host import model_text
from runvil.web import DnsError, Network, WebFetch
from tests.faces_helpers import GATEWAY_KEY, GATEWAY_URL

NONCE = "0123456789abcdef"
DNS_FAILED = "dns resolution failed for example.com"


class RunSpy:
    """A network whose every lookup fails, noting the run each lookup was made in."""

    def __init__(self) -> None:
        self.runs: list[RunScope | None] = []

    async def resolve(self, host: str) -> list[str]:
        self.runs.append(current_run.get())
        raise DnsError(host)

    def network(self) -> Network:
        return Network(resolve=self.resolve)


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No configuration file and no runvil setting from the caller's environment."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


def cli(args: Sequence[str], network: Network) -> int:
    """Run the command line in this process against ``network``; its exit code."""
    with pytest.raises(SystemExit) as done:
        main(list(args), network=network)
    code = done.value.code
    assert isinstance(code, int)
    return code


# -- the command line calls through a Host run ---------------------------------------------------


async def test_a_fetch_called_on_its_own_sees_no_run() -> None:
    # The control: the spy tells a direct call from one through a Host.
    spy = RunSpy()
    async with WebFetch(network=spy.network()) as fetch:
        assert await fetch.call({"url": "https://example.com/"}) == DNS_FAILED
    assert spy.runs == [None]


def test_runvil_fetch_calls_its_tool_in_a_host_run(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    spy = RunSpy()
    assert cli(["fetch", "https://example.com/"], spy.network()) == 1
    assert capsys.readouterr().out == DNS_FAILED + "\n"
    assert len(spy.runs) == 1 and isinstance(spy.runs[0], RunScope)
    assert spy.runs[0].ended  # the command's run is over, and what it kept went with it


def test_runvil_fetch_json_reads_the_typed_outcome_of_that_call(
    clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    spy = RunSpy()
    assert cli(["fetch", "https://example.com/", "--json"], spy.network()) == 1
    assert capsys.readouterr().out == (
        '{"ok": false, "text": "' + DNS_FAILED + '", "error_kind": "Soft"}\n'
    )
    assert isinstance(spy.runs[0], RunScope)


def test_runvil_fetch_asks_no_approval_the_user_typed_the_url(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RUNVIL_APPROVAL", "deny")  # for the model-facing faces only
    spy = RunSpy()
    assert cli(["fetch", "https://example.com/"], spy.network()) == 1
    assert capsys.readouterr().out == DNS_FAILED + "\n"
    assert isinstance(spy.runs[0], RunScope)


def test_runvil_search_calls_its_tool_in_a_host_run(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RUNVIL_SEARCH_GATEWAY_URL", GATEWAY_URL)
    monkeypatch.setenv("RUNVIL_SEARCH_GATEWAY_KEY", GATEWAY_KEY)
    spy = RunSpy()
    assert cli(["search", "rust", "--search-provider", "gateway"], spy.network()) == 2
    assert capsys.readouterr().err.startswith("web_search: ")
    assert spy.runs and all(isinstance(run, RunScope) for run in spy.runs)


# -- a typed call result -------------------------------------------------------------------------


class Reading:
    """A typed outcome: a page, or a soft failure."""

    def __init__(self, text: str, ok: bool = True) -> None:
        self.text = text
        self.ok = ok

    def model_text(self) -> str:
        return self.text


class TypedEcho:
    """``typed/echo``: answers ``said: {text}`` as a typed outcome; ``soft`` makes it a soft
    failure, a missing text a hard one."""

    tool = Tool("typed/echo", "Echo, typed.", {"type": "object"})

    def __init__(self) -> None:
        self.plain_calls = 0

    async def call(self, args: dict[str, Any]) -> str:
        self.plain_calls += 1
        return (await self.call_outcome(args)).model_text()

    async def call_outcome(self, args: dict[str, Any]) -> Reading:
        text = args.get("text")
        if not isinstance(text, str):
            raise ToolError(ToolErrorKind.InvalidArguments, "typed_echo: missing text")
        return Reading(f"said: <{text}>", ok=not args.get("soft"))


class TypedPack:
    name = "acme/typed"
    plugin_id = None
    config_key = "typed"
    requirements: Sequence[Any] = ()

    def __init__(self) -> None:
        self.echo = TypedEcho()

    def configure(self, value: Any) -> str | None:
        return None

    def build(self) -> Sequence[TypedEcho]:
        return (self.echo,)

    def approval_detail(self, tool_name: str, args: Mapping[str, Any]) -> str | None:
        return None

    async def aclose(self) -> None:
        return None


def test_a_typed_tool_and_its_outcome_are_the_protocols() -> None:
    assert isinstance(TypedEcho(), TypedToolImplementation)
    assert isinstance(Reading("x"), ToolOutcome)


async def test_invoke_returns_the_tools_typed_outcome() -> None:
    pack = TypedPack()
    async with Host(packs=[pack]) as host, host.run(nonce=NONCE) as run:
        result = await run.invoke("typed/echo", {"text": "hi"})
        assert isinstance(result.outcome, Reading)
        assert (result.text, result.error, result.ok, result.soft) == (
            "said: <hi>", None, True, False,
        )
        soft = await run.invoke("typed/echo", {"text": "hi", "soft": True})
        assert (soft.text, soft.ok, soft.soft) == ("said: <hi>", False, True)
        # The text a model reads comes from the same outcome, through the same call.
        assert await run.call("typed/echo", {"text": "hi"}) == envelope("said: <hi>", NONCE)
        box = run.toolbox()
        box.offer("typed/echo")
        dispatched = await box.dispatch("typed_echo", {"text": "hi"})
        assert (dispatched.text, dispatched.is_error) == (envelope("said: <hi>", NONCE), False)
    assert pack.echo.plain_calls == 0  # the Host calls call_outcome, never call


async def test_invoke_returns_a_hard_failure_as_a_value() -> None:
    async with Host(packs=[TypedPack()]) as host, host.run(nonce=NONCE) as run:
        failed = await run.invoke("typed/echo", {})
        assert failed.error is not None and failed.outcome is None
        assert (failed.text, failed.error.kind, failed.ok, failed.soft) == (
            "typed_echo: missing text", ToolErrorKind.InvalidArguments, False, False,
        )
        unknown = await run.invoke("typed/nope", {})
        assert unknown.error is not None
        assert (unknown.text, unknown.error.kind) == (
            "unknown tool typed/nope", ToolErrorKind.InvalidArguments,
        )
        with pytest.raises(ToolError) as raised:
            await run.call("typed/echo", {})
        assert raised.value is not failed.error and raised.value.message == failed.text


@pytest.mark.parametrize(
    ("result", "enveloped", "own_errors_bare", "expected"),
    [
        (CallResult("a<b"), True, False, envelope("a<b", NONCE)),
        (CallResult("a<b"), False, False, "a<b"),
        (CallResult("a<b"), True, True, envelope("a<b", NONCE)),
        (CallResult.failed(ToolError(ToolErrorKind.Other, "own")), True, False,
         envelope("own", NONCE)),
        (CallResult.failed(ToolError(ToolErrorKind.Other, "own")), True, True, "own"),
        (CallResult.failed(ToolError(ToolErrorKind.Other, "their<", untrusted=True)), True, True,
         envelope("their<", NONCE)),
        (CallResult.failed(ToolError(ToolErrorKind.Other, "their<", untrusted=True)), False, True,
         "their<"),
    ],
)
def test_model_text_is_the_one_rule_for_what_a_model_reads(
    result: CallResult, enveloped: bool, own_errors_bare: bool, expected: str
) -> None:
    # Run.call and the toolbox: everything enveloped; MCP: its own errors bare; --no-envelope:
    # nothing enveloped.
    assert model_text(
        result, NONCE, enveloped=enveloped, own_errors_bare=own_errors_bare
    ) == expected
