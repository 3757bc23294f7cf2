"""The sandboxed Lua 5.4 runtime one prompt run executes in.

One :class:`LuaSandbox` per run, used from one worker thread only: lupa releases the GIL while
Lua computes, so the event loop stays free, and host operations (tool calls, model rounds) are
handed back to the loop by the :class:`LuaHooks` the run supplies. Every way out of the sandbox
is closed here (see :mod:`runvil.prompts._prelude` for the Lua half):

* ``lupa.lua54`` explicitly, never lupa's default runtime (Lua 5.5 in lupa 2.8), and never
  LuaJIT (it cannot tell ``5`` from ``5.0``);
* no ``python`` global, no ``eval``/``builtins`` registration, and attribute handlers that refuse
  every attribute of every Python object, so no Python object is reachable from Lua;
* no os/io/load/loadstring/dofile/require/debug/package/collectgarbage and no ``string.dump``;
  code is loaded as text only (``"t"``), so precompiled bytecode cannot be smuggled in;
* a memory ceiling, an instruction budget and a polling hook for the wall-clock deadline;
* the memory ceiling armed only while Lua code runs, and every value priced before it crosses
  into Lua (:mod:`runvil.prompts._budget` says why: an allocation lupa makes outside Lua code must
  never fail on the limit, or the process freezes).

A host callback never raises into Lua: it answers ``status, value`` and the Lua side raises the
right error value, because a Python exception crossing into Lua would put a Python object in the
prompt's hands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol

from lupa import lua54

from runvil._errors import RunError, RunErrorKind
from runvil.prompts._budget import LuaBudget
from runvil.prompts._convert import ConversionError, LuaValues
from runvil.prompts._document import Section
from runvil.prompts._limits import Killed, Limits
from runvil.prompts._patterns import MATCHER
from runvil.prompts._prelude import PRELUDE

__all__ = [
    "ApiError",
    "Killed",
    "LuaHooks",
    "LuaSandbox",
    "ModelFailure",
    "ToolFailure",
    "limit_text",
]

log = logging.getLogger("runvil.prompts")

#: What the prelude records as the kill reason when the host asked the run to stop; the reason
#: itself (``wall_time``, ``cancelled``) stays on the Python side.
_HOST_STOP = "stopped"

#: What each host operation is called in Lua, for error messages.
_API_NAMES = {
    "tool_call": "tools.call",
    "tool_info": "tools.get",
    "offer": "tools.offer",
    "pack_offer": "packs.offer",
    "model_use": "models.use",
    "model_loop": "models.loop",
    "untrusted": "untrusted",
    "json_encode": "json.encode",
    "json_decode": "json.decode",
    "print": "print",
}


class ApiError(Exception):
    """A prompt misused the API: raised in Lua as a plain string error with this exact text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolFailure(Exception):
    """A hard tool failure: raised in Lua as an error value with ``kind == 'tool'``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ModelFailure(Exception):
    """A model round failed: raised in Lua as an error value with ``kind == 'model'``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LuaHooks(Protocol):
    """What the sandbox asks of the run it belongs to. Called on the Lua worker thread; methods
    that wait for the event loop must poll :meth:`stop_reason` and raise :class:`Killed`."""

    def tool_call(self, key: str, args: Any) -> str: ...
    def tool_info(self, key: str) -> dict[str, Any]: ...
    def offer(self, key: str, description: str | None, scope: str, fname: str) -> None: ...
    def pack_offer(self, pack_id: str) -> None: ...
    def model_use(self, role: str, fname: str) -> None: ...
    def model_loop(self, records: list[Any]) -> list[dict[str, Any]]: ...
    def untrusted(self, text: str) -> str: ...
    def print(self, text: str) -> None: ...
    def stop_reason(self) -> str | None: ...


def limit_text(reason: str, limits: Limits) -> str:
    """The run error text for a limit that stopped a run."""
    if reason == "memory":
        return f"the run exceeded its memory limit ({limits.memory} bytes)"
    if reason == "wall_time":
        return f"the run exceeded its wall-time limit ({limits.wall_time:g} seconds)"
    if reason == "instructions":
        return f"the run exceeded its instruction limit ({limits.instructions} Lua instructions)"
    return f"the run was stopped ({reason})"


def _deny(obj: Any, name: Any, *rest: Any) -> Any:
    raise AttributeError("Python objects are not reachable from a prompt")


