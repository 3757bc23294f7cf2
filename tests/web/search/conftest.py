"""Helpers for serving fake vendor APIs behind the fake internet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from tests.fixtures.internet import DEFAULT_NAMES, FakeInternet, Served

Serve = Callable[..., Awaitable[Served]]


@pytest.fixture
def serve(internet: FakeInternet) -> Serve:
    """``await serve(host, handler_or_app, ip=..., port=443, path=..., method=...)``: a loopback
    TLS server whose certificate covers ``host``, reached through the fake resolver."""

    async def start(
        host: str,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]] | web.Application,
        *,
        ip: str = "34.120.0.10",
        port: int = 443,
        path: str = "/{tail:.*}",
        method: str = "*",
    ) -> Served:
        if isinstance(handler, web.Application):
            app = handler
        else:
            target = handler

            async def endpoint(request: web.Request) -> web.StreamResponse:
                return await target(request)

            app = web.Application()
            app.router.add_route(method, path, endpoint)
        return await internet.serve(
            app, hosts=(host,), ip=ip, port=port, names=(*DEFAULT_NAMES, host)
        )

    return start


RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
RawServe = Callable[..., Awaitable[int]]


@pytest.fixture
async def raw_serve(internet: FakeInternet) -> AsyncIterator[RawServe]:
    """``await raw_serve(host, handler, ip=...)``: a hand-written TLS server, for what no
    framework sends (a body that breaks off, headers that never come). Returns its port."""
    servers: list[asyncio.AbstractServer] = []
    handlers: set[asyncio.Task[None]] = set()

    async def start(
        host: str, handler: RawHandler, *, ip: str = "34.120.0.20", port: int = 443
    ) -> int:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            handlers.add(task)
            try:
                await handler(reader, writer)
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                handlers.discard(task)
                writer.close()

        server = await asyncio.start_server(
            on_connect, "127.0.0.1", 0, ssl=internet.server_context((*DEFAULT_NAMES, host))
        )
        servers.append(server)
        local = server.sockets[0].getsockname()[1]
        internet.dns[host] = [ip]
        internet.routes[(ip, port)] = ("127.0.0.1", local)
        return int(local)

    yield start
    for task in list(handlers):
        task.cancel()
    for server in servers:
        server.close()
        await server.wait_closed()


async def read_head(reader: asyncio.StreamReader) -> bytes:
    """Read one request's head and body (by Content-Length) so the client sees its request
    consumed before the response."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return head


@pytest.fixture
async def serve_plain(internet: FakeInternet) -> AsyncIterator[Callable[..., Awaitable[Served]]]:
    """``await serve_plain(host, handler, ip=..., port=...)``: a plain-HTTP loopback server (a
    LAN service such as a self-hosted SearXNG), reached through the fake resolver."""
    runners: list[web.AppRunner] = []

    async def start(
        host: str,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
        *,
        ip: str = "192.168.1.20",
        port: int = 8888,
    ) -> Served:
        served_box: list[Served] = []

        async def endpoint(request: web.Request) -> web.StreamResponse:
            served = served_box[0]
            served.request_lines.append(f"{request.method} {request.raw_path}")
            served.headers.append(dict(request.headers))
            return await handler(request)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", endpoint)
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        local = runner.addresses[0][1]
        served_box.append(Served(runner=runner, port=local))
        if not host.replace(".", "").isdigit():
            internet.dns[host] = [ip]
        internet.routes[(ip, port)] = ("127.0.0.1", local)
        return served_box[0]

    yield start
    for runner in runners:
        await runner.cleanup()
