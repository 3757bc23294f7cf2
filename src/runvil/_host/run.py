"""One prompt run or one MCP session: one envelope nonce, and the calls it has in flight.

Closing a run cancels every call still in flight and waits for it to unwind, so no fetch
outlives its run and every connection it opened is closed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from runvil._closing import AsyncClosing
from runvil._envelope import envelope as _envelope
from runvil._envelope import is_nonce, new_nonce
from runvil._errors import ToolError, ToolErrorKind
from runvil._host.objects import ToolObject
from runvil._host.toolbox import Toolbox
from runvil._tools import RunScope, current_run

if TYPE_CHECKING:
    from runvil._host.host import Host

__all__ = ["Run"]


class Run(AsyncClosing):
    """One prompt run or one MCP session: one nonce, and the calls it has in flight.

    Use ``async with host.run() as run:`` (or ``run = host.start_run()`` ... ``await
    run.aclose()``). Closing a run cancels every call still in flight and waits for it to finish
    unwinding, so no fetch outlives its run and every connection it opened is closed.
    """

    def __init__(self, host: Host, nonce: str | None = None) -> None:
        if nonce is None:
            nonce = new_nonce()
        elif not is_nonce(nonce):
            raise ValueError("a run nonce is 16 lowercase hex characters")
        self.host = host
        self.nonce = nonce
        self._inflight: set[asyncio.Task[str]] = set()
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
        return _envelope(text, self.nonce)

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
        if self._closing:
            raise RuntimeError("this run has ended")
        obj = self.host._resolve_for_call(tool)
        # The call's task copies the context as it is made: the tool sees this run's scope.
        token = current_run.set(self.scope)
        try:
            task: asyncio.Task[str] = asyncio.ensure_future(self.host._invoke(obj, args))
        finally:
            current_run.reset(token)
        self._inflight.add(task)
        try:
            text = await task
        except asyncio.CancelledError:
            task.cancel()
            current = asyncio.current_task()
            if self._closing and task.cancelled() and (current is None or not current.cancelling()):
                raise ToolError(
                    ToolErrorKind.Other,
                    f"{obj.catalog.wire_name}: the run ended before the call finished",
                ) from None
            raise
        finally:
            self._inflight.discard(task)
        return self.untrusted(text) if envelope else text

    async def aclose(self) -> None:
        """End the run: refuse new calls, cancel the ones in flight and wait for them to unwind."""
        self._closing = True
        pending = list(self._inflight)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        self.scope.end()  # what the tools kept for this run goes now


