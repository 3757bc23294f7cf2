"""The Host's invoker: how one call of a resolved tool runs, the same for every face.

A :class:`~runvil.Host` owns one :class:`Invoker` and hands it to each run it starts, so a run
reaches the tools through this object and nothing else of the Host's. The invoker asks the
approver when the tool's Pack says the call reaches out, calls the tool (for its typed outcome
when it has one) and returns a :class:`~runvil._host.results.CallResult`; a hard failure is a
result too, and an exception no tool should raise becomes ``{wire}: internal error ({type})``,
logged with its traceback. It knows nothing of envelopes (:mod:`runvil._host.results`) or of
runs (:mod:`runvil._host.run` tracks and cancels the calls).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from runvil._errors import ToolError, ToolErrorKind
from runvil._host.approval import ApprovalGate
from runvil._host.objects import ToolObject
from runvil._host.results import CallResult
from runvil._pack import Pack
from runvil._tools import ToolImplementation, TypedToolImplementation

__all__ = ["Invoker", "ToolCrashed"]

logger = logging.getLogger("runvil.host")


class ToolCrashed(ToolError):
    """``{wire}: internal error ({type})``: the tool raised an exception no tool should raise
    (a bug), which is the ``__cause__``. It reads as the ``ToolError`` it is for every face; the
    command line, whose contract for a bug is ``runvil: internal error: ...``, tells it apart."""

    def __repr__(self) -> str:
        return f"ToolError({self.kind.value}, {self.message!r})"


class Invoker:
    """Runs tool calls for a Host: ``lookup`` finds a Tool object (``Host.resolve``), ``tools``
    maps a tool id to its Pack and implementation, ``gate`` is the Host's approval gate."""

    def __init__(
        self,
        lookup: Callable[[ToolObject | str], ToolObject],
        tools: Mapping[str, tuple[Pack, ToolImplementation]],
        gate: ApprovalGate,
    ) -> None:
        self._lookup = lookup
        self._tools = tools
        self._gate = gate

    def resolve(self, tool: ToolObject | str) -> ToolObject:
        """The Tool object for a Tool object, a tool id or a tool path; ``LookupError`` naming
        why when the Host has no usable tool by that name."""
        return self._lookup(tool)

    async def invoke(self, obj: ToolObject, args: Any) -> CallResult:
        """Call the tool ``obj`` with ``args``: approval, then the tool. Never raises for a
        tool's failure (cancellation and an approver's own exception propagate)."""
        catalog = obj.catalog
        pack, impl = self._tools[catalog.id]  # a ToolObject exists only for built tools
        # Tools take one JSON argument object; anything else (None, an array, a string) is no
        # argument object at all, and the tool then names what is missing in its own words.
        args = dict(args) if isinstance(args, Mapping) else {}
        if self._gate.asks:
            detail = pack.approval_detail(catalog.name, args)
            if detail is not None:
                try:
                    await self._gate.check(catalog, detail)
                except ToolError as refused:
                    return CallResult.failed(refused)
        try:
            if isinstance(impl, TypedToolImplementation):
                outcome = await impl.call_outcome(args)
                return CallResult(outcome.model_text(), outcome=outcome)
            return CallResult(await impl.call(args))
        except ToolError as err:
            return CallResult.failed(err)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.exception("tool %s raised an unexpected exception", catalog.id)
            internal = ToolCrashed(
                ToolErrorKind.Other,
                f"{catalog.wire_name}: internal error ({type(exc).__name__})",
            )
            internal.__cause__ = exc
            return CallResult.failed(internal)
