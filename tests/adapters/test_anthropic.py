"""Anthropic adapter with the real ``anthropic`` client against a scripted Messages server."""

from __future__ import annotations

from typing import Any

import anthropic

from runvil import Host, unwrap
from runvil.adapters.anthropic import AnthropicTools
from tests.faces_helpers import hello_text


def message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "scripted",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def answer_with_tool_results(body: dict[str, Any]) -> dict[str, Any]:
    blocks = body["messages"][-1]["content"]
    text = "\n---\n".join(b["content"] for b in blocks)
    return message([{"type": "text", "text": text}], "end_turn")


async def test_a_tool_loop_with_the_anthropic_client(host: Host, scripted: Any) -> None:
    model = await scripted("/v1/messages", [
        message(
            [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "web_fetch",
                 "input": {"url": "https://example.com/hello.txt"}},
                {"type": "tool_use", "id": "toolu_2", "name": "web_fetch",
                 "input": {"url": "https://example.com:8080/"}},
            ],
            "tool_use",
        ),
        answer_with_tool_results,
    ])
    client = anthropic.AsyncAnthropic(base_url=model.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the page"}]
    async with AnthropicTools(host) as web:
        for _ in range(3):
            reply = await client.messages.create(
                model="scripted", max_tokens=256, messages=messages, tools=web.specs()
            )
            content = [b.model_dump() for b in reply.content]
            messages.append({"role": "assistant", "content": content})
            results = await web.dispatch_all(reply.content)
            if not results:
                break
            messages.append({"role": "user", "content": results})
    await client.close()

    sent_tools = model.requests[0]["tools"]
    assert [t["name"] for t in sent_tools] == ["web_fetch", "web_search"]
    assert sent_tools[0]["input_schema"] == host.tools["web/fetch"].schema_dict()
    assert sent_tools[0]["description"] == (
        "Fetch a web page and return its main content as markdown."
    )
    results = model.requests[1]["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    assert unwrap(results[0]["content"]) == hello_text()
    assert "is_error" not in results[0]
    assert results[1]["is_error"] is True
    assert unwrap(results[1]["content"]) == "port not allowed: 8080"
    assert reply.content[0].type == "text"
    assert reply.content[0].text == "\n---\n".join(r["content"] for r in results)
