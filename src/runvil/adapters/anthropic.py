"""Anthropic tools: the web tools as Messages API tool specs, and a dispatcher that answers the
model's ``tool_use`` blocks with ``tool_result`` blocks.

Needs no SDK (plain dicts in, SDK objects or dicts read)::

    async with AnthropicTools(host) as web:
        reply = await client.messages.create(model=..., max_tokens=1024, messages=msgs,
                                             tools=web.specs())
        msgs.append({"role": "assistant", "content": reply.content})
        results = await web.dispatch_all(reply.content)
        if results:
            msgs.append({"role": "user", "content": results})

A hard failure comes back as a ``tool_result`` with ``is_error: true`` carrying the message in
the envelope, so the model reads it and the conversation goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from runvil.adapters._toolbox import WebToolsBase, field

__all__ = ["AnthropicTools"]


class AnthropicTools(WebToolsBase):
    """The web tools for the Anthropic Messages API (see the module docstring)."""

    def specs(self) -> list[dict[str, Any]]:
        """Messages API ``tools``: ``{"name", "description", "input_schema"}`` per tool."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.schema}
            for t in self.offered
        ]

    async def dispatch(self, block: Any) -> dict[str, Any]:
        """The ``tool_result`` block answering one ``tool_use`` block (SDK object or dict)."""
        result = await self.call(field(block, "name"), field(block, "input"))
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": field(block, "id"),
            "content": result.text,
        }
        if result.is_error:
            out["is_error"] = True
        return out

    async def dispatch_all(self, content: Iterable[Any]) -> list[dict[str, Any]]:
        """Answer every ``tool_use`` block of one assistant message, concurrently, in order;
        other blocks (text, thinking) are skipped."""
        uses = [b for b in content if field(b, "type") == "tool_use"]
        return list(await asyncio.gather(*(self.dispatch(b) for b in uses)))
