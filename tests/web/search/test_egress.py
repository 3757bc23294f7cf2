"""The endpoint-locked client every provider uses."""

from __future__ import annotations

import asyncio
import gzip
import logging
import socket
import time
import tracemalloc
import zlib
from collections.abc import Callable
from email.utils import formatdate
from typing import Any

import brotli
import pytest
from aiohttp import web
from backports import zstd

from runvil._errors import ToolErrorKind
from runvil._net import DialPermit, DialRefused, connector, permitted
from runvil._net.client import GuardedTransport
from runvil._net.connector import _checked_socket as checked_socket
from runvil.web import DnsError, ProviderError
from runvil.web._search.egress import Egress, retry_delay
from tests.fixtures.internet import FakeInternet
from tests.web.search.conftest import RawServe, Serve, read_head

HOST = "api.vendor.example"
ENDPOINT = f"{HOST}:443"
URL = f"https://{HOST}/v1/search"


def egress(internet: FakeInternet, **kwargs: object) -> Egress:
    options: dict[str, object] = {"network": internet.network(), "timeout": 5.0}
    options.update(kwargs)
    return Egress([ENDPOINT], **options)  # type: ignore[arg-type]


async def ok(request: web.Request) -> web.Response:
    return web.json_response({"ok": True}, headers={"Set-Cookie": "session=abc; Path=/"})


async def test_reaches_a_declared_endpoint(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, ok)
    client = egress(internet)
    response = await client.send("GET", URL, params={"q": "rust async runtime"})
    assert (response.status, response.body) == (200, b'{"ok": true}')
    assert served.request_lines == ["GET /v1/search?q=rust+async+runtime"]
    headers = served.headers[0]
    assert headers["Host"] == HOST
    assert headers["User-Agent"] == "runvil-search/0.1"
    assert "Cookie" not in headers
    await client.send("GET", URL)
    assert "Cookie" not in served.headers[1], "cookies are never kept"
    assert internet.lookups == [HOST, HOST], "every send resolves again"


