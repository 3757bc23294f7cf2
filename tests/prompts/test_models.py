"""The two chat clients against scripted loopback servers: request shapes, replies, failures."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from runvil.prompts import ModelEndpoint, endpoints_from_config
from runvil.prompts.lua import ModelFailure
from runvil.prompts.models import ChatClient, ToolCall
from tests.prompts.conftest import ModelFactory
from tests.prompts.fake_models import calls, failure, text

RECORDS: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "name": "web_fetch", "arguments": '{"url":"https://example.com/"}'},
            {"id": "c2", "name": "web_search", "arguments": '{"query":"q"}'},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "web_fetch", "content": "page"},
    {
        "role": "tool",
        "tool_call_id": "c2",
        "name": "web_search",
        "content": "oops",
        "is_error": True,
    },
]
TOOLS = [{"name": "web_fetch", "description": "Fetch.", "parameters": {"type": "object"}}]


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(trust_env=False) as session:
        yield session


def client(model: Any, http: aiohttp.ClientSession, **settings: Any) -> ChatClient:
    endpoint = ModelEndpoint(
        api=model.api, base_url=model.base_url, model="m1", api_key="sk-secret"
    )
    return ChatClient(endpoint, http, role="writer", settings=settings)


async def test_openai_request_shape_and_reply(
    fake_model: ModelFactory, http: aiohttp.ClientSession
) -> None:
    model = await fake_model("openai", [calls(("web_fetch", {"url": "https://x.example/"}))])
    reply = await client(model, http, max_tokens=100, temperature=0.5).complete(
        RECORDS, TOOLS, final=False
    )
    assert reply.content == ""
    assert reply.tool_calls == (ToolCall("call_1", "web_fetch", '{"url": "https://x.example/"}'),)
    assert model.paths == ["/v1/chat/completions"]
    assert model.headers[0]["Authorization"] == "Bearer sk-secret"
    assert model.requests[0] == {
        "model": "m1",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "web_fetch",
                            "arguments": '{"url":"https://example.com/"}',
                        },
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "web_search", "arguments": '{"query":"q"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "page"},
            {"role": "tool", "tool_call_id": "c2", "content": "oops"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "web_fetch",
                    "description": "Fetch.",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "max_tokens": 100,
        "temperature": 0.5,
    }


async def test_openai_final_round_forbids_tools(
    fake_model: ModelFactory, http: aiohttp.ClientSession
) -> None:
    model = await fake_model("openai", [text("done")])
    reply = await client(model, http).complete(RECORDS[:2], TOOLS, final=True)
    assert (reply.content, reply.tool_calls) == ("done", ())
    assert model.requests[0]["tool_choice"] == "none"


async def test_openai_without_tools_sends_no_tools_key(
    fake_model: ModelFactory, http: aiohttp.ClientSession
) -> None:
    model = await fake_model("openai", [text("done")])
    await client(model, http).complete(RECORDS[1:2], [], final=False)
    assert "tools" not in model.requests[0] and "tool_choice" not in model.requests[0]


async def test_anthropic_request_shape_and_reply(
    fake_model: ModelFactory, http: aiohttp.ClientSession
) -> None:
    model = await fake_model(
        "anthropic",
        [{"text": "Let me look.", "calls": [("web_fetch", {"url": "https://x.example/"})]}],
    )
    reply = await client(model, http).complete(RECORDS, TOOLS, final=True)
    assert reply.content == "Let me look."
    assert reply.tool_calls == (ToolCall("call_1", "web_fetch", '{"url": "https://x.example/"}'),)
    assert model.paths == ["/v1/messages"]
    assert model.headers[0]["x-api-key"] == "sk-secret"
    assert model.headers[0]["anthropic-version"] == "2023-06-01"
    assert model.requests[0] == {
        "model": "m1",
        "max_tokens": 4096,
        "system": "be brief",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "c1",
                        "name": "web_fetch",
                        "input": {"url": "https://example.com/"},
                    },
                    {"type": "tool_use", "id": "c2", "name": "web_search", "input": {"query": "q"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "page"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "c2",
                        "content": "oops",
                        "is_error": True,
                    },
                ],
            },
        ],
        "tools": [
            {"name": "web_fetch", "description": "Fetch.", "input_schema": {"type": "object"}}
        ],
        "tool_choice": {"type": "none"},
    }


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_error_status_is_a_model_failure_without_the_key(
    api: str, fake_model: ModelFactory, http: aiohttp.ClientSession
) -> None:
    model = await fake_model(api, [failure(429, "rate limited\n\x1b[31m")])
    with pytest.raises(ModelFailure) as caught:
        await client(model, http).complete(RECORDS[1:2], [])
    path = "/chat/completions" if api == "openai" else "/v1/messages"
    assert caught.value.message == (
        f"model writer: {model.base_url}{path} answered HTTP 429: rate "
        f"limited\\u{{000a}}\\u{{001b}}[31m"
    )
    assert "sk-secret" not in caught.value.message


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("not json", "answered with something that is not JSON"),
        ('{"choices": []}', "malformed response from {url} (list index out of range)"),
    ],
)
async def test_bad_bodies_are_model_failures(
    body: str, problem: str, http: aiohttp.ClientSession, fake_model: ModelFactory
) -> None:
    model = await fake_model("openai", [{"status": 200, "body": body}])
    url = f"{model.base_url}/chat/completions"
    with pytest.raises(ModelFailure) as caught:
        await client(model, http).complete(RECORDS[1:2], [])
    expected = problem.format(url=url)
    if "not JSON" in problem:
        expected = f"{url} {problem}"
    assert caught.value.message == f"model writer: {expected}"


async def test_unreachable_endpoint(http: aiohttp.ClientSession) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    endpoint = ModelEndpoint(api="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m")
    with pytest.raises(ModelFailure) as caught:
        await ChatClient(endpoint, http, role="writer").complete(RECORDS[1:2], [])
    assert caught.value.message == (
        f"model writer: cannot reach http://127.0.0.1:{port}/v1/chat/completions "
        f"(ClientConnectorError)"
    )


async def test_a_silent_endpoint_times_out(http: aiohttp.ClientSession) -> None:
    release = asyncio.Event()

    async def hang(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="{}")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", hang)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    endpoint = ModelEndpoint(
        api="openai", base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=0.2
    )
    try:
        with pytest.raises(ModelFailure) as caught:
            await ChatClient(endpoint, http, role="writer").complete(RECORDS[1:2], [])
    finally:
        release.set()
        await runner.cleanup()
    assert caught.value.message == (
        f"model writer: http://127.0.0.1:{port}/v1/chat/completions did not answer within 0.2 "
        f"seconds"
    )


def test_endpoint_validation_and_repr() -> None:
    endpoint = ModelEndpoint(
        api="openai", base_url="https://api.example/v1", model="m", api_key="sk-x"
    )
    assert "sk-x" not in repr(endpoint)
    assert endpoint.url == "https://api.example/v1/chat/completions"
    assert (
        ModelEndpoint(api="anthropic", base_url="https://a.example/", model="c").url
        == "https://a.example/v1/messages"
    )
    with pytest.raises(
        ValueError, match=r"ModelEndpoint\.api must be 'openai' or 'anthropic', not 'gemini'"
    ):
        ModelEndpoint(api="gemini", base_url="https://x", model="m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="base_url must be an http"):
        ModelEndpoint(api="openai", base_url="ftp://x", model="m")


@dataclass(frozen=True)
class Provider:
    name: str
    api: str
    base_url: str
    api_key_env: str | None


@dataclass
class Config:
    models: dict[str, str] = field(default_factory=dict)
    providers: dict[str, Provider] = field(
        default_factory=lambda: {
            "openai": Provider("openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
            "anthropic": Provider(
                "anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"
            ),
            "local": Provider("local", "openai", "http://127.0.0.1:8080/v1", None),
        }
    )

    def model_provider(self, name: str) -> Provider:
        if name not in self.providers:
            raise ValueError(f"unknown model provider {name!r}")
        return self.providers[name]


def test_endpoints_from_config() -> None:
    config = Config(models={"writer": "anthropic:claude-x", "researcher": "local:qwen"})
    endpoints = endpoints_from_config(config, env={"ANTHROPIC_API_KEY": "k1"})
    assert endpoints == {
        "writer": ModelEndpoint(
            api="anthropic", base_url="https://api.anthropic.com", model="claude-x", api_key="k1"
        ),
        "researcher": ModelEndpoint(
            api="openai", base_url="http://127.0.0.1:8080/v1", model="qwen"
        ),
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "openai:gpt",
            "model role writer: model provider openai needs its key in the OPENAI_API_KEY "
            "environment variable, which is not set",
        ),
        (
            "gpt",
            "model role writer: model 'gpt' must be written PROVIDER:MODEL, as openai:gpt-4o-mini",
        ),
        ("nope:m", "model role writer: unknown model provider 'nope'"),
    ],
)
def test_endpoints_from_config_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        endpoints_from_config(Config(models={"writer": spec}), env={})
    assert str(caught.value) == message


def test_endpoints_from_the_real_configuration(tmp_path: Any) -> None:
    from runvil._faces.config import load_config

    env = {"OPENAI_API_KEY": "k2", "XDG_CONFIG_HOME": str(tmp_path)}
    config = load_config({"models": {"writer": "openai:gpt-4o-mini"}}, env=env, cwd=tmp_path)
    assert endpoints_from_config(config, env=env) == {
        "writer": ModelEndpoint(
            api="openai", base_url="https://api.openai.com/v1", model="gpt-4o-mini", api_key="k2"
        )
    }
