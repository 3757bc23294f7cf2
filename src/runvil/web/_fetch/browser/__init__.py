"""Pages that JavaScript builds: a headless browser with no network of its own.

:class:`BrowserReader` is what the fetch tool calls (``FetchPolicy(browser="auto"|"always")``;
with the default ``"never"`` the tool builds none and nothing here is imported): :meth:`read`
for an HTML page, :meth:`recalled` for a continuation slice. It is handed the page the ordinary
hop loop fetched (its redirects already followed under the seeds' rules)
and the tool's own rendering, and returns the page's outcome
(:class:`~runvil.web._fetch.outcome.FetchOutcome`):

- ``auto``: the static rendering first; only a page that looks like an empty app shell
  (:mod:`.shell`) goes on to the browser;
- ``always``: every HTML page goes to the browser.

In the browser (:mod:`.page`) the page runs in a fresh context whose every request is answered
through the fetch's guard (:mod:`.guarded`), in a Chromium that can reach nothing by itself
(:mod:`.sandbox`), shared by the process and restarted when it fails (:mod:`.process`), with
pages taking turns fairly between runs (:mod:`.schedule`). The DOM it settles on goes through
the same rendering, caps, continuation and header as a static page, and the outcome says
``rendered_by="browser"`` (the header's last line, ``rendered: browser``), as does every
continuation slice read from it. A page the browser cannot finish (its deadline, a crash)
gets the ordinary soft failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable

from runvil._net.client import EgressClient
from runvil._tools import RunScope, current_run
from runvil.web._fetch import failures
from runvil.web._fetch.admission import TargetUrl
from runvil.web._fetch.arguments import FetchRequest
from runvil.web._fetch.browser.discovery import BrowserStatus, find_browser
from runvil.web._fetch.browser.guarded import Resource, guarded_get
from runvil.web._fetch.browser.page import (
    MAX_SNAPSHOT_BYTES,
    LeftThePage,
    PageCounts,
    render_dom,
)
from runvil.web._fetch.browser.process import BrowserProcess, process_for
from runvil.web._fetch.browser.shell import looks_like_app_shell
from runvil.web._fetch.content import BodyKind, UnknownCharset, decode_body
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import Page
from runvil.web._fetch.outcome import FetchOutcome
from runvil.web._fetch.policy import FetchPolicy

__all__ = ["RENDERER", "BrowserReader"]

logger = logging.getLogger("runvil.web.fetch")

#: ``rendered_by`` of a page the browser rendered (its header's last line: ``rendered: browser``).
RENDERER = "browser"
#: Rendered pages remembered per run for continuation (as many as a run's store may keep).
REMEMBERED_PAGES = 4096

Render = Callable[[Page, FetchRequest], Awaitable[FetchOutcome]]


class BrowserReader:
    """The browser step of one ``WebFetch`` (see the module docstring)."""

    def __init__(self, policy: FetchPolicy, rules: HostRules | None = None) -> None:
        self.policy = policy
        self.rules = rules
        self.status: BrowserStatus = find_browser(policy.browser_path)
        self.scope = RunScope()
        """The run of calls made outside any Host run: the tool's own life."""
        self._process: BrowserProcess | None = None
        self._rendered: weakref.WeakKeyDictionary[RunScope, dict[tuple[str, bool], None]] = (
            weakref.WeakKeyDictionary()
        )
        """Per run, the kept pages the browser rendered (an ordered set, oldest first)."""
        self._warned = False
        self.last_counts: PageCounts | None = None
        """The requests of the last page rendered (what the tests and the bench read)."""

    async def read(
        self,
        client: EgressClient,
        page: Page,
        request: FetchRequest,
        render: Render,
    ) -> FetchOutcome:
        """The outcome of the HTML ``page``: static, or rendered in the browser, whose every
        request goes through ``client`` (the fetch's own egress client)."""
        static: FetchOutcome | None = None
        if self.policy.browser == "auto":
            static = await render(page, request)
            if not looks_like_app_shell(page.body, _text_of(static)):
                return static
        if not self.status.usable:
            if not self._warned:
                self._warned = True
                logger.error("no page can be rendered in a browser: %s", self.status.reason)
            return static if static is not None else await render(page, request)
        try:
            html = decode_body(page.body, page.charset)
        except UnknownCharset:
            return static if static is not None else await render(page, request)
        browsed = await self._browse(client, page, html)
        if isinstance(browsed, failures.SoftFailure):
            return FetchOutcome.soft(browsed.text, browsed.cause, browsed.certificate)
        if browsed is page:  # the browser had nothing to add (see _browse)
            return static if static is not None else await render(page, request)
        self._remember(page.target.href, request.raw)
        return _mark_rendered(await render(browsed, request))

    def recalled(
        self, target: TargetUrl, request: FetchRequest, kept: FetchOutcome
    ) -> FetchOutcome:
        """A continuation slice read from a kept page: marked when the browser rendered it."""
        if (target.href, request.raw) in self._rendered.get(self._run(), ()):
            return _mark_rendered(kept)
        return kept

    def _run(self) -> RunScope:
        return current_run.get() or self.scope

    def _forget(self, run: RunScope) -> None:
        self._rendered.pop(run, None)

    def _remember(self, href: str, raw: bool) -> None:
        """Under continuation, the run keeps this page's rendered text: remember that the
        browser rendered it, for the slices read from it later (until the run ends)."""
        if not self.policy.continuation:
            return
        run = self._run()
        rendered = self._rendered.get(run)
        if rendered is None:
            rendered = self._rendered[run] = {}
            run.on_end(lambda: self._forget(run))
        rendered.pop((href, raw), None)
        rendered[(href, raw)] = None
        while len(rendered) > REMEMBERED_PAGES:
            del rendered[next(iter(rendered))]

    async def _browse(
        self, client: EgressClient, page: Page, html: str
    ) -> Page | failures.SoftFailure:
        """The page's DOM as a page to render, ``page`` itself when the browser has nothing of
        it to read (it navigated itself away), or the soft failure."""
        process = self._process
        if process is None or process.loop is not asyncio.get_running_loop():
            # A tool used from another event loop uses that loop's browser (as its session).
            process = self._process = process_for(self.status)
            process.retain()
        target = page.target
        policy = self.policy

        async def fetch(url: str, limit: int) -> Resource | None:
            try:
                async with asyncio.timeout(policy.timeout):  # each request: a fetch's limit
                    return await guarded_get(client, policy, self.rules, url, limit)
            except Exception:  # a timeout, or whatever an injected resolver raised: refused
                logger.debug("a page's request for %s failed", url, exc_info=True)
                return None

        counts = self.last_counts = PageCounts()
        await process.gate.acquire(current_run.get() or self.scope)
        try:
            deadline = time.monotonic() + policy.browser_timeout
            try:
                browser = await process.browser()
                dom = await render_dom(
                    browser, target.href, html, fetch, deadline, policy.max_bytes, counts
                )
            except TimeoutError:
                await process.check()
                return failures.timed_out(target.display)
            except LeftThePage as left:
                logger.info("%s navigated itself to %s: read statically", target.display, left)
                return page  # what runvil fetched, rendered as without a browser
            except Exception:
                logger.warning("the browser failed on %s", target.display, exc_info=True)
                await process.kill()
                return failures.network_error(target.href)
        finally:
            process.gate.release()
        body = dom.encode("utf-8", "replace")
        cut = len(body) > MAX_SNAPSHOT_BYTES
        if cut:
            body = body[:MAX_SNAPSHOT_BYTES]
        return Page(target, BodyKind.HTML, "utf-8", body, cut)

    async def aclose(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            await process.release()


def _mark_rendered(outcome: FetchOutcome) -> FetchOutcome:
    """``outcome`` rendered by the browser (a failure, which has no header, unchanged)."""
    if outcome.ok:
        outcome.rendered_by = RENDERER
    return outcome


def _text_of(outcome: FetchOutcome) -> str:
    """The text of a page (without its header), or the whole text of a failure."""
    return outcome.text if outcome.ok else outcome.message or ""
