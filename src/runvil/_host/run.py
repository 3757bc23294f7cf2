"""One prompt run or one MCP session: one envelope nonce, and the calls it has in flight.

Every face calls tools through a run: :meth:`Run.invoke` gives the typed
:class:`~runvil._host.results.CallResult` (the CLI reads it), :meth:`Run.call` the text a model
reads (a prompt's ``tools.call``), and the model's tool scope (:meth:`Run.toolbox`) and the MCP
server turn an ``invoke`` into model text with the same function, ``model_text``. A run reaches
the tools only through the :class:`~runvil._host.invoker.Invoker` its Host hands it.

Closing a run cancels every call still in flight and waits for it to unwind, so no fetch
outlives its run and every connection it opened is closed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from runvil._closing import AsyncClosing
from runvil._envelope import is_nonce, new_nonce
from runvil._errors import ToolError, ToolErrorKind
from runvil._host.objects import ToolObject
from runvil._host.results import CallResult, model_text, untrusted
from runvil._host.toolbox import Toolbox
from runvil._tools import RunScope, current_run

if TYPE_CHECKING:
    from runvil._host.invoker import Invoker

__all__ = ["Run"]


class Run(AsyncClosing):
    """One prompt run or one MCP session: one nonce, and the calls it has in flight.

    Use ``async with host.run() as run:`` (or ``run = host.start_run()`` ... ``await
    run.aclose()``). Closing a run cancels every call still in flight and waits for it to finish
    unwinding, so no fetch outlives its run and every connection it opened is closed.
    """

    def __init__(self, invoker: Invoker, nonce: str | None = None) -> None:
        if nonce is None:
            nonce = new_nonce()
        elif not is_nonce(nonce):
            raise ValueError("a run nonce is 16 lowercase hex characters")
        self._invoker = invoker
        self.nonce = nonce
        self._inflight: set[asyncio.Task[CallResult]] = set()
        self._closing = False
        #: What the tools see of this run (``runvil._tools.current_run`` during its calls).
        self.scope = RunScope()

    @property
    def closed(self) -> bool:
        """Whether the run has ended (no further calls are accepted)."""
        return self._closing

    @property
    def inflight(self) -> int:
        """How many tool calls are running right now."""
        return len(self._inflight)

    def untrusted(self, text: str) -> str:
        """``text`` in this run's untrusted envelope (Lua's ``untrusted(s)``)."""
        return untrusted(text, self.nonce)

    def resolve(self, tool: ToolObject | str) -> ToolObject:
        """The Tool object for a Tool object, a tool id or a tool path (as ``Host.resolve``):
        ``LookupError`` when the Host has no usable tool by that name."""
        return self._invoker.resolve(tool)

    def toolbox(self) -> Toolbox:
        """A fresh tool scope for one model conversation in this run."""
        return Toolbox(self)

    async def call(self, tool: ToolObject | str, args: Any, *, envelope: bool = True) -> str:
        """Call ``tool`` (a Tool object, a tool id such as ``web/fetch`` or a tool path such as
        ``promptforge/web/fetch``) with ``args`` (the JSON argument object).

        Returns the tool's text (a success or a soft failure), in this run's envelope unless
        ``envelope=False``. A hard failure raises the tool's ``ToolError`` unchanged; an unknown
        or unavailable tool raises ``ToolError(InvalidArguments, ...)`` (see docs/host.md); a
        refused approval raises ``ToolError(Other, refusal_message(...))``.
        """
        result = await self.invoke(tool, args)
        if result.error is not None:
            raise result.error
        return model_text(result, self.nonce, enveloped=envelope)

    async def invoke(self, tool: ToolObject | str, args: Any) -> CallResult:
        """Call ``tool`` with ``args`` and return the typed :class:`CallResult`: the tool's bare
        text, the hard failure (as a value, never raised: an unknown or unavailable tool, a
        refused approval, the tool's ``ToolError``, a call the run's end cancelled) and the
        tool's typed outcome when it has one. ``RuntimeError`` once the run has ended.
        """
        if self._closing:
            raise RuntimeError("this run has ended")
        try:
            obj = self._invoker.resolve(tool)
        except LookupError as err:
            return CallResult.failed(ToolError(ToolErrorKind.InvalidArguments, str(err.args[0])))
        # The call's task copies the context as it is made: the tool sees this run's scope.
        token = current_run.set(self.scope)
        try:
            task = asyncio.ensure_future(self._invoker.invoke(obj, args))
        finally:
            current_run.reset(token)
        self._inflight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            task.cancel()
            current = asyncio.current_task()
            if self._closing and task.cancelled() and (current is None or not current.cancelling()):
                return CallResult.failed(ToolError(
                    ToolErrorKind.Other,
                    f"{obj.catalog.wire_name}: the run ended before the call finished",
                ))
            raise
        finally:
            self._inflight.discard(task)

    async def aclose(self) -> None:
        """End the run: refuse new calls, cancel the ones in flight and wait for them to unwind."""
        self._closing = True
        pending = list(self._inflight)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        self.scope.end()  # what the tools kept for this run goes now