async def test_the_host_header_names_a_non_default_port(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve(HOST, ok, port=8443)
    client = Egress([f"{HOST}:8443"], network=internet.network())
    assert (await client.send("GET", f"https://{HOST}:8443/x")).status == 200
    assert served.headers[0]["Host"] == f"{HOST}:8443"


@pytest.mark.parametrize(
    "url",
    [
        "https://other.example/v1/search",  # another host
        f"https://{HOST}:8443/v1/search",  # the right host on another port
        f"http://{HOST}:443/v1/search",  # plain http
        f"https://user:pw@{HOST}/v1/search",  # credentials in the URL
        "https://api.vendor.example.evil.example/",
    ],
)
async def test_refuses_anything_but_the_declared_endpoints(
    internet: FakeInternet, serve: Serve, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = await serve(HOST, ok)
    internet.dns["other.example"] = ["34.120.0.10"]
    with caplog.at_level(logging.WARNING, "runvil.web._search"), pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", url)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "request failed")
    assert internet.lookups == [] and internet.dials == []
    assert served.request_lines == []
    assert "not a declared endpoint" in caplog.text or "credentials" in caplog.text


@pytest.mark.parametrize(
    "answers", [["10.0.0.5"], ["127.0.0.1"], ["169.254.169.254"], ["::1"], ["fd00::1"], []]
)
async def test_applies_the_fetch_address_policy(
    internet: FakeInternet, answers: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    internet.dns[HOST] = answers
    with caplog.at_level(logging.WARNING, "runvil.web._search"), pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "request failed")
    assert internet.dials == []
    assert f"search endpoint {HOST} has no allowed address" in caplog.text


async def test_dials_only_allowed_answers_in_order(internet: FakeInternet, serve: Serve) -> None:
    await serve(HOST, ok, ip="34.120.0.10")
    internet.dns[HOST] = ["10.0.0.1", "34.120.0.10", "192.168.1.1"]
    assert (await egress(internet).send("GET", URL)).status == 200
    assert internet.dials == [("34.120.0.10", 443)]


async def test_tries_the_next_address_when_one_refuses(
    internet: FakeInternet, serve: Serve
) -> None:
    await serve(HOST, ok, ip="34.120.0.11")
    closed = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    dead_port = closed.sockets[0].getsockname()[1]
    closed.close()
    await closed.wait_closed()
    internet.dns[HOST] = ["34.120.0.99", "34.120.0.11"]
    internet.routes[("34.120.0.99", 443)] = ("127.0.0.1", dead_port)
    assert (await egress(internet).send("GET", URL)).status == 200
    assert internet.dials == [("34.120.0.99", 443), ("34.120.0.11", 443)]


async def test_private_endpoint_when_the_operator_allows_it(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve(HOST, ok, ip="192.168.1.20")
    response = await egress(internet, allow_private=True).send("GET", URL)
    assert response.status == 200
    assert served.request_lines == ["GET /v1/search"]


async def test_ip_literal_endpoint(internet: FakeInternet, serve: Serve) -> None:
    served = await serve("10.1.2.3", ok, ip="10.1.2.3", port=8443)
    client = Egress(["10.1.2.3:8443"], network=internet.network(), allow_private=True)
    assert (await client.send("GET", "https://10.1.2.3:8443/search")).status == 200
    assert internet.lookups == [], "an address needs no lookup"
    assert served.headers[0]["Host"] == "10.1.2.3:8443"
    strict = Egress(["10.1.2.3:8443"], network=internet.network())
    with pytest.raises(ProviderError):
        await strict.send("GET", "https://10.1.2.3:8443/search")


async def test_dns_failure_is_request_failed(internet: FakeInternet) -> None:
    internet.dns[HOST] = DnsError(HOST)
    with pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert e.value.message == "request failed"


async def test_a_certificate_for_another_name_is_refused(
    internet: FakeInternet, serve: Serve
) -> None:
    app = web.Application()
    app.router.add_get("/{tail:.*}", ok)
    await internet.serve(app, hosts=(HOST,), ip="34.120.0.10", names=("example.com",))
    with pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert e.value.message == "request failed"


async def test_redirects_are_never_followed(internet: FakeInternet, serve: Serve) -> None:
    async def redirect(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "https://other.example/steal"})

    served = await serve(HOST, redirect)
    internet.dns["other.example"] = ["34.120.0.10"]
    response = await egress(internet).send("GET", URL)
    assert response.status == 302
    assert internet.lookups == [HOST]
    assert served.request_lines == ["GET /v1/search"]


async def test_proxy_settings_in_the_environment_are_ignored(
    internet: FakeInternet, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    await serve(HOST, ok)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    assert (await egress(internet).send("GET", URL)).status == 200


class Sequenced:
    """A handler answering from a script of (status, headers, body) and timing each request."""

    def __init__(self, *script: tuple[int, dict[str, str], bytes]) -> None:
        self.script = list(script)
        self.times: list[float] = []

    async def __call__(self, request: web.Request) -> web.Response:
        self.times.append(time.monotonic())
        status, headers, body = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return web.Response(status=status, headers=headers, body=body)


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_one_retry_on_429_and_5xx(internet: FakeInternet, serve: Serve, status: int) -> None:
    handler = Sequenced((status, {"Retry-After": "0"}, b"busy"), (200, {}, b"fine"))
    await serve(HOST, handler)
    response = await egress(internet).send("GET", URL)
    assert (response.status, response.body) == (200, b"fine")
    assert len(handler.times) == 2


async def test_the_second_answer_is_final(internet: FakeInternet, serve: Serve) -> None:
    handler = Sequenced((503, {"Retry-After": "0"}, b"down"))
    await serve(HOST, handler)
    response = await egress(internet).send("GET", URL)
    assert (response.status, response.body) == (503, b"down")
    assert len(handler.times) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 432])
async def test_no_retry_on_other_errors(internet: FakeInternet, serve: Serve, status: int) -> None:
    handler = Sequenced((status, {"Retry-After": "0"}, b"no"))
    await serve(HOST, handler)
    assert (await egress(internet).send("GET", URL)).status == status
    assert len(handler.times) == 1


async def test_retry_waits_for_retry_after(internet: FakeInternet, serve: Serve) -> None:
    handler = Sequenced((429, {"Retry-After": "1"}, b""), (200, {}, b"ok"))
    await serve(HOST, handler)
    assert (await egress(internet).send("GET", URL)).status == 200
    assert handler.times[1] - handler.times[0] >= 0.95


async def test_no_retry_when_the_wait_would_pass_the_deadline(
    internet: FakeInternet, serve: Serve
) -> None:
    handler = Sequenced((503, {"Retry-After": "5"}, b"later"))
    await serve(HOST, handler)
    response = await egress(internet, timeout=1.0).send("GET", URL)
    assert response.status == 503
    assert len(handler.times) == 1


def test_retry_delay_rules() -> None:
    assert retry_delay({"Retry-After": "3"}) == 3.0
    assert retry_delay({"Retry-After": "0.25"}) == 0.25
    assert retry_delay({"Retry-After": "3600"}) == 10.0  # capped at 10 s
    assert retry_delay({"Retry-After": "-5"}) == 0.0
    assert retry_delay({"Retry-After": "soon"}) == 1.0  # unreadable: the default
    assert retry_delay({}) == 1.0
    assert retry_delay({}, default=0.0) == 0.0
    now = time.time()
    assert retry_delay({"Retry-After": formatdate(now + 4, usegmt=True)}, now=now) == pytest.approx(
        4.0, abs=1.0
    )
    assert retry_delay({"Retry-After": formatdate(now + 400, usegmt=True)}, now=now) == 10.0
    assert retry_delay({"X-RateLimit-Reset": "2, 1419704"}) == 2.0
    assert retry_delay({"Retry-After": "1", "X-RateLimit-Reset": "7"}) == 1.0
    assert retry_delay({"Retry-After": "nan"}) == 1.0


async def test_a_body_over_the_cap_is_refused(internet: FakeInternet, serve: Serve) -> None:
    async def big(request: web.Request) -> web.StreamResponse:
        if request.query.get("chunked"):
            response = web.StreamResponse()
            response.enable_chunked_encoding()
            await response.prepare(request)
            for _ in range(3):
                await response.write(b"x" * 600)
            await response.write_eof()
            return response
        return web.Response(body=b"x" * 1025)

    await serve(HOST, big)
    client = egress(internet, max_bytes=1024)
    for params in ({}, {"chunked": "1"}):
        with pytest.raises(ProviderError) as e:
            await client.send("GET", URL, params=params)
        assert (e.value.kind, e.value.message) == (
            ToolErrorKind.Backend,
            "response body exceeded 1024 bytes",
        )


async def test_a_body_at_the_cap_is_accepted(internet: FakeInternet, serve: Serve) -> None:
    async def exact(request: web.Request) -> web.Response:
        return web.Response(body=b"y" * 1024)

    await serve(HOST, exact)
    response = await egress(internet, max_bytes=1024).send("GET", URL)
    assert response.body == b"y" * 1024 and not response.truncated


async def test_truncate_cuts_at_the_cap(internet: FakeInternet, serve: Serve) -> None:
    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"z" * 5000)

    await serve(HOST, big)
    response = await egress(internet, max_bytes=1000).send("GET", URL, truncate=True)
    assert response.body == b"z" * 1000 and response.truncated


