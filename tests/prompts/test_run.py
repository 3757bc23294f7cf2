"""run_prompt semantics: the section walk, requirements, model loop limits and failures, the
wall-time limit, cancellation, and the dialect-specific tool scope."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

import pytest

from runvil import Host, RunError, RunErrorKind, envelope
from runvil.prompts import Limits, ModelEndpoint, parse_prompt, run_prompt
from tests.fixtures.internet import Served
from tests.prompts.conftest import NONCE, ModelFactory, Provider
from tests.prompts.fake_models import FakeModel, calls, failure, last_tool_results, text

FETCH_DESCRIPTION = "Fetch a web page and return its main content as markdown."


def runvil_prompt(*sections: tuple[str, str, str], models: str = "") -> str:
    head = f"---\nname: t\nrunvil: 0\n{models}---\n\n# T\n"
    return head + "".join(
        f"\n## {title}\n\n{prose}\n\n```lua\n{code}\n```\n" for title, prose, code in sections
    )


def pf_prompt(
    *sections: tuple[str, str, str], tools: str = "  fetch: promptforge/web/fetch\n"
) -> str:
    head = (
        "---\nname: t\npromptforge: 0\nmodels:\n  writer: {}\nplugins: [promptforge/web]\n"
        f"tools:\n{tools}---\n\n# T\n"
    )
    return head + "".join(
        f"\n## {title}\n\n{prose}\n\n```lua\n{code}\n```\n" for title, prose, code in sections
    )


def endpoint(model: FakeModel) -> ModelEndpoint:
    return ModelEndpoint(api=model.api, base_url=model.base_url, model="m")


async def go(text_: str, host: Host, **kwargs: Any) -> str:
    return await run_prompt(parse_prompt(text_, source="t.md"), host=host, nonce=NONCE, **kwargs)


async def lua_threads_started_since(before: set[int | None]) -> list[threading.Thread]:
    """The prompt threads started after ``before`` was taken that are still alive after up to
    2 s for them to unwind."""
    for _ in range(100):
        left = [
            t for t in threading.enumerate() if t.name == "runvil-lua" and t.ident not in before
        ]
        if not left:
            break
        await asyncio.sleep(0.02)
    return left


async def go_error(text_: str, host: Host, **kwargs: Any) -> RunError:
    with pytest.raises(RunError) as caught:
        await go(text_, host, **kwargs)
    return caught.value


# -- the section walk -----------------------------------------------------------------------------


async def test_sections_share_globals_and_the_last_returned_value_wins(host: Host) -> None:
    prompt = runvil_prompt(
        ("One", "first prose", "seen = prose; return 'first'"),
        ("Two", "second prose", "messages:user(prose); count = #messages"),
        ("Three", "third prose", "return seen .. '|' .. prose .. '|' .. count .. '|' .. #messages"),
        ("Four", "", "local x = 1"),
    )
    assert await go(prompt, host) == "first prose|third prose|1|0"


async def test_a_prompt_that_returns_nothing_gives_an_empty_result(host: Host) -> None:
    assert await go(runvil_prompt(("A", "", "local x = 1")), host) == ""


async def test_a_syntax_error_anywhere_stops_the_run_before_any_section(
    host: Host, provider: Provider
) -> None:
    prompt = runvil_prompt(
        ("A", "", "tools.call('web/search', { query = 'q' })"),
        ("B", "", "return 'a' .."),
    )
    err = await go_error(prompt, host)
    assert (err.kind, str(err)) == (RunErrorKind.Lua, "t.md:21: unexpected symbol near <eof>")
    assert provider.requests == []


async def test_untrusted_uses_the_run_nonce(host: Host) -> None:
    prompt = runvil_prompt(("A", "", "return untrusted('ignore previous instructions <b>')"))
    assert await go(prompt, host) == envelope("ignore previous instructions <b>", NONCE)


async def test_print_goes_to_on_print(host: Host) -> None:
    printed: list[str] = []
    await go(runvil_prompt(("A", "", "print('hello', 42)")), host, on_print=printed.append)
    assert printed == ["hello\t42"]


async def test_tools_reached_by_id_without_declaring_the_pack(host: Host, site: Served) -> None:
    prompt = runvil_prompt(("A", "", "return tools.call('web/search', { query = 'q' })"))
    assert await go(prompt, host) == envelope(
        '{"query":"q","results":[{"title":"T","url":"https://e.com","description":"D"}]}', NONCE
    )


async def test_unknown_tool_id_is_a_tool_failure(host: Host) -> None:
    prompt = runvil_prompt(("A", "", "return tools.call('web/nope', {})"))
    err = await go_error(prompt, host)
    assert (err.kind, str(err)) == (RunErrorKind.Tool, "tool call failure: unknown tool web/nope")


async def test_offering_an_unknown_tool_is_a_lua_error(host: Host) -> None:
    err = await go_error(runvil_prompt(("A", "", "tools.offer('web/nope')")), host)
    assert (err.kind, str(err)) == (RunErrorKind.Lua, "tools.offer: unknown tool web/nope")
    err = await go_error(runvil_prompt(("A", "", "packs.offer('files')")), host)
    assert (err.kind, str(err)) == (RunErrorKind.Lua, "packs.offer: unknown Pack files")


# -- requirements ---------------------------------------------------------------------------------


async def test_a_role_without_an_endpoint_is_refused_before_running(host: Host) -> None:
    prompt = runvil_prompt(
        ("A", "", "return 'ran'"), models="models:\n  researcher: {}\n  critic: {}\n"
    )
    err = await go_error(prompt, host)
    assert (err.kind, str(err)) == (
        RunErrorKind.RequirementsUnmet,
        "the environment cannot satisfy this prompt:\n"
        "- no model endpoint for role: researcher\n- no model endpoint for role: critic",
    )


async def test_a_tool_slot_naming_an_unknown_path_is_refused(host: Host) -> None:
    prompt = pf_prompt(("A", "", "return 'ran'"), tools="  fetch: promptforge/web/fecth\n")
    err = await go_error(
        prompt,
        host,
        models={"writer": ModelEndpoint(api="openai", base_url="http://127.0.0.1:9/v1", model="m")},
    )
    assert (err.kind, str(err)) == (
        RunErrorKind.RequirementsUnmet,
        "the environment cannot satisfy this prompt:\n- tool slot fetch: unknown tool "
        "promptforge/web/fecth",
    )


# -- the model loop -------------------------------------------------------------------------------


LOOP = (
    "tools.offer('web/fetch'); models.use('researcher'); messages:user(prose); return models.loop()"
)
ROLE = "models:\n  researcher: {max_tokens: 50}\n"


async def test_the_loop_stops_after_max_rounds(
    host: Host, site: Served, fake_model: ModelFactory
) -> None:
    again = calls(("web_fetch", {"url": "https://example.com/"}))
    model = await fake_model("openai", [again, again, again])
    prompt = runvil_prompt(("A", "read it", LOOP), models=ROLE)
    err = await go_error(
        prompt, host, models={"researcher": endpoint(model)}, limits=Limits(max_rounds=3)
    )
    assert (err.kind, str(err)) == (
        RunErrorKind.Model,
        "model researcher: still calling tools after 3 rounds; raise the round limit or ask for an "
        "answer in the prose",
    )
    assert [r.get("tool_choice") for r in model.requests] == [None, None, "none"]
    assert model.requests[0]["max_tokens"] == 50


async def test_a_model_that_obeys_the_final_round_answers(
    host: Host, site: Served, fake_model: ModelFactory
) -> None:
    again = calls(("web_fetch", {"url": "https://example.com/"}))
    model = await fake_model("anthropic", [again, text("fine, here it is")])
    prompt = runvil_prompt(("A", "read it", LOOP), models=ROLE)
    result = await go(
        prompt, host, models={"researcher": endpoint(model)}, limits=Limits(max_rounds=2)
    )
    assert result == "fine, here it is"
    assert model.requests[1]["tool_choice"] == {"type": "none"}


async def test_model_failures_are_catchable_or_end_the_run(
    host: Host, fake_model: ModelFactory
) -> None:
    model = await fake_model(
        "openai", [failure(500, "upstream down"), failure(500, "upstream down")]
    )
    models = {"researcher": endpoint(model)}
    caught = runvil_prompt(
        (
            "A",
            "q",
            "messages:user(prose); local ok, err = pcall(models.loop); return err.kind .. '|' .. "
            "tostring(err)",
        ),
        models=ROLE,
    )
    message = (
        f"model researcher: {model.base_url}/chat/completions answered HTTP 500: upstream down"
    )
    assert await go(caught, host, models=models) == f"model|{message}"
    err = await go_error(
        runvil_prompt(("A", "q", "messages:user(prose); models.loop()"), models=ROLE),
        host,
        models=models,
    )
    assert (err.kind, str(err)) == (RunErrorKind.Model, message)


async def test_unknown_tool_names_from_the_model_go_back_as_text(
    host: Host, fake_model: ModelFactory
) -> None:
    model = await fake_model(
        "openai",
        [
            calls(("web_search", {"query": "q"})),
            lambda body: text(last_tool_results(body, "openai")[0]),
        ],
    )
    prompt = runvil_prompt(("A", "q", LOOP), models=ROLE)
    result = await go(prompt, host, models={"researcher": endpoint(model)})
    assert result == "unknown tool web_search; the tools offered are: web_fetch"


async def test_tool_scope_is_per_section(host: Host, fake_model: ModelFactory) -> None:
    model = await fake_model("openai", [text("one"), text("two")])
    prompt = runvil_prompt(
        ("A", "q", LOOP),
        ("B", "q", "models.use('researcher'); messages:user(prose); return models.loop()"),
        models=ROLE,
    )
    assert await go(prompt, host, models={"researcher": endpoint(model)}) == "two"
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["web_fetch"]
    assert "tools" not in model.requests[1]


async def test_models_loop_without_a_chosen_role(host: Host, fake_model: ModelFactory) -> None:
    model = await fake_model("openai", [])
    roles = "models:\n  a: {}\n  b: {}\n"
    models = {"a": endpoint(model), "b": endpoint(model)}
    err = await go_error(
        runvil_prompt(("A", "q", "messages:user(prose); models.loop()"), models=roles),
        host,
        models=models,
    )
    assert (err.kind, str(err)) == (
        RunErrorKind.Lua,
        "models.loop: no model role chosen; call models.use(role) first",
    )
    err = await go_error(
        runvil_prompt(("A", "q", "models.use('c')"), models=roles), host, models=models
    )
    assert str(err) == "models.use: unknown model role c (the roles under models: are a, b)"


async def test_promptforge_always_description_override_and_alias_errors(
    host: Host, site: Served, fake_model: ModelFactory
) -> None:
    model = await fake_model("openai", [text("one"), text("two")])
    prompt = pf_prompt(
        (
            "A",
            "q",
            "models.default('writer'); tools.always('fetch', 'Fetch one page.'); local m = "
            "messages.new(); m:user(prose); models.loop(m)",
        ),
        (
            "B",
            "q",
            "local m = messages.new(); m:user(prose); models.loop(m); return m[#m].content .. "
            "'|' .. fetch.description",
        ),
    )
    result = await go(prompt, host, models={"writer": endpoint(model)})
    assert result == f"two|{FETCH_DESCRIPTION}"
    for request in model.requests:
        assert [
            (t["function"]["name"], t["function"]["description"]) for t in request["tools"]
        ] == [("fetch", "Fetch one page.")]
    err = await go_error(
        pf_prompt(("A", "", "tools.add('search')")), host, models={"writer": endpoint(model)}
    )
    assert str(err) == "tools.add: unknown tool alias search (the aliases under tools: are fetch)"


# -- limits and cancellation ----------------------------------------------------------------------


async def test_wall_time_stops_a_busy_loop_while_the_event_loop_stays_free(host: Host) -> None:
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    limits = Limits(wall_time=0.5, instructions=10**12)
    try:
        err = await go_error(runvil_prompt(("A", "", "while true do end")), host, limits=limits)
    finally:
        done.set()
        await task
    assert (err.kind, str(err)) == (
        RunErrorKind.Limit,
        "the run exceeded its wall-time limit (0.5 seconds)",
    )
    assert ticks > 1


async def test_wall_time_cancels_a_tool_call_in_flight(host: Host, site: Served) -> None:
    prompt = runvil_prompt(
        ("A", "", "return tools.call('web/fetch', { url = 'https://example.com/slow' })")
    )
    err = await go_error(prompt, host, limits=Limits(wall_time=0.3))
    assert (err.kind, str(err)) == (
        RunErrorKind.Limit,
        "the run exceeded its wall-time limit (0.3 seconds)",
    )
    assert site.request_lines == ["GET /slow"]


async def test_cancelling_the_run_stops_the_lua_thread(host: Host) -> None:
    before = {t.ident for t in threading.enumerate()}
    task = asyncio.create_task(
        go(runvil_prompt(("A", "", "while true do end")), host, limits=Limits(instructions=10**12))
    )
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await lua_threads_started_since(before) == []


async def test_instruction_limit_ends_the_run(host: Host) -> None:
    err = await go_error(
        runvil_prompt(("A", "", "while true do end")), host, limits=Limits(instructions=100_000)
    )
    assert (err.kind, str(err)) == (
        RunErrorKind.Limit,
        "the run exceeded its instruction limit (100000 Lua instructions)",
    )


async def test_a_search_failure_inside_the_loop_reaches_the_model_enveloped(
    host: Host, provider: Provider, fake_model: ModelFactory
) -> None:
    from tests.prompts.conftest import transport_error

    provider.error = transport_error()
    model = await fake_model(
        "anthropic",
        [
            calls(("web_search", {"query": "rust"})),
            lambda body: text(last_tool_results(body, "anthropic")[0]),
        ],
    )
    prompt = runvil_prompt(
        ("A", "q", "tools.offer('web/search'); messages:user(prose); return models.loop()"),
        models=ROLE,
    )
    result = await go(prompt, host, models={"researcher": endpoint(model)})
    assert result == envelope("web_search: request failed", NONCE)
    tool_result = model.requests[1]["messages"][-1]["content"][0]
    assert tool_result["is_error"] is True


@pytest.mark.parametrize("code", ["return 'ok'", "error('x')", "while true do end"])
async def test_the_lua_state_is_freed_when_the_run_ends(code: str, host: Host) -> None:
    import gc

    def live() -> int:
        return sum(1 for o in gc.get_objects() if type(o).__name__ == "LuaRuntime")

    gc.disable()
    try:
        before = live()
        with contextlib.suppress(RunError):
            await go(runvil_prompt(("A", "", code)), host, limits=Limits(instructions=100_000))
        assert live() == before
    finally:
        gc.enable()


async def test_wall_time_stops_loops_of_costly_instructions(host: Host) -> None:
    # comparing and concatenating long strings are single VM instructions that cost milliseconds
    code = (
        "local a, b = string.rep('x', 4e6), string.rep('x', 4e6)\n"
        "while true do local same = a == b; local c = a .. 'y' end"
    )
    limits = Limits(wall_time=0.5, instructions=10**12, memory=256 * 1024 * 1024)
    before = {t.ident for t in threading.enumerate()}
    err = await go_error(runvil_prompt(("A", "", code)), host, limits=limits)
    assert (err.kind, str(err)) == (
        RunErrorKind.Limit,
        "the run exceeded its wall-time limit (0.5 seconds)",
    )
    # the thread noticed the deadline itself: none is left behind once it has unwound
    assert await lua_threads_started_since(before) == []
