"""OpenAI adapter with the real ``openai`` client against a scripted Chat Completions server."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageToolCall

from runvil import Host, unwrap
from runvil.adapters.openai import OpenAITools
from tests.faces_helpers import hello_text


def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def tool_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return completion(
        {
            "role": "assistant", "content": None,
            "tool_calls": [
                {"id": cid, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, name, args in calls
            ],
        },
        "tool_calls",
    )


def answer_with_tool_results(body: dict[str, Any]) -> dict[str, Any]:
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    return completion({"role": "assistant", "content": "\n---\n".join(results)}, "stop")


async def test_a_tool_loop_with_the_openai_client(host: Host, scripted: Any) -> None:
    model = await scripted("/v1/chat/completions", [
        tool_calls(
            ("call_1", "web_fetch", {"url": "https://example.com/hello.txt"}),
            ("call_2", "web_fetch", {"url": "https://user:pw@example.com/"}),
            ("call_3", "web_search", {"query": "rust"}),
        ),
        answer_with_tool_results,
    ])
    client = openai.AsyncOpenAI(base_url=model.base_url + "/v1", api_key="test", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "read the page"}]
    async with OpenAITools(host) as web:
        for _ in range(3):
            reply = await client.chat.completions.create(
                model="scripted", messages=messages, tools=web.specs()
            )
            msg = reply.choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                break
            messages += await web.dispatch_all(msg.tool_calls)
        nonce = web.run.nonce
    await client.close()

    sent_tools = model.requests[0]["tools"]
    assert [t["function"]["name"] for t in sent_tools] == ["web_fetch", "web_search"]
    assert sent_tools[0]["function"]["parameters"] == host.tools["web/fetch"].schema_dict()
    assert sent_tools[1]["function"]["description"] == (
        "Search the web and return a list of results (title, url, description)."
    )
    tool_messages = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2", "call_3"]
    assert unwrap(tool_messages[0]["content"]) == hello_text()
    assert unwrap(tool_messages[1]["content"]) == "url must not contain userinfo"
    assert unwrap(tool_messages[2]["content"]) == (
        '{"query":"rust","results":[{"title":"T","url":"https://e.com","description":"D"}]}'
    )
    assert all(f"<untrusted_input_{nonce}>" in m["content"] for m in tool_messages)
    assert messages[-1]["content"] == "\n---\n".join(m["content"] for m in tool_messages)


async def test_dispatch_reads_sdk_objects_and_dicts_and_bad_json(host: Host) -> None:
    async with OpenAITools(host, tools=["web/fetch"]) as web:
        sdk_call = ChatCompletionMessageToolCall.model_validate({
            "id": "c1", "type": "function",
            "function": {"name": "web_fetch", "arguments": "{not json"},
        })
        answered = await web.dispatch(sdk_call)
        unknown = await web.dispatch(
            {"id": "c2", "type": "function", "function": {"name": "web_crawl", "arguments": "{}"}}
        )
        response_item = await web.dispatch_response(
            {"type": "function_call", "call_id": "fc1", "name": "web_fetch",
             "arguments": '{"url": "https://example.com/hello.txt"}'}
        )
        assert [t["name"] for t in web.response_specs()] == ["web_fetch"]
    assert answered["tool_call_id"] == "c1"
    assert unwrap(answered["content"]) == "web_fetch: missing url argument"
    assert unknown["content"] == "unknown tool web_crawl; the tools offered are: web_fetch"
    assert response_item["type"] == "function_call_output"
    assert response_item["call_id"] == "fc1"
    assert unwrap(response_item["output"]) == hello_text()


async def test_a_run_passed_in_is_left_open_and_tools_are_chosen_in_order(host: Host) -> None:
    async with host.run() as run:
        async with OpenAITools(run, tools=["web/search", "web/fetch"]) as web:
            names = [t["function"]["name"] for t in web.specs()]
        assert names == ["web_search", "web_fetch"]
        assert run.closed is False
        assert web.run is run
    async with OpenAITools(host) as owned:
        pass
    assert owned.run.closed is True
    with pytest.raises(LookupError) as info:
        OpenAITools(host, tools=["web/crawl"])
    assert str(info.value) == "unknown tool web/crawl"