async def test_stalled_headers_are_request_failed(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        await release.wait()

    await raw_serve(HOST, stall)
    with pytest.raises(ProviderError) as e:
        await egress(internet, timeout=0.5).send("GET", URL)
    release.set()
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "request failed")


async def test_a_body_that_stalls_is_reading_response_failed(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    release = asyncio.Event()

    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()
        await release.wait()

    await raw_serve(HOST, stall)
    with pytest.raises(ProviderError) as e:
        await egress(internet, timeout=0.5).send("GET", URL)
    release.set()
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "reading response failed")


async def test_a_body_that_breaks_off_is_reading_response_failed(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()

    await raw_serve(HOST, cut)
    with pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert e.value.message == "reading response failed"


async def test_an_error_body_that_breaks_off_is_none(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()

    await raw_serve(HOST, cut)
    response = await egress(internet).send("GET", URL)
    assert (response.status, response.body) == (400, None)


async def test_cancelling_a_send_leaves_nothing_running(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    closed = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_head(reader)
        await reader.read()  # returns once the client has closed the connection
        closed.set()

    await raw_serve(HOST, hold)
    task = asyncio.create_task(egress(internet).send("GET", URL))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(closed.wait(), 2.0)


async def test_a_reset_connection_is_not_resent(
    internet: FakeInternet, raw_serve: RawServe
) -> None:
    attempts = 0

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal attempts
        attempts += 1
        await read_head(reader)
        writer.transport.abort()

    await raw_serve(HOST, reset)
    with pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "request failed")
    assert attempts == 1, "a reset is a transport failure: neither we nor aiohttp resend"


async def test_the_socket_factory_refuses_unapproved_destinations(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve(HOST, ok)
    transport = egress(internet)._client().transport
    assert isinstance(transport, GuardedTransport)
    permit = DialPermit(HOST, 443, ("34.120.0.10",), internet.route)
    async with transport.session() as session:
        with permitted(permit), pytest.raises(DialRefused):
            await session.get(f"https://127.0.0.1:{served.port}/", server_hostname=HOST)
    assert served.request_lines == []


async def test_an_ipv6_answer(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, ok, ip="2606:4700::1111")
    assert (await egress(internet).send("GET", URL)).status == 200
    assert internet.dials == [("2606:4700::1111", 443)]
    assert served.headers[0]["Host"] == HOST


@pytest.mark.parametrize("answer", ["::ffff:0:7f00:1", "::ffff:0:a00:1"])
async def test_an_ipv4_translated_internal_answer_is_blocked(
    internet: FakeInternet, answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    internet.dns[HOST] = [answer]
    with caplog.at_level(logging.WARNING, "runvil.web._search"), pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "request failed")
    assert internet.dials == []
    assert f"search endpoint {HOST} has no allowed address (answers: {answer})" in caplog.text


async def test_an_ipv4_mapped_loopback_answer_is_blocked(internet: FakeInternet) -> None:
    internet.dns[HOST] = ["::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe"]
    with pytest.raises(ProviderError):
        await egress(internet).send("GET", URL)
    assert internet.dials == []


# --- the shared guarded egress ----------------------------------------------------------------


async def test_sends_go_through_the_guarded_connector(
    internet: FakeInternet, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = await serve(HOST, ok, ip="34.120.0.10")
    internet.dns[HOST] = ["10.0.0.1", "34.120.0.10"]
    dialled: list[tuple[str, int]] = []

    def spy(addr_info: Any) -> socket.socket:
        dialled.append(tuple(addr_info[4][:2]))
        return checked_socket(addr_info)

    monkeypatch.setattr(connector, "_checked_socket", spy)
    assert (await egress(internet).send("GET", URL)).status == 200
    # The only socket is the one the fetch's own last-line check approved: the public answer,
    # routed; the private answer was never even offered to it.
    assert dialled == [("127.0.0.1", served.port)]
    assert internet.dials == [("34.120.0.10", 443)]


async def test_the_accepted_codings_are_the_bounded_decoders(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve(HOST, ok)
    await egress(internet).send("GET", URL)
    assert served.headers[0]["Accept-Encoding"] == "gzip, deflate, br, zstd"


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("br", brotli.compress),
        ("zstd", zstd.compress),
    ],
)
async def test_a_compressed_answer_is_decoded(
    internet: FakeInternet, serve: Serve, coding: str, compress: Callable[[bytes], bytes]
) -> None:
    document = b'{"results": [' + b'{"url": "https://e.com/"},' * 1000 + b"{}]}"

    async def compressed(request: web.Request) -> web.Response:
        return web.Response(body=compress(document), headers={"Content-Encoding": coding})

    await serve(HOST, compressed)
    response = await egress(internet).send("GET", URL)
    assert (response.status, response.body) == (200, document)


async def test_a_compressed_answer_over_the_cap_is_refused_with_bounded_memory(
    internet: FakeInternet, serve: Serve
) -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), 9)  # 64 KB that inflate to 64 MiB

    async def inflating(request: web.Request) -> web.Response:
        return web.Response(body=bomb, headers={"Content-Encoding": "gzip"})

    await serve(HOST, inflating)
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as e:
            await egress(internet, max_bytes=1024).send("GET", URL)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (e.value.kind, e.value.message) == (
        ToolErrorKind.Backend,
        "response body exceeded 1024 bytes",
    )
    assert peak < 4 * 1024 * 1024, f"decoding past the cap held {peak} bytes"


async def test_a_zstd_answer_over_the_rfc_9659_window_is_refused(
    internet: FakeInternet, serve: Serve
) -> None:
    # RFC 9659: a zstd content coding needs no window over 8 MiB; a frame that asks for 64 MiB
    # would make the decoder reserve that much. Only the bounded decoder refuses it.
    frame = zstd.compress(
        b"\0" * (64 * 1024 * 1024), options={zstd.CompressionParameter.window_log: 26}
    )

    async def wide(request: web.Request) -> web.Response:
        return web.Response(body=frame, headers={"Content-Encoding": "zstd"})

    await serve(HOST, wide)
    with pytest.raises(ProviderError) as e:
        await egress(internet, max_bytes=128 * 1024 * 1024).send("GET", URL)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "reading response failed")


async def test_a_stacked_coding_is_not_read_as_the_body(
    internet: FakeInternet, serve: Serve
) -> None:
    async def twice(request: web.Request) -> web.Response:
        body = gzip.compress(gzip.compress(b'{"results": []}'))
        return web.Response(body=body, headers={"Content-Encoding": "gzip, gzip"})

    await serve(HOST, twice)
    with pytest.raises(ProviderError) as e:
        await egress(internet).send("GET", URL)
    assert (e.value.kind, e.value.message) == (ToolErrorKind.Transport, "reading response failed")


async def test_a_compressed_error_body_is_decoded_and_cut(
    internet: FakeInternet, serve: Serve
) -> None:
    async def failing(request: web.Request) -> web.Response:
        body = gzip.compress(b"e" * (1024 * 1024), 9)
        return web.Response(status=400, body=body, headers={"Content-Encoding": "gzip"})

    await serve(HOST, failing)
    response = await egress(internet).send("GET", URL)
    assert (response.status, response.body) == (400, b"e" * 65_536)
