"""The Lua port of the pattern matcher gives exactly what Lua's C matcher gives, and runaway
patterns are stopped by the run's limits instead of running on in C."""

from __future__ import annotations

import random
from typing import Any

import pytest
from lupa import lua54

from runvil import RunError, RunErrorKind
from runvil.prompts import Limits
from runvil.prompts._document import Section
from runvil.prompts._lua import LuaSandbox
from runvil.prompts._patterns import MATCHER
from tests.prompts.test_sandbox import Hooks

PATTERNS = [
    "(a*)b",
    "a-b",
    "%a+",
    "[ab]+",
    "(%a)%1",
    "%bab",
    "%b()",
    "%f[%a]%a+",
    "%f[%A]",
    "^a",
    "a$",
    "^(a+)$",
    "(()a)",
    "[^a]*",
    "a?b",
    "%s*(%S+)%s*",
    "(h)(e)(l)",
    "[%a-]+",
    "[a-c]",
    "[]a]",
    "[^]a]",
    "x*",
    ".-b",
    "(.-)%s",
    "%d+%.?%d*",
    "[%w_]+",
    "%((.-)%)",
    "()",
    "(a)(b)?",
    ".",
    "$",
    "^",
    "a%",
    "[a",
    "(a",
    "a)",
    "%1",
    "(a)%2",
    "%bx",
    "%f",
    "%gx",
    "[%]]",
    "%.",
    "%%",
    "\n\n(.*)\n</u_%x+>$",
    "a*a*a*b",
    "[a-]",
    "[-a]",
    "%W+",
    "%u%l*",
    "%c",
    "%p+",
    "[%d%.]+",
]
SUBJECTS = [
    "",
    "a",
    "ab",
    "aab",
    "ba",
    "hello world",
    "a b  c",
    "(ab)(a b)",
    "x1.5y 22 z",
    "]a]b",
    "foo_bar-baz",
    "aaab",
    "abab",
    "  lead trail  ",
    "%a%",
    "Hello World",
    "h\n\nbody\n</u_1f>",
    "((a)(b))",
    "a.b.c",
    "\x01\x02x",
]
REPLACEMENTS = ["<%0>", "%1-%1", "%%", "x", "%2", "%z"]


@pytest.fixture(scope="module")
def lua() -> Any:
    return make_lua()


def make_lua() -> Any:
    rt = lua54.LuaRuntime()
    port = rt.execute(MATCHER)
    compare = rt.eval(
        """function(M, s, p, r, init)
          -- one call level, as the sandbox's string.find wrapper adds
          local L = {
            find = function(...) return M.find(...) end,
            match = function(...) return M.match(...) end,
            gsub = function(...) return M.gsub(...) end,
            gmatch = function(...) return M.gmatch(...) end,
          }
          local function pack(ok, ...) return {n = select('#', ...) + 1, ok, ...} end
          local function show(t)
            local out = {}
            for i = 1, t.n do out[i] = tostring(t[i]) end
            return table.concat(out, ' ')
          end
          local function iter(f)
            local out = {}
            local ok, e = pcall(function()
              for a, b in f() do out[#out + 1] = tostring(a) .. '/' .. tostring(b) end
            end)
            return tostring(ok) .. (ok and table.concat(out, ',') or tostring(e))
          end
          local c = {
            show(pack(pcall(string.find, s, p, init))),
            show(pack(pcall(string.match, s, p, init))),
            show(pack(pcall(string.gsub, s, p, r))),
            show(pack(pcall(string.gsub, s, p, function(x) return x and (tostring(x) .. '!') end))),
            show(pack(pcall(string.gsub, s, p, {a = 'A', b = false}))),
            show(pack(pcall(string.gsub, s, p, r, 1))),
            iter(function() return string.gmatch(s, p, init) end),
          }
          local l = {
            show(pack(pcall(L.find, s, p, init))),
            show(pack(pcall(L.match, s, p, init))),
            show(pack(pcall(L.gsub, s, p, r))),
            show(pack(pcall(L.gsub, s, p, function(x) return x and (tostring(x) .. '!') end))),
            show(pack(pcall(L.gsub, s, p, {a = 'A', b = false}))),
            show(pack(pcall(L.gsub, s, p, r, 1))),
            iter(function() return L.gmatch(s, p, init) end),
          }
          return table.concat(c, ' | '), table.concat(l, ' | ')
        end"""
    )
    return port, compare


def test_the_port_matches_lua_on_a_fixed_corpus(lua: Any) -> None:
    port, compare = lua
    mismatches = []
    for subject in SUBJECTS:
        for pattern in PATTERNS:
            for init in (1, 2, -2, 40):
                c, ported = compare(port, subject, pattern, REPLACEMENTS[len(pattern) % 6], init)
                if c != ported:
                    mismatches.append((subject, pattern, init, c, ported))
    assert mismatches == []


def test_the_port_matches_lua_on_random_patterns(lua: Any) -> None:
    port, compare = lua
    rng = random.Random(20261129)
    atoms = ["a", "b", ".", "%a", "%d", "[ab]", "[^a]", "%s", " ", "(", ")", "%1", "%b()", "%f[%w]"]
    quantifiers = ["", "", "*", "+", "-", "?"]
    mismatches = []
    for _ in range(1500):
        pattern = (
            ("^" if rng.random() < 0.2 else "")
            + "".join(rng.choice(atoms) + rng.choice(quantifiers) for _ in range(rng.randint(1, 4)))
            + ("$" if rng.random() < 0.2 else "")
        )
        subject = "".join(rng.choice("ab (1)x") for _ in range(rng.randint(0, 12)))
        c, ported = compare(port, subject, pattern, "[%0]", 1)
        if c != ported:
            mismatches.append((subject, pattern, c, ported))
    assert mismatches[:5] == []


def sandbox_run(code: str, limits: Limits) -> str | None:
    sandbox = LuaSandbox(Hooks(), dialect="runvil", limits=limits, source="t.md")
    return sandbox.run_section(sandbox.compile(Section("S", "", code, 1, 1)), "")


@pytest.mark.parametrize(
    "code",
    [
        "return string.find(string.rep('a', 34), string.rep('a*', 8) .. 'b')",
        "return (string.rep('a', 34)):match(string.rep('a-', 8) .. 'b')",
        "return (string.rep('a', 3000)):gsub('.-.-.-b', '')",
        "for x in (string.rep('a', 3000)):gmatch('a*a*a*b') do end",
        "return string.find(string.rep('a', 34), string.rep('a*', 8) .. 'b', 1.0)",
    ],
)
def test_catastrophic_patterns_are_stopped_by_the_instruction_limit(code: str) -> None:
    with pytest.raises(RunError) as caught:
        sandbox_run(code, Limits(instructions=5_000_000))
    assert (caught.value.kind, str(caught.value)) == (
        RunErrorKind.Limit,
        "the run exceeded its instruction limit (5000000 Lua instructions)",
    )


def test_the_seed_pattern_on_a_large_fetch_result_stays_cheap() -> None:
    code = """
    local page = '<untrusted_input_0123456789abcdef>\\nurl: x\\ntruncated: false\\n'
      .. 'extraction: plain\\n\\n' .. string.rep('{"k":"v"} ', 4000)
      .. '\\n</untrusted_input_0123456789abcdef>'
    local body = page:match('\\n\\n(.*)\\n</untrusted_input_%x+>$')
    return #body .. ' ' .. select(2, page:gsub('%s+', ' '))
    """
    assert sandbox_run(code, Limits(instructions=10_000_000)) == "40000 4007"
