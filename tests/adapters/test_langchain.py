"""LangChain adapter: real StructuredTools driven by a scripted chat model's tool calls."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from runvil import Host, unwrap
from runvil.adapters.langchain import LangChainWebTools
from tests.faces_helpers import hello_text


async def test_tool_calls_from_a_chat_model_become_tool_messages(host: Host) -> None:
    model = GenericFakeChatModel(messages=iter([
        AIMessage(content="", tool_calls=[
            {"name": "web_fetch", "args": {"url": "https://example.com/hello.txt"}, "id": "c1"},
            {"name": "web_fetch", "args": {"url": "https://user:pw@example.com/"}, "id": "c2"},
            {"name": "web_search", "args": {"query": "rust", "count": 30}, "id": "c3"},
        ]),
        AIMessage(content="done"),
    ]))
    async with LangChainWebTools(host) as web:
        tools = web.tools()
        messages: list[object] = [HumanMessage("read the page")]
        ai = await model.ainvoke(messages)
        assert isinstance(ai, AIMessage)
        messages.append(ai)
        for call in ai.tool_calls:
            messages.append(await web.by_name(call["name"]).ainvoke(call))
        final = await model.ainvoke(messages)
    assert final.content == "done"

    specs = [convert_to_openai_tool(t)["function"] for t in tools]
    assert [s["name"] for s in specs] == ["web_fetch", "web_search"]
    assert specs[0]["description"] == "Fetch a web page and return its main content as markdown."
    fetch_schema = host.tools["web/fetch"].schema_dict()
    assert specs[0]["parameters"]["properties"] == fetch_schema["properties"]
    assert specs[0]["parameters"]["required"] == fetch_schema["required"]

    replies = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in replies] == ["c1", "c2", "c3"]
    assert [m.status for m in replies] == ["success", "error", "error"]
    assert unwrap(str(replies[0].content)) == hello_text()
    assert unwrap(str(replies[1].content)) == "url must not contain userinfo"
    assert unwrap(str(replies[2].content)) == "web_search: count must be between 1 and 20"
