"""Hostile prompts: escape and exhaustion attempts end the run cleanly, and nothing outlives it.

Each attack runs as a whole prompt file through ``run_prompt`` on a real Host, under small
limits, and must end in its exact outcome: a Limit or Lua run error (or, for a tool refusal, the
Tool error the spec gives), never a hang, a crash, a Python object in Lua's hands, or a Lua
thread left running after the run returned.
"""

from __future__ import annotations

import asyncio
import gc
import json
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from runvil import Host
from runvil._errors import RunError, RunErrorKind
from runvil.prompts import Limits
from runvil.prompts._document import parse_prompt
from runvil.prompts._run import run_prompt
from runvil.web._search.provider import SearchRequest, SearchResult
from tests.faces_helpers import REPO
from tests.fixtures.internet import FakeInternet

LIMITS = Limits(memory=32 * 1024 * 1024, instructions=5_000_000, wall_time=5.0)
SOURCE = "hostile.md"
LINE = 13  # the line the attack's code starts on in the document below
MEMORY = (RunErrorKind.Limit, "the run exceeded its memory limit (33554432 bytes)")
INSTRUCTIONS = (
    RunErrorKind.Limit,
    "the run exceeded its instruction limit (5000000 Lua instructions)",
)
NESTED = (RunErrorKind.Lua, "tools.call: tables nested deeper than 64 levels (a cycle?)")


def document(code: str) -> str:
    return (
        "---\nname: hostile\ndescription: an attack\nrunvil: 0\nuses: [web]\n---\n\n# Hostile\n\n"
        f"## Attack\n\n```lua\n{code}\n```\n"
    )


class OneRow:
    name = "one-row"
    endpoints: tuple[str, ...] = ()

    async def search(self, request: SearchRequest) -> list[SearchResult]:
        return [SearchResult(title="t", url="https://e.com/", description="d")]


@pytest.fixture
async def host(internet: FakeInternet) -> AsyncIterator[Host]:
    h = Host(search_provider=OneRow(), network=internet.network())
    try:
        yield h
    finally:
        await h.aclose()


def lua_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "runvil-lua")


async def outcome(host: Host, code: str, limits: Limits = LIMITS) -> tuple[RunErrorKind | str, str]:
    try:
        text = await run_prompt(parse_prompt(document(code), source=SOURCE), host=host,
                                limits=limits)
    except RunError as err:
        return err.kind, err.text
    return "result", text


async def no_lua_thread_left(baseline: int, grace: float = 0.5) -> bool:
    deadline = time.monotonic() + grace
    while lua_threads() > baseline and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return lua_threads() <= baseline


