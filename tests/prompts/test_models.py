"""The two chat clients against scripted loopback servers: request shapes, replies, failures."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import brotli
import pytest
from aiohttp import web

from runvil._net import connector
from runvil._net.connector import _checked_socket as checked_socket
from runvil.prompts import ModelEndpoint, endpoints_from_config
from runvil.prompts import _models as models
from runvil.prompts._lua import ModelFailure
from runvil.prompts._models import MAX_REPLY_BYTES, ChatClient, ModelTransport, ToolCall
from tests.fixtures.internet import DEFAULT_NAMES, FakeInternet
from tests.prompts.conftest import ModelFactory
from tests.prompts.fake_models import FakeModel, Turn, calls, failure, text

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
async def http() -> AsyncIterator[ModelTransport]:
    async with ModelTransport() as transport:
        yield transport


def client(model: Any, http: ModelTransport, **settings: Any) -> ChatClient:
    endpoint = ModelEndpoint(
        api=model.api, base_url=model.base_url, model="m1", api_key="sk-secret"
    )
    return ChatClient(endpoint, http, role="writer", settings=settings)


async def test_openai_request_shape_and_reply(
    fake_model: ModelFactory, http: ModelTransport
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
    fake_model: ModelFactory, http: ModelTransport
) -> None:
    model = await fake_model("openai", [text("done")])
    reply = await client(model, http).complete(RECORDS[:2], TOOLS, final=True)
    assert (reply.content, reply.tool_calls) == ("done", ())
    assert model.requests[0]["tool_choice"] == "none"


async def test_openai_without_tools_sends_no_tools_key(
    fake_model: ModelFactory, http: ModelTransport
) -> None:
    model = await fake_model("openai", [text("done")])
    await client(model, http).complete(RECORDS[1:2], [], final=False)
    assert "tools" not in model.requests[0] and "tool_choice" not in model.requests[0]


async def test_anthropic_request_shape_and_reply(
    fake_model: ModelFactory, http: ModelTransport
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
    api: str, fake_model: ModelFactory, http: ModelTransport
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
        ("[" * 100_000 + "]" * 100_000, "answered with something that is not JSON"),
        ('{"choices": []}', "malformed response from {url} (list index out of range)"),
    ],
)
async def test_bad_bodies_are_model_failures(
    body: str, problem: str, http: ModelTransport, fake_model: ModelFactory
) -> None:
    model = await fake_model("openai", [{"status": 200, "body": body}])
    url = f"{model.base_url}/chat/completions"
    with pytest.raises(ModelFailure) as caught:
        await client(model, http).complete(RECORDS[1:2], [])
    expected = problem.format(url=url)
    if "not JSON" in problem:
        expected = f"{url} {problem}"
    assert caught.value.message == f"model writer: {expected}"


async def test_unreachable_endpoint(http: ModelTransport) -> None:
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


async def test_a_silent_endpoint_times_out(http: ModelTransport) -> None:
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


# --- the shared guarded egress ----------------------------------------------------------------

MODEL_HOST = "models.example"


async def served_model(
    internet: FakeInternet, api: str, script: list[Turn], *, ip: str = "34.120.0.30"
) -> FakeModel:
    """A scripted model behind the fake internet: TLS, a name, routed like any public site."""
    model = FakeModel(api, list(script))  # type: ignore[arg-type]
    app = web.Application()
    app.router.add_post("/v1/chat/completions", model._handle)
    app.router.add_post("/v1/messages", model._handle)
    await internet.serve(app, hosts=(MODEL_HOST,), ip=ip, names=(*DEFAULT_NAMES, MODEL_HOST))
    model.base_url = f"https://{MODEL_HOST}/v1" if api == "openai" else f"https://{MODEL_HOST}"
    return model


async def test_a_model_round_dials_only_approved_addresses(
    internet: FakeInternet, monkeypatch: pytest.MonkeyPatch
) -> None:
    await served_model(internet, "openai", [text("one")], ip="34.120.0.30")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    internet.dns[MODEL_HOST] = ["34.120.0.99", "34.120.0.30"]
    internet.routes[("34.120.0.99", 443)] = ("127.0.0.1", dead_port)
    dialled: list[tuple[str, int]] = []

    def spy(addr_info: Any) -> socket.socket:
        dialled.append(tuple(addr_info[4][:2]))
        return checked_socket(addr_info)

    monkeypatch.setattr(connector, "_checked_socket", spy)
    endpoint = ModelEndpoint(api="openai", base_url=f"https://{MODEL_HOST}/v1", model="m")
    async with ModelTransport(internet.network()) as transport:
        reply = await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert reply.content == "one"
    # Every socket went through the same last-line check as a fetch's, to the approved
    # addresses in answer order (the first one is dead), routed by the network seam.
    assert internet.dials == [("34.120.0.99", 443), ("34.120.0.30", 443)]
    assert dialled == [internet.routes[("34.120.0.99", 443)], internet.routes[("34.120.0.30", 443)]]


async def test_a_pooled_model_connection_is_not_reused_once_the_name_moved(
    internet: FakeInternet,
) -> None:
    first = await served_model(internet, "openai", [text("first"), text("again")], ip="34.120.0.30")
    endpoint = ModelEndpoint(api="openai", base_url=first.base_url, model="m")
    async with ModelTransport(internet.network()) as transport:
        client = ChatClient(endpoint, transport, role="writer")
        assert (await client.complete(RECORDS[1:2], [])).content == "first"
        assert (await client.complete(RECORDS[1:2], [])).content == "again"
        second = await served_model(internet, "openai", [text("moved")], ip="34.120.0.31")
        assert internet.dns[MODEL_HOST] == ["34.120.0.31"]
        assert (await client.complete(RECORDS[1:2], [])).content == "moved"
    assert (len(first.requests), len(second.requests)) == (2, 1)
    assert internet.lookups == [MODEL_HOST] * 3, "every round resolves the name again"


async def test_a_model_endpoint_is_never_redirected(internet: FakeInternet) -> None:
    async def moved(request: web.Request) -> web.Response:
        return web.Response(status=307, headers={"Location": "https://other.example/v1/x"})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", moved)
    await internet.serve(
        app, hosts=(MODEL_HOST,), ip="34.120.0.30", names=(*DEFAULT_NAMES, MODEL_HOST)
    )
    internet.dns["other.example"] = ["34.120.0.40"]
    endpoint = ModelEndpoint(api="openai", base_url=f"https://{MODEL_HOST}/v1", model="m")
    async with ModelTransport(internet.network()) as transport:
        with pytest.raises(ModelFailure) as caught:
            await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert caught.value.message == (
        f"model writer: https://{MODEL_HOST}/v1/chat/completions answered HTTP 307: (empty body)"
    )
    assert internet.lookups == [MODEL_HOST]


async def test_a_compressed_reply_is_decoded() -> None:
    reply = json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": "squeezed " * 1000}}]}
    ).encode()

    async def compressed(request: web.Request) -> web.Response:
        return web.Response(body=brotli.compress(reply), headers={"Content-Encoding": "br"})

    served = await plain_server(compressed)
    endpoint = ModelEndpoint(api="openai", base_url=f"{served}/v1", model="m")
    async with ModelTransport() as transport:
        answer = await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert answer.content == "squeezed " * 1000


async def test_a_reply_over_the_cap_is_refused_with_bounded_memory() -> None:
    # 64 KB of gzip that inflate to 64 MiB: read as it arrives, it is refused at the 16 MiB cap.
    bomb = gzip.compress(b" " * (64 * 1024 * 1024), 9)

    async def inflating(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip"})

    served = await plain_server(inflating)
    url = f"{served}/v1/chat/completions"
    endpoint = ModelEndpoint(api="openai", base_url=f"{served}/v1", model="m")
    tracemalloc.start()
    try:
        async with ModelTransport() as transport:
            with pytest.raises(ModelFailure) as caught:
                await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.message == f"model writer: {url} answered with more than 16777216 bytes"
    assert peak < MAX_REPLY_BYTES + 8 * 1024 * 1024, f"a refused reply held {peak} bytes"


@pytest.mark.parametrize("declared", [True, False])
async def test_a_reply_over_the_cap_is_refused(
    declared: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "MAX_REPLY_BYTES", 1024)

    async def big(request: web.Request) -> web.StreamResponse:
        if declared:
            return web.Response(body=b"x" * 1025)
        response = web.StreamResponse()
        response.enable_chunked_encoding()
        await response.prepare(request)
        for _ in range(3):
            await response.write(b"x" * 600)
        await response.write_eof()
        return response

    served = await plain_server(big)
    endpoint = ModelEndpoint(api="openai", base_url=f"{served}/v1", model="m")
    async with ModelTransport() as transport:
        with pytest.raises(ModelFailure) as caught:
            await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert caught.value.message == (
        f"model writer: {served}/v1/chat/completions answered with more than 1024 bytes"
    )


_plain_runners: list[web.AppRunner] = []


async def plain_server(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
) -> str:
    """A loopback plain-HTTP model endpoint answering every POST with ``handler``; its root URL.
    Stopped by the ``_stop_plain_servers`` fixture."""
    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    _plain_runners.append(runner)
    return f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture(autouse=True)
async def _stop_plain_servers() -> AsyncIterator[None]:
    yield
    while _plain_runners:
        await _plain_runners.pop().cleanup()


# --- secrets in what an endpoint echoes --------------------------------------------------------

LONG_KEY = "sk-model-key-0123456789abcdef"


def user_text(body: dict[str, Any], api: str) -> str:
    content = body["messages"][-1]["content"]
    return str(content if api == "openai" else content[0]["text"])


def sent_key(request: web.Request, api: str) -> str:
    if api == "openai":
        return request.headers["Authorization"].removeprefix("Bearer ")
    return request.headers["x-api-key"]


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_no_cut_leaves_a_prefix_of_the_key(api: str) -> None:
    # The endpoint echoes the conversation, then the key it was sent; the length of the
    # conversation decides where the 300-character quote is cut.
    async def echo(request: web.Request) -> web.Response:
        body = await request.json()
        return web.Response(
            status=400, text=f"{user_text(body, api)} key={sent_key(request, api)} " + "y" * 400
        )

    served = await plain_server(echo)
    base = f"{served}/v1" if api == "openai" else served
    endpoint = ModelEndpoint(api=api, base_url=base, model="m", api_key=LONG_KEY)  # type: ignore[arg-type]
    async with ModelTransport() as transport:
        client = ChatClient(endpoint, transport, role="writer")
        for kept in range(1, len(LONG_KEY)):
            said = "x" * (300 - len(" key=") - kept)
            with pytest.raises(ModelFailure) as caught:
                await client.complete([{"role": "user", "content": said}], [])
            quoted = caught.value.message.split(" answered HTTP 400: ", 1)[1]
            assert quoted == (f"{said} key=[redacted] " + "y" * 400)[:300] + "...", kept
            assert LONG_KEY[:4] not in caught.value.message


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_a_trailing_partial_key_is_redacted(api: str) -> None:
    async def shortened(request: web.Request) -> web.Response:
        return web.Response(status=401, text=f"invalid key {sent_key(request, api)[:6]}")

    served = await plain_server(shortened)
    base = f"{served}/v1" if api == "openai" else served
    endpoint = ModelEndpoint(api=api, base_url=base, model="m", api_key=LONG_KEY)  # type: ignore[arg-type]
    async with ModelTransport() as transport:
        with pytest.raises(ModelFailure) as caught:
            await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert caught.value.message == (
        f"model writer: {endpoint.url} answered HTTP 401: invalid key [redacted]"
    )


async def test_a_key_in_the_endpoint_url_is_redacted_from_messages() -> None:
    # Some gateways take the key in the URL; it must not reach a message through the URL either.
    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=500, text="down")

    served = await plain_server(failing)
    endpoint = ModelEndpoint(
        api="openai", base_url=f"{served}/{LONG_KEY}/v1", model="m", api_key=LONG_KEY
    )
    async with ModelTransport() as transport:
        with pytest.raises(ModelFailure) as caught:
            await ChatClient(endpoint, transport, role="writer").complete(RECORDS[1:2], [])
    assert caught.value.message == (
        f"model writer: {served}/[redacted]/v1/chat/completions answered HTTP 500: down"
    )


def test_tool_call_arguments_nested_past_the_parser_read_as_no_arguments() -> None:
    """Arguments a model sent nested deeper than the JSON parser goes become ``{}`` in an
    Anthropic request, like any other text that is not an argument object."""
    from runvil.prompts._models import _arguments_object

    assert _arguments_object("[" * 100_000 + "]" * 100_000) == {}
    assert _arguments_object('{"url": "https://example.com/"}') == {"url": "https://example.com/"}
