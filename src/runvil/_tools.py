"""Tool descriptions as the tools themselves publish them, and what a tool must do.

A :class:`Tool` is what a tool implementation says about itself: its id, its catalog description
and the JSON schema of its arguments; a :class:`ToolImplementation` is a tool that can be called.
The host wraps both into the read-only Tool objects a prompt sees (with the Pack, aliases and
wire names); this module only knows the catalog facts, so the tools below it need nothing from
the host.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


def wire_name(tool_id: str) -> str:
    """The name a model sees for a tool id: ``/`` and ``.`` become ``_`` (``web/fetch`` ->
    ``web_fetch``), because model APIs accept only ``[A-Za-z0-9_-]`` in tool names."""
    return tool_id.replace("/", "_").replace(".", "_")


@dataclass(frozen=True)
class Tool:
    """A tool's catalog entry: id, one-sentence description, argument schema, trust level."""

    id: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    untrusted: bool = True

    @property
    def name(self) -> str:
        """The tool name: the last segment of the id (``fetch`` for ``web/fetch``)."""
        return self.id.rsplit("/", 1)[-1]

    @property
    def wire_name(self) -> str:
        """The name a model calls this tool by."""
        return wire_name(self.id)


@runtime_checkable
class ToolImplementation(Protocol):
    """A callable tool: its catalog entry and an async call that takes the JSON argument object
    and returns the result text (a success or a soft failure) or raises
    :class:`~runvil.ToolError`. A tool holding connections may also have ``async aclose()``."""

    @property
    def tool(self) -> Tool: ...

    async def call(self, args: dict[str, Any]) -> str: ...


@runtime_checkable
class ToolOutcome(Protocol):
    """A tool's result as a typed value, for a tool whose result has fields beyond its text
    (``web/fetch``: the final URL, whether the page was cut, how it was extracted, ...).

    ``ok`` is False for a soft failure (a failure that is the call's result text); a hard
    failure is raised as :class:`~runvil.ToolError`, never an outcome. ``model_text()`` is the
    text a model reads, exactly what the tool's ``call`` returns.
    """

    @property
    def ok(self) -> bool: ...

    def model_text(self) -> str: ...


@runtime_checkable
class TypedToolImplementation(ToolImplementation, Protocol):
    """A tool that can also return its result typed: ``call_outcome(args)`` is ``call(args)``
    with the outcome whose ``model_text()`` ``call`` returns. The Host calls it when a tool has
    it, so a face that wants the fields (the CLI's ``--json``, exit code and hints) reads them
    from the same call a model's text comes from."""

    async def call_outcome(self, args: dict[str, Any]) -> ToolOutcome: ...


class RunScope:
    """The identity of one run (a prompt run, an MCP session), as a tool sees it.

    A tool that keeps state for the length of a run (``web/fetch`` keeps the pages it read, so
    a model reading on reads the same text) keys it by the scope of the call in progress,
    :data:`current_run`, and asks to be told when the run ends (:meth:`on_end`), to drop that
    state at once. The scope carries nothing else; a tool may also hold it weakly, for a run
    that is let go without being ended.
    """

    __slots__ = ("__weakref__", "_ended", "_on_end")

    def __init__(self) -> None:
        self._on_end: list[Callable[[], None]] = []
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def on_end(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the run ends (at once if it has ended)."""
        if self._ended:
            callback()
        else:
            self._on_end.append(callback)

    def end(self) -> None:
        """The run is over: tell whoever asked (once; later calls do nothing)."""
        if self._ended:
            return
        self._ended = True
        callbacks, self._on_end = self._on_end, []
        for callback in callbacks:
            callback()

    def __repr__(self) -> str:
        return f"<RunScope {id(self):#x}>"


#: The run the tool call in progress belongs to: set by the Host for each call it makes, and
#: ``None`` for a tool called directly (which is then a run of its own).
current_run: ContextVar[RunScope | None] = ContextVar("runvil_current_run", default=None)
