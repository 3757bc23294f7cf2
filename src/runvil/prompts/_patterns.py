"""Lua's pattern matcher, written in Lua, for the matches that could run away in C.

Lua's own matcher (``lstrlib.c``) is C code: while it runs, neither the instruction hook nor the
deadline poll gets a turn, and backtracking makes some patterns exponential
(``('a'):rep(34):find(('a*'):rep(8) .. 'b')`` takes seconds, longer subjects take forever). A
run stopped in the middle of such a match could not end its thread.

So the sandbox estimates each call's worst case before running it: about ``(n + 1) ^ (k + 1)``
steps for a subject of ``n`` bytes and a pattern with ``k`` backtracking items (``*``, ``+``,
``-``, ``?``, ``%b``, back-references), one power less when anchored. Calls whose bound is small
(every plain find, every pattern without quantifiers, short subjects) run in C at full speed; the
rest run in this port of ``lstrlib.c``, whose every step is a Lua instruction that the hook counts
and the deadline interrupts. The port keeps the C version's semantics and error messages, so a
prompt cannot tell which one ran except by the clock.

The port is ``patterns.lua`` beside this module (package data, read once as :data:`MATCHER`).
"""

from __future__ import annotations

from runvil.prompts._sources import lua_source

#: The matcher's Lua source; the prelude loads it into each run's state.
MATCHER = lua_source("patterns.lua")
