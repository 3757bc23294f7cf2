"""Helpers for serving fake vendor APIs behind the fake internet."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

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
            app = web.Application()
            app.router.add_route(method, path, handler)
        return await internet.serve(
            app, hosts=(host,), ip=ip, port=port, names=(*DEFAULT_NAMES, host)
        )

    return start
