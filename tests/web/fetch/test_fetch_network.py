"""Where a fetch connects and what it sends: addresses, lookups, the request line, anonymity."""

from __future__ import annotations

import asyncio
import logging
import socket

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from runvil import ToolError, ToolErrorKind
from runvil._net import DialPermit, DialRefused, Network, identity_route, permitted
from runvil._net.client import GuardedTransport
from runvil._net.connector import _checked_socket, send
from runvil._net.permit import current_permit
from runvil.web import DnsError, FetchPolicy, WebFetch
from runvil.web._fetch.http import fetch_client
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import RawSiteFactory, SiteFactory, expect_page, head


def open_session(network: Network, policy: FetchPolicy) -> aiohttp.ClientSession:
    """The fetch's guarded pool itself, for the guard's own tests (call inside the loop)."""
    transport = fetch_client(network, policy).transport
    assert isinstance(transport, GuardedTransport)
    return transport.session()


async def hello(request: web.Request) -> web.Response:
    return web.Response(text="hello", content_type="text/plain")


async def hard(fetch: WebFetch, url: str) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": url})
    return caught.value


# --- addresses ------------------------------------------------------------------------------


async def test_mixed_answers_dial_only_the_public_address(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet, caplog: pytest.LogCaptureFixture
) -> None:
    await site({"/": hello})
    internet.dns["example.com"] = ["127.0.0.1", "93.184.216.34"]
    with caplog.at_level(logging.DEBUG, logger="runvil.web.fetch"):
        text = await fetch.call({"url": "https://example.com/"})
    assert text == expect_page("https://example.com/", "hello")
    assert internet.dials == [("93.184.216.34", 443)]
    assert (
        "host example.com resolved to blocked address 127.0.0.1 in range 127.0.0.0/8"
        in caplog.messages
    )


