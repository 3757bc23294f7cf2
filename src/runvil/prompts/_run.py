"""Running a prompt: prepare against the Host, walk the sections, turn failures into run errors.

The order is fixed so that nothing runs when something is missing: the Host checks the
declared Packs or Plugins, the promptforge tool slots are bound, every declared model role must
have an endpoint, and every section compiles, all before the first line of Lua runs. Then the
sections run in file order in one Lua state (globals carry over, ``prose``, the runvil
``messages`` list and the tool scope are fresh per section); the run result is the value of the
last section that returned one.

Lua runs in a worker thread of its own; every host operation it asks for (a tool call, a model
round) runs on the caller's event loop and the worker waits for it, polling the stop flag so a
deadline or a cancelled run also ends a wait. The run's tool calls belong to one Host run, which
is closed at the end, so no fetch outlives its run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from runvil._errors import RunError, RunErrorKind, ToolError
from runvil._host import Host, OfferError, Run, Toolbox, ToolObject, requirements_notice
from runvil.prompts._document import Prompt
from runvil.prompts._limits import Limits
from runvil.prompts._loop import tool_loop
from runvil.prompts._lua import (
    ApiError,
    Killed,
    LuaSandbox,
    ToolFailure,
    limit_text,
)
from runvil.prompts._models import ChatClient, ModelEndpoint, ModelTransport

__all__ = ["run_prompt"]

log = logging.getLogger("runvil.prompts")

T = TypeVar("T")

#: How long a stopped run waits for its Lua thread before leaving it behind.
_STOP_GRACE = 2.0
#: How often a waiting Lua thread looks at the stop flag.
_POLL = 0.05


async def run_prompt(
    prompt: Prompt,
    *,
    host: Host,
    models: Mapping[str, ModelEndpoint] | None = None,
    limits: Limits | None = None,
    on_print: Callable[[str], None] | None = None,
    nonce: str | None = None,
) -> str:
    """Run ``prompt`` on ``host`` and return its result text.

    ``models`` maps the prompt's model roles to endpoints; ``limits`` bounds the run;
    ``on_print`` receives each line the prompt prints (default: the ``runvil.prompts`` logger);
    ``nonce`` pins the run's envelope nonce (tests). Raises ``RunError`` with kind
    RequirementsUnmet, Tool, Lua, Model, Limit or Parse.
    """
    limits = limits or Limits()
    endpoints = dict(models or {})
    if prompt.dialect == "runvil":
        host.prepare(uses=prompt.uses)
        aliases: dict[str, ToolObject] = {}
    else:
        host.prepare(plugins=prompt.plugins)
        aliases = _bind_slots(host, prompt)
    missing = [role for role in prompt.models if role not in endpoints]
    if missing:
        raise RunError(
            RunErrorKind.RequirementsUnmet,
            requirements_notice(f"no model endpoint for role: {role}" for role in missing),
        )
    loop = asyncio.get_running_loop()
    async with host.run(nonce=nonce) as run, ModelTransport() as http:
        session = _Session(prompt, host, run, aliases, endpoints, limits, loop, http, on_print)
        done = _start_thread(loop, session.work)
        try:
            return await asyncio.wait_for(asyncio.shield(done), timeout=limits.wall_time)
        except TimeoutError:
            session.stop("wall_time")
            await _settle(done)
            raise RunError(RunErrorKind.Limit, limit_text("wall_time", limits)) from None
        except asyncio.CancelledError:
            session.stop("cancelled")
            await _settle(done)
            raise
        except Killed as err:
            raise RunError(RunErrorKind.Limit, limit_text(err.reason, limits)) from None


def _bind_slots(host: Host, prompt: Prompt) -> dict[str, ToolObject]:
    aliases: dict[str, ToolObject] = {}
    problems: list[str] = []
    for alias, path in prompt.tools.items():
        try:
            aliases[alias] = host.bind(alias, path)
        except LookupError as err:
            problems.append(f"tool slot {alias}: {err.args[0]}")
    if problems:
        raise RunError(RunErrorKind.RequirementsUnmet, requirements_notice(problems))
    return aliases


async def _settle(done: asyncio.Future[str]) -> None:
    """Give a stopped Lua thread a moment to notice; a thread stuck inside one long C call
    (a pathological string pattern) is left behind, and dies at its next instruction."""
    with contextlib.suppress(Exception, asyncio.CancelledError):  # the run ends either way
        await asyncio.wait_for(asyncio.shield(done), timeout=_STOP_GRACE)


def _start_thread(loop: asyncio.AbstractEventLoop, work: Callable[[], str]) -> asyncio.Future[str]:
    done: asyncio.Future[str] = loop.create_future()

    def deliver(result: str | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result or "")

    def target() -> None:
        try:
            result = work()
        except BaseException as err:
            outcome: tuple[str | None, BaseException | None] = (None, err)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(deliver, *outcome)

    threading.Thread(target=target, name="runvil-lua", daemon=True).start()
    return done


class _Session:
    """One run's state, and the :class:`~runvil.prompts._lua.LuaHooks` the sandbox calls."""

    def __init__(
        self,
        prompt: Prompt,
        host: Host,
        run: Run,
        aliases: dict[str, ToolObject],
        endpoints: dict[str, ModelEndpoint],
        limits: Limits,
        loop: asyncio.AbstractEventLoop,
        http: ModelTransport,
        on_print: Callable[[str], None] | None,
    ) -> None:
        self._prompt = prompt
        self._host = host
        self._run = run
        self._aliases = aliases
        self._endpoints = endpoints
        self._limits = limits
        self._loop = loop
        self._http = http
        self._on_print = on_print
        self._deadline = time.monotonic() + limits.wall_time
        self._stop: str | None = None
        self._box: Toolbox = run.toolbox()
        self._always: dict[str, str | None] = {}
        roles = list(prompt.models)
        self._role: str | None = roles[0] if len(roles) == 1 else None
        self._sandbox: LuaSandbox | None = None

    # -- the worker thread -------------------------------------------------------------------

    def work(self) -> str:
        sandbox = LuaSandbox(
            self, dialect=self._prompt.dialect, limits=self._limits, source=self._prompt.source
        )
        self._sandbox = sandbox
        # The Lua state is freed here, on this thread, and not whenever (and wherever, often on
        # the event loop) the garbage collector reaches the runtime's reference cycle: close()
        # breaks the cycle, and a failure is re-raised as a fresh copy, so no traceback keeps a
        # frame holding Lua objects alive.
        try:
            return self._walk(sandbox)
        except RunError as err:
            failure: BaseException = RunError(err.kind, err.text)
        except Killed as err:
            failure = Killed(err.reason)
        finally:
            self._sandbox = None
            sandbox.close()
        raise failure

    def _walk(self, sandbox: LuaSandbox) -> str:
        prompt = self._prompt
        chunks = [sandbox.compile(section) for section in prompt.sections]
        for alias in self._aliases:
            sandbox.bind_alias(alias)
        result: str | None = None
        for section, chunk in zip(prompt.sections, chunks, strict=True):
            self._begin_section()
            value = sandbox.run_section(chunk, section.prose)
            if value is not None:
                result = value
        return result or ""

    def stop(self, reason: str) -> None:
        if self._stop is None:
            self._stop = reason

    def stop_reason(self) -> str | None:
        if self._stop is None and time.monotonic() >= self._deadline:
            self._stop = "wall_time"
        return self._stop

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the event loop and wait for it, watching the stop flag."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        while True:
            try:
                return future.result(timeout=_POLL)
            except concurrent.futures.TimeoutError:
                reason = self.stop_reason()
                if reason is not None:
                    future.cancel()
                    raise Killed(reason) from None
            except concurrent.futures.CancelledError:
                raise Killed(self.stop_reason() or "cancelled") from None

    def _begin_section(self) -> None:
        self._box = self._run.toolbox()
        for alias, description in self._always.items():
            self._box.offer(self._aliases[alias], description=description)

    # -- tools -------------------------------------------------------------------------------

    def _target(self, key: str) -> ToolObject | str:
        if self._prompt.dialect == "promptforge":
            return self._aliases.get(key, key)
        return key

    def tool_call(self, key: str, args: Any) -> str:
        target = self._target(key)
        try:
            return self._wait(self._run.call(target, args))
        except ToolError as err:
            raise ToolFailure(err.message) from None

    def tool_info(self, key: str) -> dict[str, Any]:
        try:
            obj = self._run.resolve(self._target(key))
        except LookupError as err:
            raise ApiError(f"tools.get: {err.args[0]}") from None
        info: dict[str, Any] = {
            "id": obj.id,
            "name": obj.name,
            "description": obj.description,
            "wire_name": obj.wire_name,
            "parameters": dict(obj.parameters),
            "untrusted": obj.untrusted,
        }
        if obj.pack is not None:
            pack_keys = [tool.id for tool in obj.pack.tools]
            info["pack"] = {"id": obj.pack.id, "name": obj.pack.name, "tools": pack_keys}
        return info

    def offer(self, key: str, description: str | None, scope: str, fname: str) -> None:
        if self._prompt.dialect == "promptforge":
            if key not in self._aliases:
                declared = ", ".join(self._aliases) or "none"
                raise ApiError(
                    f"{fname}: unknown tool alias {key} (the aliases under tools: are {declared})"
                )
            target: ToolObject | str = self._aliases[key]
        else:
            target = key
        try:
            self._box.offer(target, description=description)
        except LookupError as err:
            raise ApiError(f"{fname}: {err.args[0]}") from None
        if scope == "always":
            self._always[key] = description

    def pack_offer(self, pack_id: str) -> None:
        try:
            tools = self._host.offer_pack(pack_id)
        except OfferError as err:
            raise ApiError(str(err)) from None
        for tool in tools:
            self._box.offer(tool)

    # -- models ------------------------------------------------------------------------------

    def model_use(self, role: str, fname: str) -> None:
        if role not in self._prompt.models:
            declared = ", ".join(self._prompt.models) or "none"
            raise ApiError(
                f"{fname}: unknown model role {role} (the roles under models: are {declared})"
            )
        self._role = role

    def model_loop(self, records: list[Any]) -> list[dict[str, Any]]:
        role = self._role
        if role is None:
            choose = "models.use" if self._prompt.dialect == "runvil" else "models.default"
            if not self._prompt.models:
                raise ApiError("models.loop: the prompt declares no model role under models:")
            raise ApiError(f"models.loop: no model role chosen; call {choose}(role) first")
        client = ChatClient(
            self._endpoints[role], self._http, role=role, settings=self._prompt.models[role]
        )
        clean = [record for record in records if isinstance(record, dict)]
        return self._wait(
            tool_loop(client, clean, self._box, max_rounds=self._limits.max_rounds, role=role)
        )

    # -- the rest ----------------------------------------------------------------------------

    def untrusted(self, text: str) -> str:
        # The envelope writes each "<" as "&lt;", so its text is at least this long: a text whose
        # envelope cannot fit in the Lua state ends the run before Python builds it.
        if self._sandbox is not None:
            self._sandbox.admit(len(text) + 3 * text.count("<"))
        return self._run.untrusted(text)

    def print(self, text: str) -> None:
        if self._on_print is not None:
            self._on_print(text)
        else:
            log.info("%s: %s", self._prompt.source, text)
