"""The limits one prompt run runs under.

A prompt is code from a file someone handed you, and its Lua runs inside your process: each run
gets a memory ceiling (enforced by Lua's allocator), an instruction budget (a count hook, so a
``while true do end`` ends instead of spinning), a wall-clock deadline for the whole run (tool
calls and model rounds included) and a cap on model rounds per ``models.loop``. The defaults are
generous for glue code and still stop a runaway prompt quickly.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Killed", "Limits"]


@dataclass(frozen=True)
class Limits:
    """Per-run limits; every one is configurable (``Limits(wall_time=30.0)``)."""

    #: Bytes the Lua state may allocate (``not enough memory`` past it ends the run). Values a
    #: host call hands to Lua are priced against it before they cross, and a value leaving Lua
    #: may take twice this much in Python (see :mod:`runvil.prompts._budget`).
    memory: int = 64 * 1024 * 1024
    #: Lua VM instructions per run, counted in steps of 1000 across every coroutine.
    instructions: int = 200_000_000
    #: Seconds for the whole run: Lua, tool calls and model rounds together.
    wall_time: float = 600.0
    #: Model requests per ``models.loop`` call; the last one is sent without tools.
    max_rounds: int = 20

    def __post_init__(self) -> None:
        if self.memory < 1024 * 1024:
            raise ValueError("Limits.memory must be at least 1 MiB")
        if self.instructions < 1000:
            raise ValueError("Limits.instructions must be at least 1000")
        if not self.wall_time > 0:
            raise ValueError("Limits.wall_time must be positive")
        if self.max_rounds < 1:
            raise ValueError("Limits.max_rounds must be at least 1")


class Killed(Exception):
    """The run must stop now (``instructions``, ``memory``, ``wall_time`` or ``cancelled``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
