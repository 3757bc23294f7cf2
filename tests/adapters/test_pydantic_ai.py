"""pydantic-ai adapter: a real Agent with a scripted FunctionModel calling the web tools."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from runvil import Host, unwrap
from runvil.adapters.pydantic_ai import PydanticAIWebTools
from tests.faces_helpers import hello_text


async def test_an_agent_calls_the_web_tools(host: Host) -> None:
    shown: list[AgentInfo] = []
    returned: list[Any] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown.append(info)
        if len(messages) == 1:
            return ModelResponse(parts=[
                ToolCallPart("web_fetch", {"url": "https://example.com/hello.txt"}, "t1"),
                ToolCallPart("web_fetch", {"url": "https://1.2.3.4/"}, "t2"),
                ToolCallPart("web_search", {"query": "rust"}, "t3"),
            ])
        for part in messages[-1].parts:
            returned.append(part)
        return ModelResponse(parts=[TextPart("done")])

    async with PydanticAIWebTools(host) as web:
        agent = Agent(FunctionModel(script), toolsets=[web.toolset()])
        result = await agent.run("read the page")
    assert result.output == "done"

    tools = {t.name: t for t in shown[0].function_tools}
    assert list(tools) == ["web_fetch", "web_search"]
    assert tools["web_fetch"].parameters_json_schema == host.tools["web/fetch"].schema_dict()
    assert tools["web_search"].parameters_json_schema == host.tools["web/search"].schema_dict()
    assert tools["web_fetch"].description == (
        "Fetch a web page and return its main content as markdown."
    )
    by_id = {p.tool_call_id: p for p in returned}
    assert isinstance(by_id["t1"], ToolReturnPart)
    assert unwrap(by_id["t1"].content) == hello_text()
    failed = by_id["t2"]
    assert unwrap(failed.model_response_str(wrap_if_error=False)) == (
        "ip literal host not allowed: 1.2.3.4"
    )
    assert unwrap(by_id["t3"].content) == (
        '{"query":"rust","results":[{"title":"T","url":"https://e.com","description":"D"}]}'
    )
