"""``models.loop``: let the model call the offered tools until it answers in plain text.

Each round sends the conversation and the section's tool scope; every tool call the model makes
is dispatched through the host's :class:`~runvil.Toolbox`, which envelopes the result and
turns a hard failure into result text too, so the model reads what went wrong and the loop goes
on. Calls of one round run concurrently and their results go back in the order the model asked.

The loop ends when the model answers without tool calls, or after ``max_rounds`` requests: the
last request still shows the tools (a conversation holding tool calls must) but forbids calling
them, so a well-behaved model answers in text; one that still asks for a tool ends the loop with a
model failure rather than a silently missing answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from runvil._host import Toolbox
from runvil.prompts._lua import ModelFailure
from runvil.prompts._models import ChatClient

__all__ = ["tool_loop"]


async def tool_loop(
    client: ChatClient,
    records: Sequence[dict[str, Any]],
    box: Toolbox,
    *,
    max_rounds: int,
    role: str,
) -> list[dict[str, Any]]:
    """Run the loop; returns the records it added (assistant turns and tool results)."""
    conversation = list(records)
    added: list[dict[str, Any]] = []
    for round_no in range(1, max_rounds + 1):
        final = round_no == max_rounds
        reply = await client.complete(conversation, box.specs(), final=final)
        record: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            record["tool_calls"] = [
                {"id": call.id, "name": call.name, "arguments": call.arguments}
                for call in reply.tool_calls
            ]
        conversation.append(record)
        added.append(record)
        if not reply.tool_calls:
            return added
        if final:
            break
        results = await asyncio.gather(
            *(box.dispatch(call.name, call.arguments) for call in reply.tool_calls)
        )
        for call, result in zip(reply.tool_calls, results, strict=True):
            tool_record: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": call.id,
                "name": call.name,
                "content": result.text,
            }
            if result.is_error:
                tool_record["is_error"] = True
            conversation.append(tool_record)
            added.append(tool_record)
    raise ModelFailure(
        f"model {role}: still calling tools after {max_rounds} rounds; "
        "raise the round limit or ask for an answer in the prose"
    )
