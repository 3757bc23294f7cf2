"""OpenAI function tools: the web tools as Chat Completions (or Responses API) tool specs, and a
dispatcher that turns the model's tool calls into the messages that answer them.

Needs no SDK: the specs are plain dicts and the dispatcher reads SDK objects or dicts alike, so
it works with ``openai`` and with any OpenAI-compatible client::

    async with OpenAITools(host) as web:
        reply = await client.chat.completions.create(model=..., messages=msgs, tools=web.specs())
        msg = reply.choices[0].message
        msgs.append(msg.model_dump(exclude_none=True))
        msgs += await web.dispatch_all(msg.tool_calls or [])
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from runvil.adapters._toolbox import WebToolsBase, field

__all__ = ["OpenAITools"]


class OpenAITools(WebToolsBase):
    """The web tools for the OpenAI APIs (see the module docstring)."""

    def specs(self) -> list[dict[str, Any]]:
        """Chat Completions ``tools``: ``{"type": "function", "function": {...}}`` per tool."""
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.schema,
                },
            }
            for t in self.offered
        ]

    def response_specs(self) -> list[dict[str, Any]]:
        """Responses API ``tools``: ``{"type": "function", "name", "description",
        "parameters"}`` per tool."""
        return [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.schema,
            }
            for t in self.offered
        ]

    async def dispatch(self, tool_call: Any) -> dict[str, Any]:
        """The ``{"role": "tool", "tool_call_id", "content"}`` message answering one Chat
        Completions tool call (an SDK ``ChatCompletionMessageToolCall`` or its dict)."""
        function = field(tool_call, "function")
        result = await self.call(field(function, "name"), field(function, "arguments") or "")
        return {"role": "tool", "tool_call_id": field(tool_call, "id"), "content": result.text}

    async def dispatch_all(self, tool_calls: Iterable[Any]) -> list[dict[str, Any]]:
        """Answer every tool call of one assistant message, concurrently, in the calls' order."""
        return list(await asyncio.gather(*(self.dispatch(c) for c in tool_calls)))

    async def dispatch_response(self, item: Any) -> dict[str, Any]:
        """The ``function_call_output`` item answering one Responses API ``function_call``."""
        result = await self.call(field(item, "name"), field(item, "arguments") or "")
        call_id = field(item, "call_id")
        return {"type": "function_call_output", "call_id": call_id, "output": result.text}
