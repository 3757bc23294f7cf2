"""A pydantic-ai toolset holding the web tools (extra ``runvil[pydantic-ai]``)::

    async with PydanticAIWebTools(host) as web:
        agent = Agent(model, toolsets=[web.toolset()])
        result = await agent.run("What changed in Python 3.13?")

Each tool is registered with ``Tool.from_schema``, so the model is shown exactly the schema and
description the tool publishes (pydantic-ai does not regenerate them from a signature). A hard
failure raises pydantic-ai's ``ToolFailed`` with the enveloped message: the model reads it and
adapts, without spending the tool's retry budget.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Tool
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import FunctionToolset

from runvil.adapters._toolbox import WebToolsBase

__all__ = ["PydanticAIWebTools"]


class PydanticAIWebTools(WebToolsBase):
    """The web tools as a pydantic-ai :class:`FunctionToolset` (see the module docstring)."""

    def toolset(self) -> FunctionToolset[Any]:
        """A toolset with one tool per offered web tool, calling through this run."""
        return FunctionToolset([self._tool(t.name, t.description, t.schema) for t in self.offered])

    def _tool(self, name: str, description: str, schema: dict[str, Any]) -> Tool[Any]:
        async def call(**arguments: Any) -> str:
            result = await self.call(name, arguments)
            if result.is_error:
                raise ToolFailed(result.text)
            return result.text

        return Tool.from_schema(call, name=name, description=description, json_schema=schema)
