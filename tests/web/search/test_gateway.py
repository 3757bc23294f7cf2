"""The Gateway provider, exactly as seed 001 and 000 describe it."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from aiohttp import web
from multidict import CIMultiDict, CIMultiDictProxy

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.egress import EgressResponse, shared_pause
from runvil.web._search.providers import GatewayProvider
from tests.fixtures.internet import FakeInternet
from tests.web.search.conftest import RawServe, Serve, read_head

HOST = "gateway.example"
URL = f"https://{HOST}/v1/web/search"
KEY = "rvgw-test-key-5f0c3ad1e1b2"
SEED_BODY = (
    '{"query":"rust","results":[{"title":"Rust","url":"https://www.rust-lang.org/",'
    '"description":"A language.","age":"2 days ago","site_name":"www.rust-lang.org",'
    '"extra_snippets":["Fast.","Safe."]},{"title":"","url":"https://e.com","description":""}]}'
)


def gateway(internet: FakeInternet, **kwargs: Any) -> GatewayProvider:
    provider = GatewayProvider(URL, KEY, network=internet.network(), **kwargs)
    provider._egress.default_retry_wait = 0.0  # keep retries of header-less 5xx instant
    return provider


def reply(status: int, body: bytes | str, **headers: str) -> Any:
    data = body.encode() if isinstance(body, str) else body

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, body=data, headers=headers)

    return handler


async def call(internet: FakeInternet, arguments: dict[str, Any], **kwargs: Any) -> str:
    return await WebSearch(gateway(internet, **kwargs)).call(arguments)


async def failure(internet: FakeInternet, **kwargs: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call(internet, {"query": "rust"}, **kwargs)
    return caught.value


async def test_request_shape(internet: FakeInternet, serve: Serve) -> None:
    bodies: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        bodies.append(await request.json())
        return web.Response(body=SEED_BODY, content_type="application/json")

    served = await serve(HOST, handler)
    text = await call(
        internet,
        {
            "query": "rust async runtime",
            "count": 5,
            "freshness": "pw",
            "safesearch": "strict",
            "include_domains": ["example.com"],
        },
    )
    assert served.request_lines == ["POST /v1/web/search"]
    headers = served.headers[0]
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert headers["Content-Type"] == "application/json"
    assert bodies == [
        {
            "query": "rust async runtime",
            "count": 5,
            "freshness": "pw",
            "safesearch": "strict",
            "include_domains": ["example.com"],
        }
    ]
    # The include filter is enforced here too: only example.com rows survive.
    assert json.loads(text)["results"] == []


async def test_absent_and_empty_arguments_are_left_out(
    internet: FakeInternet, serve: Serve
) -> None:
    bodies: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        bodies.append(await request.json())
        return web.Response(body='{"query":"rust","results":[]}')

    await serve(HOST, handler)
    await call(internet, {"query": "rust", "include_domains": [], "exclude_domains": []})
    await call(internet, {"query": "rust", "country": "us", "search_lang": "en"})
    assert bodies == [{"query": "rust"}, {"query": "rust", "country": "us", "search_lang": "en"}]


async def test_seed_success_body(internet: FakeInternet, serve: Serve) -> None:
    await serve(HOST, reply(200, SEED_BODY))
    assert await call(internet, {"query": "rust"}) == SEED_BODY


async def test_empty_results(internet: FakeInternet, serve: Serve) -> None:
    await serve(HOST, reply(200, '{"query":"rust","results":[]}'))
    assert await call(internet, {"query": "rust"}) == '{"query":"rust","results":[]}'


async def test_extra_fields_are_ignored(internet: FakeInternet, serve: Serve) -> None:
    body = (
        '{"query":"other","took_ms":12,"results":[{"title":"T","url":"https://e.com",'
        '"description":"D","score":0.9,"age":null,"extra_snippets":[]}]}'
    )
    await serve(HOST, reply(200, body))
    assert await call(internet, {"query": "rust async runtime"}) == (
        '{"query":"rust async runtime","results":[{"title":"T","url":"https://e.com",'
        '"description":"D"}]}'
    )


async def test_domain_filters_are_applied_by_the_provider(
    internet: FakeInternet, serve: Serve
) -> None:
    rows = [
        {"title": "a", "url": "https://example.com/a", "description": ""},
        {"title": "b", "url": "https://docs.example.com/b", "description": ""},
        {"title": "c", "url": "https://notexample.com/c", "description": ""},
        {"title": "d", "url": "https://other.org/d", "description": ""},
    ]
    await serve(HOST, reply(200, json.dumps({"query": "q", "results": rows})))
    kept = json.loads(await call(internet, {"query": "q", "include_domains": ["Example.COM"]}))
    assert [r["title"] for r in kept["results"]] == ["a", "b"]
    dropped = json.loads(
        await call(internet, {"query": "q", "exclude_domains": ["example.com", "other.org."]})
    )
    assert [r["title"] for r in dropped["results"]] == ["c"]


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (503, b"", "web_search: backend returned 503: (empty body)"),
        (502, b"upstream down", "web_search: backend returned 502: upstream down"),
        (
            500,
            b"line1\nline2\tx\x07\r\x1b[31m\x7f",
            "web_search: backend returned 500: line1\\nline2\\tx\\u{0007}\\r\\u{001b}[31m\\u{007f}",
        ),
        (
            401,
            b'{"error":"invalid gateway key"}',
            'web_search: backend returned 401: {"error":"invalid gateway key"}',
        ),
        (404, "ünïcode body".encode(), "web_search: backend returned 404: ünïcode body"),
        (418, b"\xff\xfebad", "web_search: backend returned 418: \ufffd\ufffdbad"),
        (301, b"moved", "web_search: backend returned 301: moved"),
    ],
)
async def test_error_statuses(
    internet: FakeInternet, serve: Serve, status: int, body: bytes, message: str
) -> None:
    await serve(HOST, reply(status, body))
    error = await failure(internet)
    assert (error.kind, str(error)) == (ToolErrorKind.Backend, message)


async def test_error_body_is_cut_to_2000_bytes_on_a_character_boundary(
    internet: FakeInternet, serve: Serve
) -> None:
    body = ("a" * 1999 + "é" + "z" * 5000).encode()  # é straddles bytes 2000 and 2001
    await serve(HOST, reply(500, body))
    error = await failure(internet)
    assert str(error) == "web_search: backend returned 500: " + "a" * 1999
    await serve(HOST, reply(500, b"b" * 2500))
    assert str(await failure(internet)) == "web_search: backend returned 500: " + "b" * 2000


async def test_an_unreadable_error_body(internet: FakeInternet, raw_serve: RawServe) -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 500\r\n\r\nhalf")
        await writer.drain()

    await raw_serve(HOST, cut)
    error = await failure(internet)
    assert (error.kind, str(error)) == (
        ToolErrorKind.Backend,
        "web_search: backend returned 500, and its error body could not be read",
    )


async def test_429_is_retried_once(internet: FakeInternet, serve: Serve) -> None:
    answers = [(429, '{"error":"rate limited"}'), (200, SEED_BODY)]

    async def handler(request: web.Request) -> web.Response:
        status, body = answers.pop(0)
        return web.Response(status=status, body=body, headers={"Retry-After": "0"})

    served = await serve(HOST, handler)
    assert await call(internet, {"query": "rust"}) == SEED_BODY
    assert len(served.request_lines) == 2


async def test_a_persistent_429_fails(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, reply(429, '{"error":"rate limited"}', **{"Retry-After": "0"}))
    error = await failure(internet)
    assert str(error) == 'web_search: backend returned 429: {"error":"rate limited"}'
    assert len(served.request_lines) == 2


async def test_size_cap(internet: FakeInternet, serve: Serve) -> None:
    exact = '{"query":"rust","results":[]}'
    exact += " " * (262_144 - len(exact))
    await serve(HOST, reply(200, exact))
    assert await call(internet, {"query": "rust"}) == '{"query":"rust","results":[]}'
    await serve(HOST, reply(200, exact + " "))
    error = await failure(internet)
    assert (error.kind, str(error)) == (
        ToolErrorKind.Backend,
        "web_search: response body exceeded 262144 bytes",
    )


async def test_size_is_checked_before_utf8_and_shape(internet: FakeInternet, serve: Serve) -> None:
    await serve(HOST, reply(200, b"\xff" * 262_145))
    assert str(await failure(internet)) == "web_search: response body exceeded 262144 bytes"


async def test_invalid_utf8(internet: FakeInternet, serve: Serve) -> None:
    await serve(HOST, reply(200, b'{"query":"rust","results":[{"title":"\xff","url":"https://a"}]}'))
    error = await failure(internet)
    assert (error.kind, str(error)) == (
        ToolErrorKind.Backend,
        "web_search: response body was not valid UTF-8",
    )


@pytest.mark.parametrize(
    "body",
    [
        "",
        "not json",
        "[]",
        '"results"',
        '{"query":"rust"}',
        '{"results":{}}',
        '{"results":null}',
        '{"results":[{"title":"x"}]}',
        '{"results":[{"title":"x","url":5}]}',
        '{"results":["https://a"]}',
        '{"results":[{"url":"https://a","title":7}]}',
        '{"results":[{"url":"https://a","extra_snippets":"x"}]}',
        '{"results":[{"url":"https://a","extra_snippets":[1]}]}',
    ],
)
async def test_malformed_bodies(internet: FakeInternet, serve: Serve, body: str) -> None:
    await serve(HOST, reply(200, body))
    error = await failure(internet)
    assert error.kind is ToolErrorKind.Backend
    assert str(error) == "web_search: malformed search response"


async def test_blank_url_row(internet: FakeInternet, serve: Serve) -> None:
    body = '{"results":[{"title":"a","url":"https://a"},{"title":"b","url":"  "}]}'
    await serve(HOST, reply(200, body))
    error = await failure(internet)
    assert (error.kind, str(error)) == (
        ToolErrorKind.Backend,
        "web_search: malformed search response: result 1 has an empty url",
    )


async def test_unreachable_gateway_is_request_failed(internet: FakeInternet) -> None:
    internet.dns[HOST] = ["34.120.0.30"]  # routed to a port nothing listens on
    closed = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = closed.sockets[0].getsockname()[1]
    closed.close()
    await closed.wait_closed()
    internet.routes[("34.120.0.30", 443)] = ("127.0.0.1", port)
    error = await failure(internet)
    assert (error.kind, str(error)) == (ToolErrorKind.Transport, "web_search: request failed")


async def test_a_stalled_gateway_fails_within_the_deadline(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        if release.is_set():
            return
        await release.wait()

    await raw_serve(HOST, stall)
    error = await failure(internet, timeout=0.5)
    release.set()
    assert (error.kind, str(error)) == (ToolErrorKind.Transport, "web_search: request failed")


async def test_a_body_that_stalls_mid_read(internet: FakeInternet, raw_serve: RawServe) -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"results\":")
        await writer.drain()
        await release.wait()

    await raw_serve(HOST, stall)
    error = await failure(internet, timeout=0.5)
    release.set()
    assert (error.kind, str(error)) == (
        ToolErrorKind.Transport,
        "web_search: reading response failed",
    )


def test_the_default_deadline_is_30_seconds() -> None:
    assert GatewayProvider(URL, KEY)._egress.timeout == 30.0


def test_configuration_is_checked_up_front() -> None:
    with pytest.raises(ValueError):
        GatewayProvider("http://gateway.example/", KEY)  # a key never travels in clear
    with pytest.raises(ValueError):
        GatewayProvider("https://u:p@gateway.example/", KEY)
    with pytest.raises(ValueError):
        GatewayProvider("not a url", KEY)
    with pytest.raises(ValueError):
        GatewayProvider(URL, "")
    provider = GatewayProvider("https://gateway.example:8443/api/search", KEY)
    assert list(provider.endpoints) == ["gateway.example:8443"]
    assert KEY not in repr(provider)


async def test_the_key_never_leaks(
    internet: FakeInternet, serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(status=401, text=f"bad key {request.headers['Authorization']}")

    served = await serve(HOST, echo)
    with caplog.at_level(logging.DEBUG):
        error = await failure(internet)
    assert str(error) == "web_search: backend returned 401: bad key Bearer [redacted]"
    assert KEY not in str(error) and KEY not in repr(error)
    assert KEY not in str(error.__cause__) and KEY not in repr(error.__cause__)
    assert KEY not in caplog.text
    assert all(KEY not in line for line in served.request_lines)


class FakePause:
    """A fleet's shared pause, in memory: what another replica noted, and what this one notes."""

    def __init__(self, held: tuple[float, EgressResponse] | None = None) -> None:
        self.held = held
        self.noted: list[tuple[float, int, bytes | None]] = []

    async def pending(self) -> tuple[float, EgressResponse] | None:
        return self.held

    async def pause(self, seconds: float, response: EgressResponse) -> None:
        self.noted.append((seconds, response.status, response.body))