ATTACKS: dict[str, tuple[str, tuple[RunErrorKind | str, str]]] = {
    # Metatables on strings: the shared string metatable is hidden, the string library is a
    # copy per run, and patching the global table changes nothing that strings use.
    "replace the string metatable's __index": (
        "getmetatable('').__index = function() return os end; return ('x').foo",
        (RunErrorKind.Lua, f"{SOURCE}:{LINE}: attempt to index a boolean value"),
    ),
    "read the string metatable": ("return tostring(getmetatable(''))", ("result", "false")),
    "patch string.upper under the methods": (
        "string.upper = function() return 'pwned' end; return ('a'):upper()", ("result", "A"),
    ),
    "reach string.dump or string.load": (
        "return tostring(string.dump) .. tostring(string.load)", ("result", "nilnil"),
    ),
    "find python through _G": ("return tostring(rawget(_G, 'python'))", ("result", "nil")),
    # Coroutine tricks.
    "yield across a tool call": (
        "local co = coroutine.wrap(function() tools.call('web/fetch', {url='https://no.such/'});"
        " coroutine.yield(1) end); return tostring(co())",
        ("result", "1"),
    ),
    "create coroutines forever": (
        "while true do coroutine.create(function() end) end", INSTRUCTIONS,
    ),
    "nest coroutines without end": (
        "local function f(n) return coroutine.wrap(function() return f(n + 1)() end) end;"
        " return f(0)()",
        (RunErrorKind.Lua, "C stack overflow"),
    ),
    "spin in an xpcall handler": (
        "return xpcall(error, function(e) while true do end end, 'x')", INSTRUCTIONS,
    ),
    # Memory bombs.
    # Size-dependent string work is charged against the instruction budget before it runs.
    "string.rep of 2 GiB": ("return #string.rep('x', 2^31)", INSTRUCTIONS),
    "string.rep with a 1 MiB separator": (
        "return #string.rep('x', 2^20, string.rep('y', 2^20))", INSTRUCTIONS,
    ),
    "a format result repeated 10^8 times": (
        "return #string.format('%099d', 1):rep(1e8)", INSTRUCTIONS,
    ),
    "table.concat of ten million strings": (
        "local t = {} for i = 1, 1e7 do t[i] = 'abcdefgh' end return #table.concat(t)", MEMORY,
    ),
    "a million nested tables": ("local t = {} for i = 1, 1e6 do t = {t} end return 1", MEMORY),
    "print 50 MB": ("print(string.rep('x', 5e7)) return 'p'", MEMORY),
    "json.encode two million numbers": (
        "local t = {} for i = 1, 2e6 do t[i] = i end return #json.encode(t)", MEMORY,
    ),
    # Deep recursion.
    "unbounded non-tail recursion": (
        "local function f(n) return 1 + f(n + 1) end return f(0)", MEMORY,
    ),
    "a __tostring that calls itself": (
        "error(setmetatable({}, {__tostring = function(s) return tostring(s) end}))",
        (RunErrorKind.Lua, "(error object is a table value)"),
    ),
    # Huge and malformed tool arguments.
    "a 10 MB url": (
        "return tools.call('web/fetch', {url = string.rep('a', 1e7)})",
        (RunErrorKind.Tool, "tool call failure: web_fetch: url is longer than 8192 characters"),
    ),
    "a 10 MB search query": (
        "return tools.call('web/search', {query = string.rep('q', 1e7)})",
        (RunErrorKind.Tool, "tool call failure: web_search: query exceeds 400 characters"),
    ),
    "arguments nested 100,000 deep": (
        "local t = {} for i = 1, 1e5 do t = {t} end"
        " return tools.call('web/fetch', {url = 'https://x.example/', raw = t})",
        NESTED,
    ),
    "arguments that contain themselves": (
        "local t = {} t.t = t return tools.call('web/fetch', {url = t})", NESTED,
    ),
    "a result that is not UTF-8": (
        "return utf8.char(0x7FFFFFFF)",
        (RunErrorKind.Lua, "the section returned a string that is not valid UTF-8"),
    ),
    # JSON can spell a lone surrogate, which no UTF-8 string holds: it used to surface as the
    # codec's message, or as an internal error with a logged traceback inside a table.
    "a lone surrogate from json.decode": (
        "return json.decode('\"\\\\ud800\"')",
        (RunErrorKind.Lua, "json.decode: strings must be valid UTF-8"),
    ),
    # An integer past the largest float used to be an internal error (OverflowError) with a
    # logged traceback; it is infinite, as JSON's 1e999 already was.
    "a JSON integer past the largest float": (
        "local t = json.decode('[' .. string.rep('9', 400) .. ', -' .. string.rep('9', 400) .. ']')"
        " return tostring(t[1]) .. ' ' .. tostring(t[2])",
        ("result", "inf -inf"),
    ),
    "a lone surrogate inside a decoded table": (
        "return json.decode('{\"a\": \"\\\\ud800\"}').a",
        (RunErrorKind.Lua, "json.decode: strings must be valid UTF-8"),
    ),
    # No Python object anywhere a prompt can walk: globals, metatables, API results.
    "walk every reachable table for userdata": (
        "local seen, found = {}, {}"
        " local function walk(t, path, depth)"
        "   if depth > 8 or seen[t] then return end"
        "   seen[t] = true"
        "   for k, v in pairs(t) do"
        "     local where = path .. '.' .. tostring(k)"
        "     if type(v) == 'userdata' or type(k) == 'userdata' then found[#found + 1] = where end"
        "     if type(v) == 'table' then walk(v, where, depth + 1) end"
        "     local mt = getmetatable(v)"
        "     if type(mt) == 'table' then walk(mt, where .. '<mt>', depth + 1) end"
        "   end"
        " end"
        " walk(_G, '_G', 0)"
        " local ok, e = pcall(tools.call, 'web/fetch', {url = 'https://u:p@x.example/'})"
        " walk(e, 'error', 0)"
        " walk(tools.get('web/fetch'), 'tool', 0)"
        " walk(json.decode('{\"a\": [1, {\"b\": null}]}'), 'json', 0)"
        " return #found == 0 and 'none' or table.concat(found, ',')",
        ("result", "none"),
    ),
    # Error values carry strings only.
    "look inside a tool error value": (
        "local ok, e = pcall(tools.call, 'web/fetch', {url = 'https://u:p@x.example/'})"
        " local keys = {} for k, v in pairs(e) do keys[#keys + 1] = k .. '=' .. type(v) end"
        " table.sort(keys) return table.concat(keys, ',') .. ' ' .. type(getmetatable(e))",
        ("result", "kind=string,message=string boolean"),
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
async def test_attack_ends_in_its_exact_outcome(host: Host, name: str) -> None:
    code, expected = ATTACKS[name]
    threads = lua_threads()
    assert await outcome(host, code) == expected
    assert await no_lua_thread_left(threads, grace=2.5)


async def test_deeply_nested_json_is_a_clean_lua_error(host: Host) -> None:
    # Finding F-6: json.decode of a million nested arrays hit Python's recursion limit and came
    # back as "json.decode: internal error (RecursionError)" with a logged traceback.
    kind, text = await outcome(
        host, "return tostring(json.decode(string.rep('[', 1e6) .. string.rep(']', 1e6)))"
    )
    assert (kind, text) == (RunErrorKind.Lua, "json.decode: JSON nested deeper than 64 levels")


async def test_a_catastrophic_pattern_leaves_no_thread_running(host: Host) -> None:
    # Finding F-5a: Lua's pattern matcher is C code, where neither the instruction hook nor the
    # deadline poll runs. This pattern needs about six seconds of backtracking in C; the run used
    # to end at its wall-time limit while its Lua thread went on matching after run_prompt
    # returned (a worse pattern never ends, so the thread burned a core for good). Such matches
    # now run under the instruction budget.
    threads = lua_threads()
    code = "return tostring(string.find(string.rep('a', 34), string.rep('a*', 8) .. 'b'))"
    assert await outcome(host, code) == INSTRUCTIONS
    assert await no_lua_thread_left(threads)


async def test_a_gc_metamethod_cannot_run_outside_the_limits(host: Host) -> None:
    # Finding F-5b: Lua runs __gc finalizers with hooks disabled, and the last one runs when the
    # Lua state is freed, in whatever thread drops it. A finalizer that loops therefore ran with
    # no instruction limit, no memory limit and no deadline, on the event loop thread (a
    # `while true do end` finalizer hung the whole process). This one would loop for a second;
    # __gc is refused now, and the collection afterwards must cost nothing extra either way.
    code = (
        "setmetatable({}, {__gc = function() local t = os.clock() + 1"
        " while os.clock() < t do end end}) return 'ok'"
    )
    gc.collect()
    started = time.monotonic()
    gc.collect()
    baseline = time.monotonic() - started  # a full collection of this process's own heap
    assert await outcome(host, code) == (
        RunErrorKind.Lua,
        f"{SOURCE}:{LINE}: setmetatable: __gc metamethods are not available in prompts",
    )
    started = time.monotonic()
    gc.collect()
    await asyncio.sleep(0)
    extra = time.monotonic() - started - baseline
    # The finalizer would spin for a full second; anything clearly under that is collection noise.
    assert extra < 0.9, f"a __gc finalizer ran on the event loop thread for {extra:.1f} s"


# -- values crossing into Lua --------------------------------------------------------------------
# Issue 14, item 1: lupa allocates in the Lua state outside Lua code (pushing a host call's result,
# building a decoded table, converting a table argument, pushing a Python-to-Lua call's arguments).
# When such an allocation failed on the memory limit, Lua's error jumped over lupa's release of the
# GIL and every thread waited for the GIL forever: no deadline, no Ctrl-C, or, with no protected
# call on the stack, a PANIC and an aborted process. These run in a child process, so that a
# regression fails the test instead of freezing the suite.

MIB = 1024 * 1024


def bare_document(code: str, prose: str = "An attack.") -> str:
    """A prompt that needs no Pack (the child's Host has none)."""
    return (
        "---\nname: hostile\ndescription: an attack\nrunvil: 0\n---\n\n# Hostile\n\n"
        f"## Attack\n\n{prose}\n\n```lua\n{code}\n```\n"
    )


async def in_child(
    document: str, *, memory: int = 64 * MIB, wall: float = 30.0, timeout: float = 90.0
) -> dict[str, Any]:
    """Run ``document`` in ``tests.reliability.prompt_child``; fail if it does not end."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.reliability.prompt_child", str(memory), str(wall),
        "200000000", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=str(REPO),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(document.encode()), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"the run had not ended after {timeout:g} s: the process froze")
    assert proc.returncode == 0, f"the child died ({proc.returncode}): {err.decode()[-2000:]}"
    result: dict[str, Any] = json.loads(out)
    return result


def memory_error(memory: int) -> tuple[str, str]:
    return "Limit", f"the run exceeded its memory limit ({memory} bytes)"


FREEZES: dict[str, tuple[str, int]] = {
    # The issue's own triggers (each froze the process before).
    "json.decode of four million numbers": (
        "return #json.decode('[' .. string.rep('1,', 4e6) .. '1]')", 64 * MIB,
    ),
    "json.encode of a 10 MB string, kept": (
        "local s = string.rep('x', 1e7) local t = {} for i = 1, 8 do t[i] = json.encode(s) end",
        64 * MIB,
    ),
    "untrusted() of a 14 MB string, kept": (
        "local s = string.rep('x', 14e6) local t = {} for i = 1, 8 do t[i] = untrusted(s) end",
        64 * MIB,
    ),
    # Other shapes of the same class: small values at the brim, tables built from Python, error
    # messages, strings that grow when escaped.
    "small decoded tables kept until the limit": (
        "local t, i = {}, 0 while true do i = i + 1 t[i] = json.decode('[' .. i .. ']') end",
        8 * MIB,
    ),
    "error messages kept until the limit": (
        "local t, i = {}, 0"
        " while true do i = i + 1 local ok, e = pcall(json.decode, '[') t[i] = e end",
        8 * MIB,
    ),
    "json.decode of two million empty objects": (
        "return #json.decode('[' .. string.rep('{},', 2e6) .. '{}]')", 64 * MIB,
    ),
    "json.encode of a 1 MB string held 300 times": (
        "local s = string.rep('x', 1e6) local t = {} for i = 1, 300 do t[i] = s end"
        " return #json.encode(t)",
        64 * MIB,
    ),
    "json.encode of 10 MB of control characters": (
        "return #json.encode(string.rep('\\1', 1e7))", 64 * MIB,
    ),
}


@pytest.mark.parametrize("name", list(FREEZES))
async def test_a_value_too_big_for_lua_ends_the_run_with_the_memory_error(name: str) -> None:
    code, memory = FREEZES[name]
    ended = await in_child(bare_document(code), memory=memory)
    assert (ended["kind"], ended["text"]) == memory_error(memory)
    assert ended["threads_left"] == 0


@pytest.mark.parametrize("part", ["prose", "code"])
async def test_a_prompt_larger_than_the_memory_limit_is_refused(part: str) -> None:
    # Prose and code cross as the arguments of a Python-to-Lua call, with no protected call on
    # the stack: Lua's panic handler aborted the whole process.
    big = "p" * (20 * MIB)
    document = (
        bare_document("return 'ok'", prose=big) if part == "prose"
        else bare_document("return 'ok' -- " + big)
    )
    ended = await in_child(document, memory=16 * MIB)
    assert (ended["kind"], ended["text"]) == memory_error(16 * MIB)


SHARED = "local t = {string.rep('x', 1e5)} for i = 1, 40 do t = {t, t} end "


@pytest.mark.parametrize(
    "code",
    [SHARED + "return #json.encode(t)", SHARED + "return tools.call('web/fetch', {raw = t})"],
    ids=["json.encode", "tools.call"],
)
async def test_a_table_that_holds_one_subtable_many_ways_is_not_copied_without_bound(
    code: str,
) -> None:
    # Lua stores the subtable once; a conversion copies it once per path, 2^40 times here. The
    # copy used to grow until Python failed to allocate (the child's 2 GiB cap): the copy is now
    # counted, and stops at the run's memory limit.
    ended = await in_child(bare_document(code))
    assert (ended["kind"], ended["text"]) == memory_error(64 * MIB)
    assert ended["rss_growth"] < 256 * MIB


@pytest.mark.parametrize(
    "text",
    ["string.rep('[INST]', 1666667)", "string.rep(untrusted(''):match('_(%x+)>'), 625000)"],
    ids=["control markup", "copies of the nonce"],
)
async def test_enveloping_10_mb_costs_a_few_times_its_size(text: str) -> None:
    # The envelope used to escape with one Python object per match (a regex callback for the
    # markup, a list of pieces for the nonce): 10 MB took 1-3 s and 100-160 MB more resident
    # memory. Every step is one str.replace now.
    # The child's peak is bimodal: about 40-60 MB most runs, and 106 MB in some full-suite runs
    # (seen on the unchanged code too, the same figure each time); the bound admits both while
    # staying linear: 12 copies of the 10 MB text.
    ended = await in_child(bare_document(f"return #untrusted({text})"))
    assert ended["kind"] == "result"
    assert ended["rss_growth"] < 12 * 10 * MIB


async def test_a_loop_of_long_host_calls_stops_at_the_deadline() -> None:
    # Such a loop runs few Lua instructions, so the hook's deadline poll came seconds apart and
    # the Lua thread went on after the run had returned its wall-time error. Each host call now
    # looks at the stop flag first.
    code = "local s = string.rep('<', 8e6) while true do local t = untrusted(s) end"
    ended = await in_child(bare_document(code), memory=256 * MIB, wall=1.0)
    assert (ended["kind"], ended["text"]) == (
        "Limit", "the run exceeded its wall-time limit (1 seconds)",
    )
    assert ended["threads_left"] == 0


async def test_a_long_conversion_out_of_lua_stops_at_the_deadline() -> None:
    # Copying a table for Python runs no Lua hook (lupa calls the classifier on its main Lua
    # thread), so a copy bounded only by its size went on for seconds after the deadline.
    code = "local t = {'leaf'} for i = 1, 40 do t = {t, t} end return #json.encode(t)"
    ended = await in_child(bare_document(code), wall=0.5)
    assert (ended["kind"], ended["text"]) == (
        "Limit", "the run exceeded its wall-time limit (0.5 seconds)",
    )
    assert ended["threads_left"] == 0


async def test_json_with_brackets_and_quotes_inside_its_strings_decodes(host: Host) -> None:
    # A long text is priced by a scan before it is parsed; brackets, commas and escaped quotes
    # inside strings must not count as structure (this one would be "nested deeper than 64
    # levels" and far over the budget if they did).
    item = r"""'"\\"[[[[[[[[{{{{{{{{,,,,,,,,\\\\",'"""  # JSON: "\"[[...,,\\",
    code = f"return #json.decode('[' .. string.rep({item}, 2e5) .. '1]')"
    assert await outcome(host, code) == ("result", "200001")


async def test_ctrl_c_ends_runvil_run_with_130_in_the_middle_of_a_host_call(
    tmp_path: Path,
) -> None:
    file = tmp_path / "decode.md"
    file.write_text(bare_document(
        "local s = '[' .. string.rep('1,', 5e5) .. '1]' print('started')"
        " while true do local t = json.decode(s) end"
    ), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "runvil", "run", str(file), "--no-web",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    try:
        line = await asyncio.wait_for(proc.stderr.readline(), 60)
        assert line == b"started\n"
        await asyncio.sleep(0.5)  # json.decode takes most of each loop
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert (proc.returncode, out) == (130, b"")
    assert b"Traceback" not in err
