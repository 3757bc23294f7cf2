"""LangChain tools for the web tools (extra ``runvil[langchain]``)::

    async with LangChainWebTools(host) as web:
        tools = web.tools()
        model = chat_model.bind_tools(tools)
        ai = await model.ainvoke(messages)
        for call in ai.tool_calls:
            messages.append(await web.by_name(call["name"]).ainvoke(call))   # a ToolMessage

Each tool is a ``StructuredTool`` whose ``args_schema`` is the tool's own JSON schema (not a
model regenerated from a signature), so ``bind_tools`` shows the model exactly that schema. A
hard failure becomes a ``ToolMessage`` with ``status="error"`` holding the enveloped message.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from runvil.adapters._toolbox import WebToolsBase

__all__ = ["LangChainWebTools"]


class LangChainWebTools(WebToolsBase):
    """The web tools as LangChain tools (see the module docstring)."""

    def tools(self) -> list[BaseTool]:
        """One async ``StructuredTool`` per offered web tool, in order."""
        return [self._tool(t.name, t.description, t.schema) for t in self.offered]

    def by_name(self, name: str) -> BaseTool:
        """The tool a model calls ``name`` (``KeyError`` if none was offered under it)."""
        for tool in self.tools():
            if tool.name == name:
                return tool
        raise KeyError(name)

    def _tool(self, name: str, description: str, schema: dict[str, Any]) -> BaseTool:
        async def call(**arguments: Any) -> str:
            result = await self.call(name, arguments)
            if result.is_error:
                raise ToolException(result.text)
            return result.text

        return StructuredTool.from_function(
            coroutine=call,
            name=name,
            description=description,
            args_schema=schema,
            infer_schema=False,
            handle_tool_error=True,
        )
