"""Fixtures for the browser tests: one real headless Chromium per test module, on the fake
internet.

Every test of a module runs in the module's event loop (``loop_scope="module"``), so the
browser process, which belongs to a loop, is started once per module and closed after it. The
tests need Debian's Chromium and Playwright (``.ci/run`` installs the first, the ``test`` extra
the second); without them they fail, saying so, rather than skip.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping

import pytest
import pytest_asyncio
import trustme
from aiohttp import web

from runvil.web import FetchPolicy, WebFetch
from runvil.web._fetch.browser.discovery import find_browser
from runvil.web._fetch.browser.process import close_browsers, process_for
from tests.fixtures.internet import DEFAULT_NAMES, Canary, FakeInternet, Served

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SiteFactory = Callable[..., Awaitable[Served]]
FetchFactory = Callable[..., WebFetch]


@pytest.fixture(scope="session", autouse=True)
def browser_available() -> None:
    status = find_browser()
    if not status.usable:
        pytest.fail(f"the browser tests need a usable Chromium: {status.reason}")


@pytest_asyncio.fixture(loop_scope="module", scope="module", autouse=True)
async def one_browser_per_module() -> AsyncIterator[None]:
    process_for(find_browser()).retain()  # the module's tools come and go; the browser stays
    yield
    await close_browsers()


@pytest_asyncio.fixture(loop_scope="module")
async def internet(test_ca: trustme.CA) -> AsyncIterator[FakeInternet]:
    """The suite's fake internet, in the module's loop; its canary fails the test if reached."""
    canary = Canary()
    await canary.start()
    net = FakeInternet(test_ca, canary)
    try:
        yield net
    finally:
        await net.close()
        await canary.stop()
    assert canary.hits == [], f"the canary listener was reached: {canary.hits}"


@pytest_asyncio.fixture(loop_scope="module")
async def make_fetch(internet: FakeInternet) -> AsyncIterator[FetchFactory]:
    made: list[WebFetch] = []

    def make(policy: FetchPolicy | None = None, **fields: object) -> WebFetch:
        chosen = policy if policy is not None else FetchPolicy(**fields)  # type: ignore[arg-type]
        fetch = WebFetch(policy=chosen, network=internet.network())
        made.append(fetch)
        return fetch

    yield make
    for fetch in made:
        await fetch.aclose()


@pytest.fixture
def site(internet: FakeInternet) -> SiteFactory:
    """``await site({"/": handler}, hosts=("example.com",), ip=...)`` serves the routes."""

    async def serve(
        routes: Mapping[str, Handler],
        *,
        hosts: Iterable[str] = ("example.com",),
        ip: str = "93.184.216.34",
    ) -> Served:
        app = web.Application()
        for path, handler in routes.items():
            app.router.add_route("*", path, handler)
        hosts = tuple(hosts)
        names = (*DEFAULT_NAMES, *hosts)  # a certificate for exactly the hosts served
        return await internet.serve(app, hosts=hosts, ip=ip, names=names)

    return serve


def html(body: str) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/html")

    return handler


def typed(body: str, content_type: str) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type=content_type)

    return handler


def to(location: str, status: int = 302) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, headers={"Location": location})

    return handler
