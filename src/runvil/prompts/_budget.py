"""The Lua state's memory limit, armed only while Lua code runs.

Why the limit is switched off and on, rather than left on. lupa enforces ``max_memory`` in its
allocator: past the limit the allocation fails and Lua raises ``not enough memory``, which is a
``longjmp`` to the nearest protected call. Inside Lua code that is harmless. But lupa also
allocates in the Lua state *outside* Lua code, from Cython with the GIL held and no protected call
of its own: when it pushes a host callback's return value (``lua_pushlstring`` for a string,
``lua_newtable``/``lua_settable`` for a table), when it converts a callback's table argument
(``luaL_ref``), when it pushes the arguments of a Python-to-Lua call. If one of those allocations
fails, the ``longjmp`` skips lupa's ``PyGILState_Release``; the thread lands back in lupa's
``with nogil`` block around ``lua_pcall``, whose end waits for the GIL that the same thread
still holds. Every thread then waits for the GIL forever: the deadline timer, the event loop and
Ctrl-C all need it. (With no protected call on the stack Lua calls its panic handler instead,
and the process aborts.)

So no allocation of lupa's may ever meet the limit. The rule, kept by the prelude and
:class:`~runvil.prompts._lua.LuaSandbox` together:

* the limit is **armed** only while Lua code runs: a prelude entry point arms it before it runs
  prompt code and disarms it before it returns to Python;
* a host call **disarms** it before its arguments are converted and **re-arms** it after its
  results are pushed (the prelude's ``call``), and the hook's deadline poll returns a small
  integer, which lupa pushes without allocating;
* so every allocation lupa makes runs with no limit, and cannot fail on the limit; instead each
  value is **priced** before it crosses: a string by its byte length, a table by a check of the
  state's usage every few hundred items while it is built, JSON text by a scan before it is
  parsed. A value that does not fit the remaining budget ends the run with the memory-limit error,
  exactly like an allocation Lua refused; a crossing can overshoot the limit only by what one
  table's growth or a few hundred items take, and the run ends as soon as it is over.

Python-side memory for a crossing is bounded the same way: a value leaving Lua is counted as it is
converted and may not exceed twice the run's memory limit (:attr:`LuaBudget.allowance`), so
shared subtables, which Lua stores once and a conversion copies each time, cannot multiply it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runvil.prompts._limits import Killed

__all__ = ["POLL_EVERY", "LuaBudget"]

#: Items converted between two checks of the state's usage and of the run's stop flag.
POLL_EVERY = 256

#: What a Lua string costs beyond its bytes (the ``TString`` header and the terminating zero).
STRING_OVERHEAD = 25


class LuaBudget:
    """The memory limit of one Lua state, and the prices of values crossing into it.

    ``runtime`` must have been created with ``max_memory=0`` (lupa's counting allocator, no
    limit); ``stop`` is the run's stop flag (a reason, or ``None``)."""

    def __init__(self, runtime: Any, limit: int, stop: Callable[[], str | None]) -> None:
        self._rt = runtime
        self.limit = limit
        #: Bytes one crossing may hold on the Python side: twice the run's memory limit (a Lua
        #: string or number becomes a bigger Python object, so a value that fits in Lua can take
        #: more than the limit in Python, but never without bound).
        self.allowance = 2 * limit
        self._stop = stop
        self._armed = False

    # -- the limit --------------------------------------------------------------------------

    def arm(self) -> bool:
        """Switch the limit on; whether the state is within it (if not, the run must end)."""
        fits = self.fits(0)
        self._rt.set_max_memory(self.limit)
        self._armed = True
        return fits

    def disarm(self) -> None:
        """Switch the limit off, so that lupa's own allocations cannot fail on it."""
        self._rt.set_max_memory(0)
        self._armed = False

    @property
    def armed(self) -> bool:
        return self._armed

    def used(self) -> int:
        """Bytes the state holds beyond what an empty runtime holds."""
        used: int = self._rt.get_memory_used()
        return used

    def remaining(self) -> int:
        """Bytes left under the limit (negative when a crossing went past it)."""
        return self.limit - self.used()

    def fits(self, size: int) -> bool:
        """Whether ``size`` more bytes fit under the limit, after a full collection if need be.

        The usage counts garbage until the collector frees it; an allocation Lua refuses is
        retried after an emergency collection, and a crossing gets the same chance, so that a
        loop that drops what it received does not end at the limit it never reached."""
        if size <= self.remaining():
            return True
        self._rt.gccollect()
        return size <= self.remaining()

    # -- prices -------------------------------------------------------------------------------

    def admit(self, size: int) -> None:
        """Raise ``Killed('memory')`` unless ``size`` more bytes fit under the limit."""
        if not self.fits(size):
            raise Killed("memory")

    def admit_string(self, text: str | bytes) -> bytes:
        """``text`` as the UTF-8 bytes lupa will push, once its size is known to fit.

        Encoding here (rather than letting lupa do it) makes the one copy the push needs anyway,
        and gives the exact size to price. A lone surrogate (from JSON ``"\\ud800"``) cannot be
        UTF-8 and raises ``UnicodeEncodeError``."""
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        self.admit(len(data) + STRING_OVERHEAD)
        return data

    def admit_text(self, length: int, room: int | None = None) -> None:
        """Raise ``Killed('memory')`` when a text of at least ``length`` characters cannot fit
        in ``room`` bytes (by default, what the state has left)."""
        if room is None:
            self.admit(length)
        elif length > room:
            raise Killed("memory")

    def within_allowance(self, size: int) -> None:
        """Raise ``Killed('memory')`` when Python-side work of ``size`` bytes is too much."""
        if size > self.allowance:
            raise Killed("memory")

    def poll(self) -> None:
        """Between items of a long conversion: stop when the state went past its limit or the
        run was asked to stop (its deadline, a cancellation)."""
        if not self.fits(0):
            raise Killed("memory")
        reason = self._stop()
        if reason is not None:
            raise Killed(reason)