async def test_a_host_with_only_blocked_addresses_fails_hard(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    internet.dns["internal.example"] = ["10.0.0.5", "127.0.0.1"]
    err = await hard(fetch, "https://internal.example/")
    assert (err.kind, str(err)) == (
        ToolErrorKind.InvalidArguments,
        "host internal.example has no allowed address",
    )
    assert internet.dials == []


@pytest.mark.parametrize(
    "answers",
    [[], ["::1"], ["::ffff:127.0.0.1"], ["169.254.169.254"], ["64:ff9b::7f00:1"], ["not-an-ip"]],
)
async def test_empty_or_blocked_answers_fail_hard(
    fetch: WebFetch, internet: FakeInternet, answers: list[str]
) -> None:
    internet.dns["localhost.example"] = answers
    err = await hard(fetch, "https://localhost.example/")
    assert str(err) == "host localhost.example has no allowed address"
    assert internet.dials == []


@pytest.mark.parametrize(
    ("answer", "cidr"), [("::ffff:0:7f00:1", "127.0.0.0/8"), ("::ffff:0:a00:1", "10.0.0.0/8")]
)
async def test_an_ipv4_translated_internal_answer_fails_hard(
    fetch: WebFetch,
    internet: FakeInternet,
    caplog: pytest.LogCaptureFixture,
    answer: str,
    cidr: str,
) -> None:
    internet.dns["siit.example"] = [answer]
    with caplog.at_level(logging.DEBUG, logger="runvil.web.fetch"):
        err = await hard(fetch, "https://siit.example/")
    assert (err.kind, str(err)) == (
        ToolErrorKind.InvalidArguments,
        "host siit.example has no allowed address",
    )
    assert f"host siit.example resolved to blocked address {answer} in range {cidr}" in (
        caplog.messages
    )
    assert internet.dials == []


async def test_localhost_resolving_to_loopback_is_refused(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    internet.dns["localhost"] = ["127.0.0.1", "::1"]
    err = await hard(fetch, "https://localhost/")
    assert (err.kind, str(err)) == (
        ToolErrorKind.InvalidArguments,
        "host localhost has no allowed address",
    )


async def test_a_failed_lookup_is_soft(fetch: WebFetch, internet: FakeInternet) -> None:
    assert await fetch.call({"url": "https://no-such-host.example/"}) == (
        "dns resolution failed for no-such-host.example"
    )
    assert internet.lookups == ["no-such-host.example"]


async def test_a_resolver_that_never_answers_meets_the_request_deadline(
    internet: FakeInternet,
) -> None:
    async def hang(host: str) -> list[str]:
        await asyncio.sleep(30)
        return []

    fetch = WebFetch(
        policy=FetchPolicy(connect_timeout=0.2, timeout=0.5),
        network=Network(resolve=hang, route=internet.route, ssl_context=internet.client_context),
    )
    try:
        assert await fetch.call({"url": "https://slow-dns.example/a?b"}) == (
            "request to https://slow-dns.example/a timed out; try again or use a different URL"
        )
    finally:
        await fetch.aclose()


async def test_dns_rebinding_on_the_second_call_is_refused(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": hello})
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    internet.dns["example.com"] = lambda: next(answers)
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "hello"
    )
    err = await hard(fetch, "https://example.com/")
    assert str(err) == "host example.com has no allowed address"
    assert internet.lookups == ["example.com", "example.com"]


async def test_a_pooled_connection_is_not_reused_once_the_name_moved(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    first = await site({"/": hello}, ip="93.184.216.34")

    async def moved(request: web.Request) -> web.Response:
        return web.Response(text="moved", content_type="text/plain")

    second = await site({"/": moved}, hosts=("other.example",), ip="93.184.216.35")
    assert (await fetch.call({"url": "https://example.com/"})).endswith("hello")
    assert (await fetch.call({"url": "https://example.com/"})).endswith("hello")
    internet.dns["example.com"] = ["93.184.216.35"]  # same name, new public address
    assert (await fetch.call({"url": "https://example.com/"})).endswith("moved")
    assert len(first.request_lines) == 2 and len(second.request_lines) == 1
    # The first two calls shared one kept-alive connection.
    assert len({id(r.transport) for r in first.requests}) == 1


async def test_unreachable_first_address_falls_through_to_the_next(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": hello})
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    internet.routes[("93.184.216.40", 443)] = ("127.0.0.1", dead_port)
    internet.dns["example.com"] = ["93.184.216.40", "93.184.216.34"]
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "hello"
    )
    assert internet.dials == [("93.184.216.40", 443), ("93.184.216.34", 443)]


async def test_no_reachable_address_is_a_network_error(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    internet.dns["example.com"] = ["93.184.216.40"]
    internet.routes[("93.184.216.40", 443)] = ("127.0.0.1", dead_port)
    assert await fetch.call({"url": "https://example.com/a?q=1#frag"}) == (
        "fetch failed for https://example.com/a?q=1: network error; try a different URL"
    )


async def test_a_certificate_for_another_name_is_a_network_error(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    app = web.Application()
    app.router.add_get("/", hello)
    await internet.serve(app, hosts=("wrong.test",), names=("example.com",))
    assert await fetch.call({"url": "https://wrong.test/"}) == (
        "fetch failed for https://wrong.test/: network error; try a different URL"
    )


async def test_a_refused_url_calls_no_resolver_and_opens_no_connection(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    for url in (
        "https://user:pass@example.com/",
        "https://example.com:8080/",
        "https://1.2.3.4/",
        "https://0177.0.0.1/",
        "not a url",
    ):
        with pytest.raises(ToolError):
            await fetch.call({"url": url})
    assert await fetch.call({"url": "http://example.com/"}) == "scheme not allowed: http"
    assert internet.lookups == [] and internet.dials == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://user:pass@example.com/", "url must not contain userinfo"),
        ("https://example.com:8080/", "port not allowed: 8080"),
        ("https://1.2.3.4/", "ip literal host not allowed: 1.2.3.4"),
        ("https://[::1]/", "ip literal host not allowed: ::1"),
        ("https://2130706433/", "ip literal host not allowed: 127.0.0.1"),
        ("not a url", "invalid url"),
    ],
)
async def test_hard_admission_refusals(fetch: WebFetch, url: str, message: str) -> None:
    err = await hard(fetch, url)
    assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, message)


async def test_scheme_refusals_are_soft(fetch: WebFetch) -> None:
    assert await fetch.call({"url": "http://user@example.com:8080/"}) == "scheme not allowed: http"
    assert await fetch.call({"url": "ftp://example.com/"}) == "scheme not allowed: ftp"
    assert await fetch.call({"url": "file:///etc/passwd"}) == "scheme not allowed: file"


# --- what is sent ---------------------------------------------------------------------------


async def test_query_is_sent_unchanged_and_the_fragment_never(
    fetch: WebFetch, site: SiteFactory
) -> None:
    served = await site({"/path": hello})
    text = await fetch.call({"url": "https://example.com/path?q=1#frag"})
    assert text == expect_page("https://example.com/path?q=1", "hello")
    assert served.request_lines == ["GET /path?q=1"]


@pytest.mark.parametrize(
    ("url", "line", "final"),
    [
        (
            "https://example.com/a b?x=y z",
            "GET /a%20b?x=y%20z",
            "https://example.com/a%20b?x=y%20z",
        ),
        ("https://example.com/%7e/%2F?a=%zz&b=é", "GET /%7e/%2F?a=%zz&b=%C3%A9", None),
        ("https://example.com/?", "GET /?", "https://example.com/?"),
        ("https://example.com/./x/../y", "GET /y", "https://example.com/y"),
        ("https://EXAMPLE.com:443/Q?A=B", "GET /Q?A=B", "https://example.com/Q?A=B"),
    ],
)
async def test_the_request_line_is_the_approved_href(
    fetch: WebFetch, site: SiteFactory, url: str, line: str, final: str | None
) -> None:
    async def any_path(request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/plain")

    app_routes = {"/{tail:.*}": any_path}
    served = await site(app_routes)
    text = await fetch.call({"url": url})
    assert served.request_lines == [line]
    if final is not None:
        assert text.startswith(f"url: {final}\n")


async def test_requests_are_anonymous(
    fetch: WebFetch, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def cookie_setter(request: web.Request) -> web.Response:
        response = web.Response(text="hi", content_type="text/plain")
        response.set_cookie("session", "s3cret")
        return response

    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # a dead port: using it would fail
    served = await site({"/": cookie_setter})
    for _ in range(2):
        assert await fetch.call({"url": "https://example.com/"}) == expect_page(
            "https://example.com/", "hi"
        )
    for headers in served.headers:
        assert headers["User-Agent"] == "harness-webfetch/0.0"
        assert headers["Host"] == "example.com"
        for forbidden in ("Cookie", "Authorization", "Referer", "Proxy-Authorization"):
            assert forbidden not in headers
    assert served.request_lines == ["GET /", "GET /"]


async def test_host_header_keeps_a_non_default_port(fetch: WebFetch, site: SiteFactory) -> None:
    served = await site({"/": hello}, port=80)
    assert await fetch.call({"url": "https://example.com:80/"}) == expect_page(
        "https://example.com:80/", "hello"
    )
    assert served.headers[0]["Host"] == "example.com:80"


async def test_a_trailing_dot_host_is_sent_as_written(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    served = await site({"/": hello}, hosts=("example.com.",))
    assert await fetch.call({"url": "https://EXAMPLE.com./?q"}) == expect_page(
        "https://example.com./?q", "hello"
    )
    assert served.headers[0]["Host"] == "example.com."
    assert served.request_lines == ["GET /?q"]
    assert internet.lookups == ["example.com."]


# --- the last-line guards -------------------------------------------------------------------


async def test_the_session_dials_nothing_without_a_permit(internet: FakeInternet) -> None:
    session = open_session(internet.network(), FetchPolicy())
    try:
        with pytest.raises(DialRefused):
            await session.get("https://example.com/")
        permit = DialPermit("example.com", 443, ("93.184.216.34",), internet.route)
        with permitted(permit), pytest.raises(DialRefused):
            await session.get(URL("https://other.example/", encoded=True))
        with permitted(permit), pytest.raises(DialRefused):
            # An IP literal never reaches a resolver; the socket factory still refuses it.
            await session.get("https://127.0.0.2/")
    finally:
        await session.close()


async def test_a_permit_handed_to_send_needs_no_context_and_leaves_none(
    site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": hello})
    session = open_session(internet.network(), FetchPolicy())
    try:
        permit = DialPermit("example.com", 443, ("93.184.216.34",), internet.route)
        response = await send(session, URL("https://example.com/"), permit=permit)
        assert (response.status, await response.read()) == (200, b"hello")
        with pytest.raises(DialRefused):
            current_permit()  # the permit travelled with the request, not in the context
    finally:
        await session.close()


async def test_the_permit_handed_to_send_wins_over_the_context(
    site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": hello}, ip="93.184.216.34")

    async def moved(request: web.Request) -> web.Response:
        return web.Response(text="moved", content_type="text/plain")

    await site({"/": moved}, ip="93.184.216.35")
    session = open_session(internet.network(), FetchPolicy())
    try:
        approved = DialPermit("example.com", 443, ("93.184.216.35",), internet.route)
        elsewhere = DialPermit("example.com", 443, ("93.184.216.34",), internet.route)
        with permitted(elsewhere):
            response = await send(session, URL("https://example.com/"), permit=approved)
            assert await response.read() == b"moved"
        assert internet.dials == [("93.184.216.35", 443)]
    finally:
        await session.close()
    fresh = open_session(internet.network(), FetchPolicy())
    try:
        other_target = DialPermit("other.example", 443, ("93.184.216.35",), internet.route)
        with permitted(approved), pytest.raises(DialRefused):
            await send(fresh, URL("https://example.com/"), permit=other_target)
    finally:
        await fresh.close()


async def test_a_pooled_connection_is_checked_against_the_requests_own_permit(
    site: SiteFactory, internet: FakeInternet
) -> None:
    first = await site({"/": hello}, ip="93.184.216.34")

    async def moved(request: web.Request) -> web.Response:
        return web.Response(text="moved", content_type="text/plain")

    second = await site({"/": moved}, ip="93.184.216.35")
    session = open_session(internet.network(), FetchPolicy())
    try:
        old = DialPermit("example.com", 443, ("93.184.216.34",), internet.route)
        new = DialPermit("example.com", 443, ("93.184.216.35",), internet.route)
        for permit, text in ((old, b"hello"), (old, b"hello"), (new, b"moved")):
            response = await send(session, URL("https://example.com/"), permit=permit)
            assert await response.read() == text  # read whole: back to the pool
        # The kept-alive connection to .34 served the second request and not the third.
        assert len(first.request_lines) == 2 and len(second.request_lines) == 1
        assert len({id(r.transport) for r in first.requests}) == 1
    finally:
        await session.close()


def test_the_socket_factory_refuses_an_unapproved_destination() -> None:
    permit = DialPermit("example.com", 443, ("93.184.216.34",), identity_route)
    info = (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", 443))
    with permitted(permit), pytest.raises(DialRefused):
        _checked_socket(info)
    with pytest.raises(DialRefused):
        _checked_socket((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)))
    with permitted(permit):
        sock = _checked_socket((socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)))
        sock.close()


def test_a_route_must_name_an_address() -> None:
    permit = DialPermit("example.com", 443, ("93.184.216.34",), lambda ip, port: ("localhost", 1))
    with pytest.raises(ValueError):
        permit.routed()


async def test_dns_error_type_is_exported() -> None:
    assert issubclass(DnsError, Exception) and not issubclass(DnsError, OSError)


async def test_the_request_head_is_exactly_ours(fetch: WebFetch, raw_site: RawSiteFactory) -> None:
    # The fetch's own headers are the request class's automatic ones: each sent once, with
    # our values, and none of aiohttp's defaults beside them.
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", length=2) + b"ok")
        await writer.drain()

    server = await raw_site(answer)
    assert await fetch.call({"url": "https://example.com/a?b=1"}) == expect_page(
        "https://example.com/a?b=1", "ok"
    )
    lines = server.requests[0].decode("latin-1").split("\r\n")
    assert lines[0] == "GET /a?b=1 HTTP/1.1"
    fields = sorted(line.split(": ", 1)[0].lower() for line in lines[1:] if line)
    assert fields == ["accept", "accept-encoding", "host", "user-agent"]
    assert (
        "Accept: text/html,application/xhtml+xml,application/json;q=0.9,application/xml;q=0.9,"
        "text/*;q=0.8,*/*;q=0.1" in lines
    )
    assert "Accept-Encoding: gzip, deflate, br, zstd" in lines
    assert "User-Agent: harness-webfetch/0.0" in lines


# --- pooled connections the server has closed ----------------------------------------------------


async def test_a_pooled_connection_the_server_dropped_is_retried_on_a_new_one(
    fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    opened: list[int] = []

    async def answer_once_then_drop(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        opened.append(len(opened) + 1)
        writer.write(head("200 OK", "Content-Type: text/plain", length=5) + b"hello")
        await writer.drain()
        if len(opened) == 1:
            # Keep-alive as far as the client knows; the next request on this connection is
            # read and the connection dropped without an answer.
            await reader.readuntil(b"\r\n\r\n")
            writer.close()

    server = await raw_site(answer_once_then_drop)
    page = expect_page("https://example.com/", "hello")
    assert await fetch.call({"url": "https://example.com/"}) == page
    assert await fetch.call({"url": "https://example.com/"}) == page
    assert server.connections == 2  # the dropped pooled connection, then one fresh retry


async def test_a_request_is_retried_only_once(fetch: WebFetch, raw_site: RawSiteFactory) -> None:
    async def drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()  # every request is read and its connection dropped unanswered

    server = await raw_site(drop)
    assert await fetch.call({"url": "https://example.com/a?b=c"}) == (
        "fetch failed for https://example.com/a?b=c: network error; try a different URL"
    )
    assert server.connections == 2


async def test_a_connection_that_could_not_be_made_is_not_retried(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    accepted: list[int] = []

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)  # a TCP listener that closes before any TLS handshake
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    try:
        internet.dns["example.com"] = ["93.184.216.34"]
        internet.routes[("93.184.216.34", 443)] = ("127.0.0.1", server.sockets[0].getsockname()[1])
        assert await fetch.call({"url": "https://example.com/x?y"}) == (
            "fetch failed for https://example.com/x?y: network error; try a different URL"
        )
        assert accepted == [1]
    finally:
        server.close()
        await server.wait_closed()