def vendor_429(retry_after: str) -> EgressResponse:
    headers = CIMultiDictProxy(CIMultiDict({"Retry-After": retry_after}))
    return EgressResponse(429, headers, b'{"error":"rate limited"}')


async def in_fleet(pause: FakePause, search: Any) -> Any:
    token = shared_pause.set(pause)
    try:
        return await search
    finally:
        shared_pause.reset(token)


async def test_a_fleet_notes_the_vendors_pause(internet: FakeInternet, serve: Serve) -> None:
    answers = [(429, '{"error":"rate limited"}'), (200, SEED_BODY)]

    async def handler(request: web.Request) -> web.Response:
        status, body = answers.pop(0)
        return web.Response(status=status, body=body, headers={"Retry-After": "0.2"})

    await serve(HOST, handler)
    pause = FakePause()
    assert await in_fleet(pause, call(internet, {"query": "rust"})) == SEED_BODY
    assert pause.noted == [(0.2, 429, b'{"error":"rate limited"}')]


async def test_another_replicas_pause_is_waited_out(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, reply(200, SEED_BODY))
    pause = FakePause((0.05, vendor_429("1")))
    assert await in_fleet(pause, call(internet, {"query": "rust"})) == SEED_BODY
    assert served.request_lines == ["POST /v1/web/search"]
    assert pause.noted == []


async def test_a_pause_past_the_deadline_answers_as_the_vendor_did(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve(HOST, reply(200, SEED_BODY))
    pause = FakePause((8.0, vendor_429("8")))
    with pytest.raises(ToolError) as caught:
        await in_fleet(pause, call(internet, {"query": "rust"}, timeout=5.0))
    # The message one process gives for a 429 it has no time to retry; nothing was sent.
    assert str(caught.value) == 'web_search: backend returned 429: {"error":"rate limited"}'
    assert served.request_lines == []
