"""Approval: the question a Host asks before a tool reaches out, and what each answer means.

Seed 002's decisions, for every Pack alike: *once* (this call), *always* (this and every later
call of the same tool on this Host) and *refuse* (this call fails with a message the model can
read; the next call asks again). Which calls are asked about, and what the question shows, is the
Pack's to say (:meth:`runvil.Pack.approval_detail`); this module only keeps the answers.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from runvil._errors import ToolError, ToolErrorKind
from runvil._tools import Tool

__all__ = ["Approval", "ApprovalGate", "ApprovalRequest", "Approver", "refusal_message"]


class Approval(enum.Enum):
    """An answer to an approval request (seed 002's decisions)."""

    ONCE = "once"
    """Allow this call; ask again next time."""
    ALWAYS = "always"
    """Allow this call and every later call of the same tool on this Host."""
    REFUSE = "refuse"
    """Refuse this call: it fails with a ToolError the model can read; ask again next time."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approval prompt shows: the tool (``web/fetch`` / ``web/search``, whatever form or
    alias the caller used) and the detail its Pack chose (the URL or the query, verbatim)."""

    tool_id: str
    detail: str


#: ``approve(request)`` answers with an :class:`Approval` (or ``True`` / ``False`` for once /
#: refuse), directly or as an awaitable. A plain function runs on the event loop, so an
#: interactive approver should be async (e.g. ``await asyncio.to_thread(ask, request)``).
Approver = Callable[[ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"]


def refusal_message(tool: Tool) -> str:
    """The text of the ToolError a refused call fails with, e.g.
    ``web_fetch: the user refused this call; do not retry it``. It keeps the tool's own message
    prefix, like every other web tool message, whatever name the model called the tool by."""
    return f"{tool.wire_name}: the user refused this call; do not retry it"


class ApprovalGate:
    """One Host's approver and the *always* answers it has given.

    Questions about one tool are asked one at a time, so calls that waited behind an *always*
    go ahead without asking. The locks are kept per event loop: a Host may outlive a loop (one
    ``asyncio.run`` per CLI command), and a lock is bound to the loop it first waited in.
    """

    def __init__(self, approve: Approver | None) -> None:
        self._approve = approve
        self._always: set[str] = set()
        self._locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    @property
    def asks(self) -> bool:
        """Whether there is anyone to ask (no approver: every call is approved)."""
        return self._approve is not None

    async def check(self, catalog: Tool, detail: str) -> None:
        """Ask about one call of ``catalog`` showing ``detail``; raise the refusal ToolError if
        the answer is *refuse*. Returns at once when the tool was approved *always*."""
        if self._approve is None or catalog.id in self._always:
            return
        locks = self._locks.setdefault(asyncio.get_running_loop(), {})
        lock = locks.setdefault(catalog.id, asyncio.Lock())
        async with lock:
            if catalog.id in self._always:
                return
            answer = self._approve(ApprovalRequest(catalog.id, detail))
            if inspect.isawaitable(answer):
                answer = await answer
            decision = _decision(answer)
            if decision is Approval.ALWAYS:
                self._always.add(catalog.id)
            elif decision is Approval.REFUSE:
                raise ToolError(ToolErrorKind.Other, refusal_message(catalog))


def _decision(answer: object) -> Approval:
    if isinstance(answer, Approval):
        return answer
    if answer is True:
        return Approval.ONCE
    if answer is False:
        return Approval.REFUSE
    raise TypeError(f"an approver must answer with an Approval, not {answer!r}")
