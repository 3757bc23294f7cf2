"""Tool descriptions as the tools themselves publish them, and what a tool must do.

A :class:`Tool` is what a tool implementation says about itself: its id, its catalog description
and the JSON schema of its arguments; a :class:`ToolImplementation` is a tool that can be called.
The host wraps both into the read-only Tool objects a prompt sees (with the Pack, aliases and
wire names); this module only knows the catalog facts, so the tools below it need nothing from
the host.
"""

from __future__ import annotations

from collections.abc import Mapping
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
