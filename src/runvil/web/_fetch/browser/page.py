"""One page in the browser: a fresh context, every request intercepted, settle, snapshot.

The page never touches the network. Its first navigation is answered with the document runvil
already fetched (the seeds' redirect rules were applied by the ordinary hop loop); every later
request of the page is decided here:

- a top-level navigation after the first (``location = ...``, ``<meta http-equiv=refresh>``, a
  form submission, ``window.open``, a link a script clicks) is refused, so what is read is
  always the page that was asked for;
- a script, stylesheet, frame document, ``fetch()`` or XHR made with ``GET`` is fetched through
  the guard (:mod:`.guarded`) and handed to the browser;
- everything else is refused: images, media, fonts, beacons and pings, manifests, prefetches,
  any other method (a page's scripts never send data anywhere), and WebSockets (Playwright's
  request interception does not see those, so they have a refusal of their own).

Each context starts empty (no cookie, storage, cache or service worker from any other fetch)
with service workers blocked, downloads refused and no permission granted. A page may make at
most :data:`MAX_REQUESTS` requests and receive :data:`MAX_PAGE_BYTES` decoded bytes (each
response under the policy's byte cap); past either, its requests fail.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Browser, Route, WebSocketRoute
    from playwright.async_api import Page as BrowserPage

from runvil.web._fetch.browser.guarded import Resource

__all__ = [
    "MAX_PAGE_BYTES",
    "MAX_REQUESTS",
    "MAX_SNAPSHOT_BYTES",
    "LeftThePage",
    "PageCounts",
    "render_dom",
]

logger = logging.getLogger("runvil.web.fetch")

#: Requests one page may make (the first document not counted).
MAX_REQUESTS = 256
#: Decoded bytes all of one page's responses may bring together.
MAX_PAGE_BYTES = 32 * 1024 * 1024
#: The DOM snapshot is cut here before it is rendered.
MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024
#: The page has settled when no request has been in flight for this long (seconds).
QUIET = 0.5
#: Resource types fetched through the guard; every other type is refused.
FETCHED_TYPES = frozenset({"document", "script", "stylesheet", "fetch", "xhr"})

Fetcher = Callable[[str, int], Awaitable[Resource | None]]


class LeftThePage(Exception):
    """The page's main frame ended on another document than the one runvil handed it."""


class PageCounts:
    """What one page asked for and what it got (for its limits, and for the tests)."""

    __slots__ = ("bytes", "fetched", "in_flight", "last_activity", "refused", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.fetched = 0
        self.refused = 0
        self.bytes = 0
        self.in_flight = 0
        self.last_activity = time.monotonic()


async def render_dom(
    browser: Browser,
    href: str,
    html: str,
    fetch: Fetcher,
    deadline: float,
    byte_cap: int,
    counts: PageCounts | None = None,
) -> str:
    """Load ``html`` as the document at ``href`` in a fresh context, let it settle (network
    quiet for :data:`QUIET` seconds, or ``deadline``) and return its DOM serialised.

    Raises :class:`TimeoutError` past ``deadline``, and Playwright's errors when the browser
    fails.
    """
    counts = counts if counts is not None else PageCounts()
    context = await browser.new_context(
        service_workers="block",
        accept_downloads=False,
        permissions=[],
        java_script_enabled=True,
        ignore_https_errors=False,
    )
    try:
        page = await context.new_page()
        state = _Interceptor(page, href, html, fetch, byte_cap, counts)
        await context.route("**/*", state.route)
        await context.route_web_socket("**/*", _refuse_socket)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        async with asyncio.timeout(remaining):
            # "commit", not "load": a script that starts another navigation before the load
            # event (refused below) would leave Playwright waiting for a load that never comes.
            await page.goto(href, wait_until="commit", timeout=remaining * 1000)
            await _settle(page, counts, deadline)
            if not page.main_frame.url.startswith(("https:", "http:")):
                # The page replaced itself with a document runvil did not fetch (about:blank, a
                # blob: URL): nothing of the page asked for is left to read. (Every http(s)
                # navigation after the first was answered 204 and never left the page; a
                # history.pushState() keeps the document, and the scheme.)
                raise LeftThePage(page.main_frame.url)
            return await page.content()
    finally:
        try:
            await asyncio.wait_for(context.close(), 5.0)
        except Exception:
            logger.debug("a browser context did not close", exc_info=True)


async def _settle(page: BrowserPage, counts: PageCounts, deadline: float) -> None:
    """Return once the document has loaded and no request has been in flight for
    :data:`QUIET` seconds (or at the deadline, less a moment for the snapshot)."""
    loaded = False
    while True:
        now = time.monotonic()
        if now >= deadline - 0.25:
            return
        if not loaded:
            try:
                loaded = await page.evaluate("document.readyState") == "complete"
            except Exception:  # the page navigated itself meanwhile: ask again
                counts.last_activity = time.monotonic()
        elif counts.in_flight == 0 and now - counts.last_activity >= QUIET:
            return
        await asyncio.sleep(0.05)


async def _refuse_socket(socket: WebSocketRoute) -> None:
    await socket.close(code=1008, reason="refused")


class _Interceptor:
    """The route handler of one page (see the module docstring)."""

    def __init__(
        self,
        page: BrowserPage,
        href: str,
        html: str,
        fetch: Fetcher,
        byte_cap: int,
        counts: PageCounts,
    ) -> None:
        self.page = page
        self.href = href
        self.html = html
        self.fetch = fetch
        self.byte_cap = byte_cap
        self.counts = counts
        self.navigated = False

    async def route(self, route: Route) -> None:
        request = route.request
        counts = self.counts
        counts.last_activity = time.monotonic()
        try:
            frame = request.frame
        except Exception:  # a service worker's request has no frame
            await self._refuse(route)
            return
        if request.is_navigation_request() and frame.parent_frame is None:
            if frame.page is self.page and not self.navigated:
                self.navigated = True
                await route.fulfill(
                    status=200,
                    headers={"content-type": "text/html; charset=utf-8"},
                    body=self.html,
                )
                return
            # Any later top-level navigation, and any pop-up: answered "204 No Content", which
            # ends a navigation where it started (an aborted one would show an error page).
            self.counts.refused += 1
            try:
                await route.fulfill(status=204, body=b"")
            except Exception:
                logger.debug("a refused navigation's page closed", exc_info=True)
            return
        if request.method != "GET" or request.resource_type not in FETCHED_TYPES:
            await self._refuse(route)
            return
        if frame.page is not self.page:
            await self._refuse(route)
            return
        counts.requests += 1
        room = MAX_PAGE_BYTES - counts.bytes
        if counts.requests > MAX_REQUESTS or room <= 0:
            await self._refuse(route)
            return
        counts.in_flight += 1
        try:
            resource = await self.fetch(request.url, min(self.byte_cap, room))
        finally:
            counts.in_flight -= 1
            counts.last_activity = time.monotonic()
        if resource is None:
            await self._refuse(route)
            return
        counts.fetched += 1
        counts.bytes += len(resource.body)
        try:
            await route.fulfill(
                status=resource.status, headers=resource.headers, body=resource.body
            )
        except Exception:  # the page went away meanwhile
            logger.debug("a request's page closed before its answer", exc_info=True)

    async def _refuse(self, route: Route) -> None:
        self.counts.refused += 1
        try:
            await route.abort("blockedbyclient")
        except Exception:
            logger.debug("a refused request's page closed", exc_info=True)
