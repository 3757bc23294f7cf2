"""A small round-robin HTTP load balancer for the fleet tests: each request goes to the next
replica in turn (not each connection, so a client's keep-alive does not pin it to one), with
its ``Host`` rewritten to the replica's address, and a response streamed back as it comes (an
MCP answer may be a server-sent event stream). A replica that refuses the connection is skipped
for the next one, as a load balancer's passive health check does."""

from __future__ import annotations

import itertools
from collections import Counter

import aiohttp
from aiohttp import web

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "host",
        "content-length", "proxy-connection"}


class Balancer:
    def __init__(self, backends: list[str]) -> None:
        self.backends = list(backends)
        """Each replica's ``host:port``."""
        self.served: Counter[str] = Counter()
        self._turn = itertools.count()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> str:
        self._session = aiohttp.ClientSession(
            auto_decompress=False, timeout=aiohttp.ClientTimeout(total=60)
        )
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        for _ in range(len(self.backends)):
            backend = self.backends[next(self._turn) % len(self.backends)]
            try:
                upstream = await self._session.request(
                    request.method, f"http://{backend}{request.rel_url}", data=body,
                    headers={**headers, "Host": backend}, allow_redirects=False,
                )
            except aiohttp.ClientConnectionError:
                continue  # that replica is gone: the next one
            self.served[backend] += 1
            async with upstream:
                response = web.StreamResponse(status=upstream.status, headers={
                    k: v for k, v in upstream.headers.items() if k.lower() not in _HOP
                })
                await response.prepare(request)
                try:
                    async for chunk in upstream.content.iter_any():
                        await response.write(chunk)
                    await response.write_eof()
                except (ConnectionResetError, aiohttp.ClientConnectionError):
                    pass  # the client went away (or the replica did): nothing left to relay
                return response
        return web.Response(status=502, text="no replica answered")
