"""Faults: time limits, cancellation, tasks that die, and nothing left open afterwards.

Every test here requests ``fd_baseline`` first, so it also fails if the fault leaves a file
descriptor (a socket, above all) open once the fetch tool and the servers are closed.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from runvil import ToolError, ToolErrorKind
from runvil.web import DnsError, FetchPolicy, Network, WebFetch
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import QUICK, FetchFactory, RawSiteFactory, expect_page, head


def timed_out(url: str) -> str:
    return f"request to {url} timed out; try again or use a different URL"


def unreadable(url: str) -> str:
    return f"the response body from {url} could not be read; try again or use a different URL"


async def until_hangup(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Never answer; return when the client closes the connection."""
    while await reader.read(65536):
        pass


async def settle(before: set[asyncio.Task[object]]) -> set[asyncio.Task[object]]:
    """Tasks started since ``before`` that are still running after a short grace period."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        extra = asyncio.all_tasks() - before
        if not extra:
            return extra
        await asyncio.sleep(0.02)
    return asyncio.all_tasks() - before


async def test_a_server_that_never_answers_times_out(
    fd_baseline: None, make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    server = await raw_site(until_hangup)
    fetch = make_fetch(QUICK)
    before = asyncio.all_tasks()
    started = time.monotonic()
    assert await fetch.call({"url": "https://example.com/slow?k=secret"}) == timed_out(
        "https://example.com/slow"
    )
    assert 0.9 < time.monotonic() - started < 3.0
    # The connection was closed, so the server's handler ended and no task outlived the call.
    assert await settle(before) == set()
    assert len(server.closed_at) == 1


async def test_a_stalled_tls_handshake_hits_the_connect_limit(
    fd_baseline: None, make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # a TCP listener that never speaks TLS
        await reader.read()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    try:
        internet.dns["example.com"] = ["93.184.216.34"]
        internet.routes[("93.184.216.34", 443)] = ("127.0.0.1", server.sockets[0].getsockname()[1])
        fetch = make_fetch(FetchPolicy(connect_timeout=0.3, timeout=10.0))
        started = time.monotonic()
        assert await fetch.call({"url": "https://example.com/"}) == timed_out(
            "https://example.com/"
        )
        assert time.monotonic() - started < 2.0
        assert len(accepted) == 1
    finally:
        server.close()
        await server.wait_closed()


async def test_a_body_that_stops_arriving_is_unreadable_at_the_deadline(
    fd_baseline: None, make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", length=100_000))
        writer.write(b"partial text")
        await writer.drain()
        await until_hangup(reader, writer)

    await raw_site(trickle)
    fetch = make_fetch(QUICK)
    assert await fetch.call({"url": "https://example.com/big.txt"}) == unreadable(
        "https://example.com/big.txt"
    )


async def test_the_deadline_covers_every_hop_and_names_the_hop_in_flight(
    fd_baseline: None, make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def redirect_then_stall(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        writer.write(head("302 Found", "Location: /slow?x=1", length=0))
        await writer.drain()
        # Keep-alive: the second request arrives on this connection and is never answered.
        await until_hangup(reader, writer)

    server = await raw_site(redirect_then_stall)
    fetch = make_fetch(QUICK)
    assert await fetch.call({"url": "https://example.com/"}) == timed_out(
        "https://example.com/slow"
    )
    assert server.connections == 1  # the empty redirect body left the connection reusable


async def test_cancelling_the_call_closes_the_connection_at_once(
    fd_baseline: None, fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    server = await raw_site(until_hangup)
    before = asyncio.all_tasks()
    call = asyncio.ensure_future(fetch.call({"url": "https://example.com/"}))
    for _ in range(1000):  # at most 5 s for the request to arrive
        if server.requests:
            break
        await asyncio.sleep(0.005)
    assert server.requests
    cancelled_at = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    while not server.closed_at and time.monotonic() - cancelled_at < 2.0:
        await asyncio.sleep(0.005)
    assert server.closed_at and server.closed_at[0] - cancelled_at < 1.0
    assert await settle(before) == set()


async def test_cancelling_during_the_body_closes_the_connection(
    fd_baseline: None, fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    body_started = asyncio.Event()

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", "Transfer-Encoding: chunked"))
        writer.write(b"4\r\nfirs\r\n")
        await writer.drain()
        body_started.set()
        await until_hangup(reader, writer)

    server = await raw_site(endless)
    call = asyncio.ensure_future(fetch.call({"url": "https://example.com/"}))
    await asyncio.wait_for(body_started.wait(), 5)
    await asyncio.sleep(0.05)
    cancelled_at = time.monotonic()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    while not server.closed_at and time.monotonic() - cancelled_at < 2.0:
        await asyncio.sleep(0.005)
    assert server.closed_at and server.closed_at[0] - cancelled_at < 1.0


async def test_an_outer_timeout_around_the_call_works(
    fd_baseline: None, fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    server = await raw_site(until_hangup)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await fetch.call({"url": "https://example.com/"})
    deadline = time.monotonic() + 2.0
    while not server.closed_at and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    assert server.closed_at


async def test_a_task_cancelled_from_elsewhere_did_not_finish(
    fd_baseline: None, internet: FakeInternet
) -> None:
    async def cancels_itself(host: str) -> list[str]:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)
        return ["93.184.216.34"]

    async with WebFetch(network=Network(resolve=cancels_itself)) as fetch:
        with pytest.raises(ToolError) as caught:
            await fetch.call({"url": "https://example.com/"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Other,
        "web_fetch: the fetch task did not finish",
    )


async def test_a_task_that_crashes_did_not_finish(fd_baseline: None) -> None:
    async def broken(host: str) -> list[str]:
        raise RuntimeError("resolver bug")

    async with WebFetch(network=Network(resolve=broken)) as fetch:
        with pytest.raises(ToolError) as caught:
            await fetch.call({"url": "https://example.com/"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Other,
        "web_fetch: the fetch task did not finish",
    )


async def test_the_tool_works_without_async_with_and_reopens_after_aclose(
    fd_baseline: None, internet: FakeInternet, raw_site: RawSiteFactory
) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", length=2) + b"ok")
        await writer.drain()

    await raw_site(answer)
    fetch = WebFetch(network=internet.network())  # built outside any loop use, like a Host does
    try:
        assert await fetch.call({"url": "https://example.com/"}) == expect_page(
            "https://example.com/", "ok"
        )
        await fetch.aclose()
        assert await fetch.call({"url": "https://example.com/"}) == expect_page(
            "https://example.com/", "ok"
        )
    finally:
        await fetch.aclose()


async def test_many_concurrent_faults_leave_nothing_open(
    fd_baseline: None, make_fetch: FetchFactory, raw_site: RawSiteFactory, internet: FakeInternet
) -> None:
    async def mixed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = server.requests[-1]
        if b"/ok" in request:
            ok = head("200 OK", "Content-Type: text/plain", "Connection: close", length=2)
            writer.write(ok + b"ok")
        elif b"/half" in request:
            writer.write(head("200 OK", "Content-Type: text/plain", length=10) + b"half")
            await writer.drain()
            writer.transport.abort()
            return
        elif b"/pdf" in request:
            writer.write(head("200 OK", "Content-Type: application/pdf", length=5) + b"%PDF-")
        await writer.drain()
        await until_hangup(reader, writer)

    server = await raw_site(mixed)

    fetch = make_fetch(QUICK)
    urls = ["/ok", "/half", "/pdf", "/stall"] * 5
    results = await asyncio.gather(
        *(fetch.call({"url": f"https://example.com{u}"}) for u in urls),
        fetch.call({"url": "https://nowhere.example/"}),
    )
    assert results[:4] == [
        expect_page("https://example.com/ok", "ok"),
        unreadable("https://example.com/half"),
        "content type application/pdf from https://example.com/pdf cannot be returned as text; "
        "try an HTML version of the page or a different URL",
        timed_out("https://example.com/stall"),
    ]
    assert results[4:20] == results[:4] * 4
    assert results[20] == "dns resolution failed for nowhere.example"


def test_one_tool_serves_successive_event_loops() -> None:
    # The CLI runs each command in its own asyncio.run; a tool built once must work in each.
    async def no_dns(host: str) -> list[str]:
        raise DnsError(host)

    fetch = WebFetch(network=Network(resolve=no_dns))
    for _ in range(2):
        assert asyncio.run(fetch.call({"url": "https://example.com/"})) == (
            "dns resolution failed for example.com"
        )
    asyncio.run(fetch.aclose())


async def test_the_deadline_covers_the_network_not_the_rendering(
    make_fetch: FetchFactory, raw_site: RawSiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page that arrived in time is rendered however long that takes: the deadline timer must
    # not cancel the call once the network part is over.
    from runvil.web._fetch import tool

    real_render = tool.render_page

    def slow_render(
        page: tool.Page, request: tool.FetchRequest, deadline: float | None = None
    ) -> tool.FetchOutcome:
        time.sleep(1.5)  # longer than QUICK's 1 s deadline
        return real_render(page, request, deadline)

    monkeypatch.setattr(tool, "render_page", slow_render)
    body = b"<p>" + b"Words of a paragraph. " * 1_000 + b"</p>"  # over the inline limit

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/html", length=len(body)) + body)
        await writer.drain()

    await raw_site(answer)
    result = await make_fetch(QUICK).call({"url": "https://example.com/", "max_chars": 21})
    assert result == expect_page(
        "https://example.com/", "Words of a paragraph.", truncated=True, extraction="readability"
    )
