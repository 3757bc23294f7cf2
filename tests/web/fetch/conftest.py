"""Fixtures for the fetch tests: a fetch tool wired to the fake internet, sites and raw servers.

``site`` serves an ``aiohttp.web`` app behind a public-looking name (the well-behaved server).
``raw_site`` serves a hand-written TLS server, for what no framework will send: a non-ASCII
Content-Type, a body that breaks off, a head that never comes. Both go through the suite's
:class:`~tests.fixtures.internet.FakeInternet`, so every fetch runs the whole guarded path.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from runvil.web import FetchPolicy, WebFetch
from tests.fixtures.internet import DEFAULT_NAMES, FakeInternet, Served

#: A short policy for tests that wait on a limit: a stalled server costs about a second.
QUICK = FetchPolicy(connect_timeout=0.5, timeout=1.0)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

ARTICLE_HTML = (
    "<html><head><title>Example Domain</title></head><body>"
    "<nav><a href='/a'>Home</a> <a href='/b'>About</a></nav>"
    "<article><h1>Example Domain</h1>"
    "<p>This domain is for use in illustrative examples in documents. You may use this domain "
    "in literature without prior coordination or asking for permission.</p>"
    "<p>The second paragraph of the article carries enough prose for an extractor to see an "
    "article here rather than a page of links, so the readability path is taken.</p>"
    "</article><footer>Footer boilerplate</footer></body></html>"
)


class FetchFactory:
    """Builds ``WebFetch`` tools on the fake internet and closes them after the test."""

    def __init__(self, internet: FakeInternet) -> None:
        self.internet = internet
        self.made: list[WebFetch] = []

    def __call__(self, policy: FetchPolicy | None = None) -> WebFetch:
        fetch = WebFetch(policy=policy, network=self.internet.network())
        self.made.append(fetch)
        return fetch

    async def close(self) -> None:
        for fetch in self.made:
            await fetch.aclose()


@pytest.fixture
async def make_fetch(internet: FakeInternet) -> AsyncIterator[FetchFactory]:
    factory = FetchFactory(internet)
    yield factory
    await factory.close()


@pytest.fixture
async def fetch(make_fetch: FetchFactory) -> WebFetch:
    return make_fetch()


SiteFactory = Callable[..., Awaitable[Served]]


@pytest.fixture
def site(internet: FakeInternet) -> SiteFactory:
    """``await site({"/": handler}, hosts=("example.com",), ip=...)`` serves the routes."""

    async def serve(
        routes: Mapping[str, Handler],
        *,
        hosts: Iterable[str] = ("example.com",),
        ip: str = "93.184.216.34",
        port: int = 443,
    ) -> Served:
        app = web.Application()
        for path, handler in routes.items():
            app.router.add_route("*", path, handler)
        hosts = tuple(hosts)
        names = (*DEFAULT_NAMES, *hosts)  # a certificate for exactly the hosts served
        return await internet.serve(app, hosts=hosts, ip=ip, port=port, names=names)

    return serve


@dataclass
class RawServer:
    """A hand-written TLS server: what it received and when each connection closed."""

    server: asyncio.AbstractServer
    port: int
    requests: list[bytes] = field(default_factory=list)
    closed_at: list[float] = field(default_factory=list)
    connections: int = 0

    async def close(self) -> None:
        self.server.close()
        await self.server.wait_closed()


RawSiteFactory = Callable[..., Awaitable[RawServer]]


@pytest.fixture
async def raw_site(internet: FakeInternet) -> AsyncIterator[RawSiteFactory]:
    """``await raw_site(handler, host=..., ip=...)``: ``handler(reader, writer)`` is called after
    the request head has been read (it is in ``server.requests``)."""
    servers: list[RawServer] = []
    handlers: set[asyncio.Task[None]] = set()

    async def start(
        handler: RawHandler, *, host: str = "example.com", ip: str = "93.184.216.34"
    ) -> RawServer:
        box: list[RawServer] = []

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            raw = box[0]
            raw.connections += 1
            task = asyncio.current_task()
            assert task is not None
            handlers.add(task)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                raw.requests.append(head)
                await handler(reader, writer)
                # Wait for the client to hang up, so the close time is the client's.
                while await reader.read(65536):
                    pass
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                pass
            finally:
                raw.closed_at.append(time.monotonic())
                writer.close()
                handlers.discard(task)

        server = await asyncio.start_server(
            on_connect, "127.0.0.1", 0, ssl=internet.server_context()
        )
        port = server.sockets[0].getsockname()[1]
        raw = RawServer(server=server, port=port)
        box.append(raw)
        servers.append(raw)
        internet.dns[host] = [ip]
        internet.routes[(ip, 443)] = ("127.0.0.1", port)
        return raw

    yield start
    for task in list(handlers):
        task.cancel()
    for raw in servers:
        await raw.close()


def head(status: str = "200 OK", *headers: str, length: int | None = None) -> bytes:
    """An HTTP/1.1 response head; ``length`` adds Content-Length."""
    lines = [f"HTTP/1.1 {status}", *headers]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
async def fd_baseline() -> AsyncIterator[None]:
    """Fails the test if it leaves file descriptors open (sockets above all).

    Request this fixture before ``internet``/``make_fetch`` so its check runs after they closed.
    """
    before = open_fds()
    yield
    deadline = time.monotonic() + 2.0
    while open_fds() > before and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert open_fds() == before, f"{open_fds() - before} file descriptors leaked"


def expect_page(url: str, body: str, *, truncated: bool = False, extraction: str = "plain") -> str:
    return (
        f"url: {url}\ntruncated: {'true' if truncated else 'false'}\n"
        f"extraction: {extraction}\n\n{body}"
    )
