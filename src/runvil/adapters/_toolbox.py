"""What every framework adapter shares: a Host run, a toolbox with the web tools offered, and
the one dispatch path through the Host.

Why through the Host: the adapters must give a model exactly what ``models.loop`` and the MCP
server give it (the same schemas and descriptions, the envelope with one nonce per conversation,
approval, hard failures as readable results), so they borrow the Host's toolbox rather than call
the tools themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runvil._closing import AsyncClosing
from runvil._host import Host, OfferedTool, Run, Toolbox, ToolResult

#: The tools an adapter offers unless told otherwise, in this order.
DEFAULT_TOOLS: tuple[str, ...] = ("web/fetch", "web/search")


class WebToolsBase(AsyncClosing):
    """A conversation's web tools: one Host run (one envelope nonce) and its toolbox.

    Pass a :class:`~runvil.Host` (a run is started for this object and ended by :meth:`aclose`)
    or a :class:`~runvil.Run` you manage yourself. ``tools`` are tool ids, offered in order;
    a tool the Host does not have (the web Pack unavailable) raises ``LookupError`` naming why.
    """

    def __init__(self, source: Host | Run, tools: Iterable[str] = DEFAULT_TOOLS) -> None:
        if isinstance(source, Host):
            self.run = source.run()
            self._owns_run = True
        else:
            self.run = source
            self._owns_run = False
        self.toolbox: Toolbox = self.run.toolbox()
        for tool in tools:
            self.toolbox.offer(tool)

    @property
    def offered(self) -> tuple[OfferedTool, ...]:
        """The offered tools, in order."""
        return self.toolbox.offered

    async def call(self, name: str, arguments: Any) -> ToolResult:
        """Run one tool call by the name the model used; ``arguments`` is the decoded object or
        the raw JSON text. Never raises for a tool failure: ``ToolResult.is_error`` says so."""
        return await self.toolbox.dispatch(name, arguments)

    async def aclose(self) -> None:
        """End the run this object started (cancelling calls in flight); a Run you passed in is
        left to you."""
        if self._owns_run:
            await self.run.aclose()




def field(obj: Any, name: str) -> Any:
    """``obj.name`` for SDK objects, ``obj[name]`` for plain dicts."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)
