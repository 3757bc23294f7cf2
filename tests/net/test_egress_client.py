"""The one egress client above its transport: read plans, caps, codings and the typed errors,
and the response-level mock transport the search providers and model clients are tested with.

The guard below the transport (what may be dialled) is tested against loopback servers in
tests/web and tests/prompts; nothing here opens a socket."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from yarl import URL

from runvil._errors import ToolErrorKind
from runvil._net import PUBLIC_WEB, DnsError
from runvil._net.client import EgressClient, Head, ReadPlan
from runvil._net.decoding import UnsupportedEncoding
from runvil._net.errors import BodyTooLarge, BodyUnreadable, ConnectFailed, NetworkError
from runvil._net.mock import MockRequest, MockResponse, MockTransport
from runvil.prompts._lua import ModelFailure
from runvil.prompts._models import ChatClient, ModelEndpoint, ModelTransport
from runvil.web._search.egress import Egress
from runvil.web._search.provider import ProviderError, SearchRequest
from runvil.web._search.providers.brave import BraveProvider
from runvil.web._search.providers.searxng import SearxngProvider

URL_ = URL("https://example.com/x")


def answering(response: MockResponse) -> MockTransport:
    return MockTransport(lambda request: response)


async def test_a_body_is_read_whole_and_the_connection_released() -> None:
    answer = MockResponse(200, {"Content-Type": "text/plain"}, chunks=[b"ab", b"cd"])
    client = EgressClient(transport=answering(answer))
    response = await client.request(PUBLIC_WEB, URL_, ReadPlan(10))
    assert (response.status, response.body, response.cut) == (200, b"abcd", False)
    assert answer.released and answer.closed


async def test_a_declared_length_over_the_cap_is_refused_before_the_body() -> None:
    answer = MockResponse(200, {"Content-Length": "11"}, body=b"x" * 11)
    with pytest.raises(BodyTooLarge):
        await EgressClient(transport=answering(answer)).request(PUBLIC_WEB, URL_, ReadPlan(10))
    assert not answer.content.at_eof() and not answer.released and answer.closed


async def test_a_decoded_body_over_the_cap_is_cut_or_refused() -> None:
    packed = gzip.compress(b"z" * 1000)
    for keep_prefix in (True, False):
        answer = MockResponse(200, {"Content-Encoding": "gzip"}, body=packed)
        client = EgressClient(transport=answering(answer))
        plan = ReadPlan(100, keep_prefix=keep_prefix)
        if keep_prefix:
            response = await client.request(PUBLIC_WEB, URL_, plan)
            assert (response.body, response.cut) == (b"z" * 100, True)
        else:
            with pytest.raises(BodyTooLarge):
                await client.request(PUBLIC_WEB, URL_, plan)
        assert not answer.released


async def test_an_unknown_coding_and_a_broken_body_are_typed_or_kept_as_none() -> None:
    coded = MockResponse(200, {"Content-Encoding": "compress"}, body=b"...")
    with pytest.raises(UnsupportedEncoding):
        await EgressClient(transport=answering(coded)).request(PUBLIC_WEB, URL_, ReadPlan(10))
    broken = MockResponse(200, chunks=[b"ab", ConnectionResetError()])
    with pytest.raises(BodyUnreadable) as caught:
        await EgressClient(transport=answering(broken)).request(PUBLIC_WEB, URL_, ReadPlan(10))
    assert caught.value.cause == "ConnectionResetError"
    again = MockResponse(500, chunks=[b"ab", ConnectionResetError()])
    kept = await EgressClient(transport=answering(again)).request(
        PUBLIC_WEB, URL_, ReadPlan(10, keep_unreadable=True)
    )
    assert (kept.status, kept.body) == (500, None)


async def test_a_judge_sees_the_head_and_may_skip_the_body() -> None:
    seen: list[int] = []

    def judge(head: Head) -> ReadPlan:
        seen.append(head.status)
        return ReadPlan(0, read=False)

    answer = MockResponse(302, {"Location": "/y"}, body=b"moved")
    response = await EgressClient(transport=answering(answer)).request(PUBLIC_WEB, URL_, judge)
    assert seen == [302] and response.body is None
    assert response.headers["Location"] == "/y"
    assert not answer.released and answer.closed  # the body was not over: not pooled


async def test_the_mock_records_what_was_sent() -> None:
    transport = answering(MockResponse(204))
    await EgressClient(transport=transport).request(
        PUBLIC_WEB, URL_, ReadPlan(10), method="POST", headers={"X-A": "1"}, body=b"{}"
    )
    [request] = transport.requests
    assert (request.method, str(request.url), request.headers, request.body) == (
        "POST", "https://example.com/x", {"X-A": "1"}, b"{}"
    )
    assert (request.host, request.port) == ("example.com", 443)


# --- a search provider over the mock ----------------------------------------------------------


async def test_a_keyed_provider_over_the_mock_transport() -> None:
    def brave(request: MockRequest) -> MockResponse:
        assert request.url.query["q"] == "runvil"
        assert request.headers["X-Subscription-Token"] == "k-secret"
        rows = {"web": {"results": [{"url": "https://a.example/", "title": "A"}]}}
        return MockResponse(200, {"Content-Type": "application/json"}, json.dumps(rows).encode())

    provider = BraveProvider("k-secret", transport=MockTransport(brave))
    [row] = await provider.search(SearchRequest(query="runvil"))
    assert (row.url, row.title) == ("https://a.example/", "A")


async def test_a_provider_error_body_is_quoted_without_the_key() -> None:
    echo = MockResponse(401, body=b'{"error": {"detail": "bad key k-secret"}}')
    provider = BraveProvider("k-secret", transport=answering(echo))
    with pytest.raises(ProviderError) as caught:
        await provider.search(SearchRequest(query="q"))
    assert "k-secret" not in caught.value.message
    assert caught.value.message.startswith("backend returned 401: ")


async def test_a_network_failure_under_the_mock_is_the_providers_text() -> None:
    def down(request: MockRequest) -> MockResponse:
        raise ConnectFailed("ClientConnectorError")

    egress = Egress(["example.com:443"], transport=MockTransport(down))
    with pytest.raises(ProviderError) as caught:
        await egress.send("GET", "https://example.com/")
    assert (caught.value.kind, caught.value.message) == (ToolErrorKind.Transport, "request failed")


async def test_a_self_hosted_provider_over_the_mock_transport() -> None:
    def searxng(request: MockRequest) -> MockResponse:
        assert (request.url.path, request.url.query["format"]) == ("/search", "json")
        rows = {"results": [{"url": "https://b.example/", "title": "B", "content": "b"}]}
        return MockResponse(200, {"Content-Type": "application/json"}, json.dumps(rows).encode())

    provider = SearxngProvider("https://search.example/", transport=MockTransport(searxng))
    [row] = await provider.search(SearchRequest(query="q"))
    assert (row.url, row.title) == ("https://b.example/", "B")


# --- a model client over the mock -------------------------------------------------------------


def model(transport: MockTransport) -> ChatClient:
    endpoint = ModelEndpoint(
        api="openai", base_url="https://models.example/v1", model="m", api_key="sk-secret"
    )
    return ChatClient(endpoint, ModelTransport(transport=transport), role="writer")


async def test_a_model_reply_over_the_mock_transport() -> None:
    def reply(request: MockRequest) -> MockResponse:
        sent: Any = json.loads(request.body or b"")
        assert sent["model"] == "m" and request.headers["Authorization"] == "Bearer sk-secret"
        body = {"choices": [{"message": {"content": "hi"}}]}
        return MockResponse(200, {"Content-Type": "application/json"}, json.dumps(body).encode())

    transport = MockTransport(reply)
    answer = await model(transport).complete([{"role": "user", "content": "hello"}], [])
    assert answer.content == "hi"
    assert str(transport.requests[0].url) == "https://models.example/v1/chat/completions"


@pytest.mark.parametrize(
    ("failure", "problem"),
    [
        (DnsError("models.example"), "cannot reach {url} (DnsError)"),
        (ConnectFailed("ClientConnectorError"), "cannot reach {url} (ClientConnectorError)"),
    ],
)
async def test_a_model_failure_over_the_mock_transport(
    failure: Exception, problem: str
) -> None:
    def fail(request: MockRequest) -> MockResponse:
        raise failure

    with pytest.raises(ModelFailure) as caught:
        await model(MockTransport(fail)).complete([{"role": "user", "content": "x"}], [])
    url = "https://models.example/v1/chat/completions"
    assert caught.value.message == "model writer: " + problem.format(url=url)


async def test_a_model_error_answer_is_quoted_without_the_key() -> None:
    echo = MockResponse(401, body=b"no such key sk-secret")
    with pytest.raises(ModelFailure) as caught:
        await model(answering(echo)).complete([{"role": "user", "content": "x"}], [])
    assert caught.value.message == (
        "model writer: https://models.example/v1/chat/completions answered HTTP 401: "
        "no such key [redacted]"
    )


def test_every_network_error_names_its_cause() -> None:
    assert NetworkError("OSError").cause == "OSError"