class LuaSandbox:
    """A fresh sandboxed Lua state for one run. Use it from a single thread."""

    def __init__(
        self,
        hooks: LuaHooks,
        *,
        dialect: Literal["runvil", "promptforge"],
        limits: Limits,
        source: str = "prompt",
    ) -> None:
        self._hooks = hooks
        self._limits = limits
        self._source = source
        self._stopped: str | None = None
        self._in_call = 0  # host calls under way (a conversion can call back into Lua)
        # max_memory=0: lupa's counting allocator with no limit yet; the budget arms the limit
        # while Lua code runs and disarms it whenever lupa itself allocates.
        self._rt = lua54.LuaRuntime(
            max_memory=0,
            register_eval=False,
            register_builtins=False,
            unpack_returned_tuples=True,
            attribute_handlers=(_deny, _deny),
        )
        self._budget = LuaBudget(self._rt, limits.memory, hooks.stop_reason)
        try:
            self._api = self._rt.execute(
                PRELUDE,
                self._dispatch,
                self._check,
                dialect,
                limits.instructions,
                MATCHER,
                self._arm,
                self._disarm,
            )
        except lua54.LuaMemoryError:
            raise RunError(RunErrorKind.Limit, limit_text("memory", limits)) from None
        finally:
            self._budget.disarm()
        if self._budget.remaining() < 0:
            raise RunError(RunErrorKind.Limit, limit_text("memory", limits))
        self.values = LuaValues(
            self._rt, self._api.classify, self._api.mark_array, self._api.null, self._budget
        )

    def close(self) -> None:
        """Close the Lua state now. The runtime and this object's callbacks form a reference
        cycle, so without this the state would be freed whenever, and on whichever thread, the
        garbage collector next runs."""
        for name in ("values", "_api", "_budget", "_rt"):
            self.__dict__.pop(name, None)

    # -- what the run does -----------------------------------------------------------------------

    def compile(self, section: Section) -> Any:
        """Compile a section's code; a syntax error is a ``RunError(Lua)``.

        The code is padded so that line numbers in messages are the file's line numbers, and the
        chunk is named after the prompt file: ``fetch-page.md:21: ...``.
        """
        padded = "\n" * (section.code_line - 1) + section.code
        try:
            fn, err = self._api.compile(self._budget.admit_string(padded), "=" + self._source)
        except (Killed, lua54.LuaMemoryError):
            raise RunError(RunErrorKind.Limit, limit_text("memory", self._limits)) from None
        finally:
            self._budget.disarm()
        if fn is None:
            if err == "not enough memory":
                raise RunError(RunErrorKind.Limit, limit_text("memory", self._limits))
            raise RunError(RunErrorKind.Lua, str(err))
        return fn

    def bind_alias(self, alias: str) -> None:
        """Make the promptforge alias a global holding its Tool object."""

        def go() -> tuple[str, Any]:
            kind, value = self._api.bind_alias(alias)
            return str(kind), value

        kind, value = self._guarded(go)
        if kind != "ok":
            self._fail(kind, value)

    def run_section(self, chunk: Any, prose: str) -> str | None:
        """Run one compiled section; its return value as text, or ``None`` when it returned
        nothing. Raises ``RunError`` for an uncaught error or a limit."""

        def go() -> tuple[str, Any]:
            self._api.begin_section(self._budget.admit_string(prose))
            kind, value = self._api.run(chunk)
            return str(kind), value

        kind, value = self._guarded(go)
        if kind != "ok":
            self._fail(kind, value)
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if lua54.lua_type(value) == "table":
            try:
                return self.values.encode(value, room=self._budget.allowance)
            except Killed:
                raise RunError(RunErrorKind.Limit, limit_text("memory", self._limits)) from None
            except ConversionError as err:
                raise RunError(
                    RunErrorKind.Lua, f"the section's return value cannot be encoded: {err}"
                ) from None
        raise RunError(
            RunErrorKind.Lua,
            f"a section returned a {lua54.lua_type(value) or type(value).__name__}; "
            "return a string",
        )

    def _guarded(self, fn: Callable[[], tuple[str, Any]]) -> tuple[str, Any]:
        try:
            try:
                return fn()
            finally:
                # An error can leave Lua with the limit armed; disarm it before anything calls
                # into Lua again (lupa's call path allocates, outside any protected call).
                self._budget.disarm()
        except Killed as err:
            return "limit", err.reason
        except lua54.LuaMemoryError:
            return "limit", "memory"
        except UnicodeDecodeError:
            return "Lua", "the section returned a string that is not valid UTF-8"
        except lua54.LuaError as err:
            killed = self._api.killed()
            if killed:
                return "limit", killed
            return "Lua", str(err) or "Lua error"

    def _fail(self, kind: str, value: Any) -> None:
        text = str(value)
        if kind == "limit" and text == _HOST_STOP:
            text = self._stopped or "cancelled"
        if kind == "limit":
            if text == "cancelled":
                raise Killed("cancelled")
            raise RunError(RunErrorKind.Limit, limit_text(text, self._limits))
        raise RunError(RunErrorKind(kind), text)

    # -- callbacks from Lua ----------------------------------------------------------------------

    def admit(self, size: int) -> None:
        """Raise ``Killed('memory')`` unless ``size`` more bytes fit under the memory limit: a
        host operation about to build a large result checks first, so that Python never builds
        what Lua could not take."""
        self._budget.admit(size)

    # Passed to the prelude as methods of this object, not of the budget: close() breaks the
    # runtime's reference cycle by dropping this object's attributes.
    def _arm(self) -> bool:
        if self._in_call:  # a kill inside a host call: lupa still has to convert and push
            return True
        return self._budget.arm()

    def _disarm(self) -> None:
        self._budget.disarm()

    def _check(self) -> bool:
        # Called by the instruction hook with the limit armed: it answers a boolean (lupa pushes
        # it without allocating) and keeps the reason on this side, and it never raises.
        try:
            reason = self._hooks.stop_reason()
        except Exception:
            log.exception("internal error in the stop check")
            reason = "cancelled"
        if reason is None:
            return False
        self._stopped = reason
        return True

    def _dispatch(self, op: str, *args: Any) -> tuple[Any, ...]:
        # The prelude disarmed the limit before lupa converted ``args`` and re-arms it after the
        # result is pushed; every string of the result is priced (and encoded) here.
        name = _API_NAMES.get(op, op)
        budget = self._budget
        self._in_call += 1
        try:
            # A loop of host calls runs few Lua instructions, so the hook's deadline poll could be
            # far apart; every host call looks at the stop flag first.
            reason = self._hooks.stop_reason()
            if reason is not None:
                raise Killed(reason)
            result = self._handle(op, args)
            return tuple(budget.admit_string(v) if isinstance(v, str) else v for v in result)
        except ApiError as err:
            return ("err", err.message)
        except ToolFailure as err:
            return ("tool", err.message)
        except ModelFailure as err:
            return ("model", err.message)
        except Killed as err:
            return ("kill", err.reason)
        except ConversionError as err:
            return ("err", f"{name}: {err}")
        except (UnicodeDecodeError, UnicodeEncodeError):
            return ("err", f"{name}: strings must be valid UTF-8")
        except MemoryError:
            return ("kill", "memory")
        except lua54.LuaError as err:
            killed = self._api.killed()  # the run was stopped inside a call back into Lua
            if killed:
                return ("kill", killed)
            log.exception("internal error in %s", name)
            return ("err", f"{name}: internal error ({type(err).__name__})")
        except Exception as err:
            log.exception("internal error in %s", name)
            return ("err", f"{name}: internal error ({type(err).__name__})")
        finally:
            self._in_call -= 1

    def _handle(self, op: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
        hooks = self._hooks
        if op == "tool_call":
            key, table = args
            return ("ok", hooks.tool_call(str(key), self.values.to_python(table)))
        if op == "tool_info":
            return ("ok", self.values.to_lua(hooks.tool_info(str(args[0]))))
        if op == "offer":
            key, description, scope, fname = args
            hooks.offer(str(key), description, str(scope), str(fname))
            return ("ok",)
        if op == "pack_offer":
            hooks.pack_offer(str(args[0]))
            return ("ok",)
        if op == "model_use":
            hooks.model_use(str(args[0]), str(args[1]))
            return ("ok",)
        if op == "model_loop":
            records = self.values.to_python(args[0])
            added = hooks.model_loop(records if isinstance(records, list) else [])
            return ("ok", _json(added))
        if op == "untrusted":
            return ("ok", hooks.untrusted(str(args[0])))
        if op == "json_encode":
            return ("ok", self.values.encode(args[0] if args else None))
        if op == "json_decode":
            return ("ok", self.values.decode(str(args[0])))
        if op == "print":
            hooks.print(str(args[0]))
            return ("ok",)
        raise ApiError(f"unknown host operation {op}")


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
