"""The Lua side of the sandbox: the environment a prompt's code sees, and the section driver.

The code is ``prelude.lua`` beside this module (package data, read once as :data:`PRELUDE`).
It runs once per run, before any prompt code and while ``debug`` still exists, captures every
function it needs as a local, and then deletes what a prompt must never reach. The prompt's code
sees Lua closures only; the Python callables stay in upvalues that nothing can read once
``debug`` is gone.

Why each piece is shaped the way it is (see ``research/lua-mcp.md``):

* Count hooks are per coroutine in Lua 5.4, so every coroutine the prompt creates is armed, and
  a killed run installs a hook that fails on every instruction. ``pcall``, ``xpcall`` and the
  coroutine functions re-raise the kill, so no amount of catching keeps a stopped run alive.
* ``not enough memory`` skips the message handler, so the driver looks for it after the fact.
* A table error value that escapes to Python loses its contents, so the section runs under a
  Lua-side driver that classifies the outcome and hands Python plain strings.
* Host callbacks never raise into Lua: they answer ``status, value`` and the Lua wrappers raise
  the right error value, so error values stay pure Lua tables.
* The memory limit is armed only while Lua code runs: every host call disarms it before lupa
  converts its arguments and re-arms it after lupa pushed its result, because an allocation that
  fails on the limit inside lupa freezes the process (:mod:`runvil.prompts._budget`).
"""

from __future__ import annotations

from runvil.prompts._sources import lua_source

#: The prelude's Lua source, run once per :class:`~runvil.prompts._lua.LuaSandbox`.
PRELUDE = lua_source("prelude.lua")
