"""``web/fetch``: arguments in, one page out as text with its provenance header.

:class:`WebFetch` is the tool. It owns one aiohttp session (a keep-alive pool guarded per hop,
see :mod:`runvil._net.connector`), made inside the running event loop either by
``async with`` or lazily on the first call, because a Host builds its tools before any loop runs.

A call goes: arguments (:mod:`.arguments`) -> URL admission (:mod:`.admission`, no network yet)
-> the fetch task (resolve, dial, redirects, body under the caps) -> decoding -> extraction
(in a worker thread for large HTML, so a hostile page cannot freeze the event loop, under the
process-wide memory budget and by the policy's ``render_timeout``: :mod:`.rendering`) -> the
``max_chars`` cut -> the result text. Every soft failure is returned as the whole result
text; hard failures raise :class:`~runvil._errors.ToolError`.

The fetch runs in a task of its own, awaited by the call, under one whole-request deadline (a
timer that cancels the task while it is still on the network). Cancelling the call cancels the task
and waits for it, so the connection is closed at once and nothing outlives the call. A task that
ends without a result for any other reason (cancelled from elsewhere, or an unexpected exception
from an injected resolver) fails the call with kind Other, ``web_fetch: the fetch task did not
finish``, and is logged with its traceback for the operator.

A policy that turns on a reading extension (continuation, PDFs, robots.txt) adds four hooks to
this path, all in :mod:`.reading`; with the seeds' default policy there are none.
:meth:`WebFetch.fetch` is the same call read for a Python program (:mod:`.result`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

import aiohttp

from runvil._closing import AsyncClosing
from runvil._errors import ToolError, ToolErrorKind
from runvil._net import Network
from runvil._net.network import with_ca_bundle
from runvil._net.proxy import Proxies
from runvil._tools import Tool, current_run
from runvil.web._fetch import failures, rendering
from runvil.web._fetch.admission import UrlRefused, admit_url
from runvil.web._fetch.arguments import FetchRequest, parameters_schema, parse_arguments
from runvil.web._fetch.content import BodyKind, UnknownCharset, decode_body
from runvil.web._fetch.deadlines import DeadlineQueue
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.hosts import host_rules
from runvil.web._fetch.http import Page, Progress, open_fetch_session
from runvil.web._fetch.pagetext import PageText, cut_text, rendered, verbatim
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.reading import reading_for
from runvil.web._fetch.redirects import fetch_page
from runvil.web._fetch.result import FetchResult, parse_result

if TYPE_CHECKING:
    from runvil.web._fetch.browser import BrowserReader

logger = logging.getLogger("runvil.web.fetch")

TOOL_ID = "web/fetch"
#: HTML bodies up to this size are rendered on the event loop (a thread hand-off would cost more
#: than the rendering, and the extractor's pre-parse pass keeps such a page to milliseconds);
#: larger ones in a worker thread, under the process-wide budget of :mod:`.rendering`.
RENDER_INLINE_LIMIT = 16 * 1024
DESCRIPTION = "Fetch a web page and return its main content as markdown."


class WebFetch(AsyncClosing):
    """The ``web/fetch`` tool: ``await fetch.call({"url": ...})`` returns the result text."""

    def __init__(self, policy: FetchPolicy | None = None, network: Network | None = None) -> None:
        self.policy = policy if policy is not None else FetchPolicy()
        self.network = with_ca_bundle(
            network if network is not None else Network(), self.policy.ca_bundle
        )
        self._rules = host_rules(self.policy)
        self._proxies = Proxies(self.policy.proxy, self.network) if self.policy.proxy else None
        self.tool = Tool(
            id=TOOL_ID,
            description=DESCRIPTION,
            parameters=parameters_schema(
                self.policy.max_chars, continuation=self.policy.continuation
            ),
        )
        self._reading = reading_for(self.policy)
        self._browser: BrowserReader | None = None
        if self.policy.browser != "never":  # the browser package is imported only then
            from runvil.web._fetch.browser import BrowserReader

            self._browser = BrowserReader(self.policy, self.network, self._rules)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._deadlines: DeadlineQueue | None = None

    async def __aenter__(self) -> Self:
        self._ensure_session()
        return self


    async def aclose(self) -> None:
        """Close the connection pool. A later call opens a new one."""
        session, self._session, self._loop = self._session, None, None
        if self._browser is not None:
            await self._browser.aclose()
        if session is not None and not session.closed:
            await session.close()

    async def fetch(
        self,
        url: str,
        max_chars: int | None = None,
        raw: bool = False,
        *,
        start_index: int | None = None,
    ) -> FetchResult:
        """Fetch ``url`` for a Python program: the outcome as a :class:`FetchResult`, never an
        exception for anything the fetch meets (a hard failure is ``ok=False`` with its kind).

        The same call as :meth:`call` with these arguments, read for you instead of parsed by
        you. ``start_index`` needs a policy with ``continuation`` (``ValueError`` otherwise).
        """
        arguments: dict[str, Any] = {"url": url, "max_chars": max_chars, "raw": raw}
        if start_index is not None:
            if not self.policy.continuation:
                raise ValueError("start_index needs FetchPolicy(continuation=True)")
            arguments["start_index"] = start_index
        try:
            text = await self.call(arguments)
        except ToolError as error:
            return FetchResult.failure(error.kind.value, error.message)
        return parse_result(text)

    async def call(self, arguments: object) -> str:
        """Run one fetch. Success and soft failures return text; hard failures raise."""
        request = parse_arguments(
            arguments, self.policy.max_chars, continuation=self.policy.continuation
        )
        try:
            target = admit_url(request.url, self._rules)
        except UrlRefused as refusal:
            if refusal.soft:
                return refusal.message
            raise ToolError(ToolErrorKind.InvalidArguments, refusal.message) from None
        if self._reading is not None:
            kept = self._reading.recall(target, request)
            if kept is not None:
                if self._browser is not None:
                    kept = self._browser.recalled(target, request, kept)
                return kept  # continuation: the page this run keeps, read without a fetch
        session = self._ensure_session()
        loop = self._loop
        assert loop is not None  # set by _ensure_session
        progress = Progress(target)
        task = loop.create_task(self._run(session, progress, request))
        deadlines = self._deadline_queue(loop)
        deadline = deadlines.call_later(self.policy.timeout, _expire, task, progress)
        try:
            return await task
        except ToolError:
            raise
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the call itself was cancelled: the task has already closed everything
            if progress.expired:
                return _deadline_text(progress)
            logger.error("web_fetch task for %s was cancelled outside its call", target.display)
            raise failures.task_did_not_finish() from None
        except Exception:
            logger.exception("web_fetch task for %s failed", target.display)
            raise failures.task_did_not_finish() from None
        finally:
            deadline.cancel()

    async def _run(
        self, session: aiohttp.ClientSession, progress: Progress, request: FetchRequest
    ) -> str:
        reading = self._reading
        before_hop = (
            None if reading is None else reading.before_hop(session, self.network, self._rules)
        )
        try:
            page = await fetch_page(
                session, self.network, self.policy, progress, self._rules, before_hop
            )
        except failures.SoftFailure as failure:
            return failure.text
        progress.finished = True  # the deadline covers the network only
        if self._browser is not None and page.kind is BodyKind.HTML:
            return await self._browser.read(session, page, request, self._render)
        return await self._render(page, request)

    async def _render(self, page: Page, request: FetchRequest) -> str:
        """The result text of a fetched page: rendered, converted or refused."""
        reading = self._reading
        deadline = time.monotonic() + self.policy.render_timeout
        render: Callable[[Page, FetchRequest, float | None], str] = render_page
        if reading is not None:
            if page.kind is BodyKind.PDF:
                return await reading.convert(page, request)  # a worker process, its own limit
            render = reading.render or render_page
        if page.kind is not BodyKind.HTML or len(page.body) <= RENDER_INLINE_LIMIT:
            return render(page, request, deadline)
        # Rendering is CPU work no deadline can interrupt; off the loop thread, every other call
        # in the process keeps running. It waits for room under the process's memory budget
        # until its deadline, then renders the page as plain text instead.
        gate = rendering.gate
        # A rendering kept for continuation keeps the byte cap's number of characters.
        chars = request.max_chars if render is render_page else self.policy.max_bytes
        room = rendering.reservation(len(page.body), chars)
        if await gate.acquire(room, deadline):
            return await rendering.run_in_thread(
                lambda: render(page, request, deadline), lambda: gate.release(room)
            )
        logger.warning("no room to render %s before its deadline: plain text", page.target.display)
        caller = current_run.get() or self  # text renderings are taken from callers in turn
        return await rendering.run_fallback(lambda: render(page, request, 0.0), caller)

    def _ensure_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            if session is not None and not session.closed:
                # A session belongs to the loop it was made in, and one left behind by another
                # loop cannot be closed from this one: let it go without a close that would fail.
                session.detach()
            session = self._session = open_fetch_session(
                self.network, self.policy, self._proxies
            )
            self._loop = loop
        return session

    def _deadline_queue(self, loop: asyncio.AbstractEventLoop) -> DeadlineQueue:
        """The queue that holds this tool's deadlines in ``loop`` (one per loop, as a session)."""
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = DeadlineQueue(loop)
        return deadlines


def _expire(task: asyncio.Task[str], progress: Progress) -> None:
    """The whole-request deadline: cancel a fetch still on the network.

    A deadline per call on the fetch's own task, rather than an ``asyncio.timeout`` block inside
    it: the task is there anyway (it is what the call awaits), and the deadlines of all calls
    share one loop timer (:mod:`.deadlines`). ``expired`` tells the call that this cancellation
    was the deadline and not someone else's.
    """
    if not progress.finished:
        progress.expired = True
        task.cancel()


def _deadline_text(progress: Progress) -> str:
    """The deadline's soft text, naming the hop in flight: a body that was still arriving
    "could not be read", anything earlier (lookup, connect, response head) "timed out"."""
    display = progress.target.display
    if progress.reading_body:
        return failures.body_unreadable(display).text
    return failures.timed_out(display).text


def render_page(page: Page, request: FetchRequest, deadline: float | None = None) -> str:
    """Decode, extract, cut to ``max_chars`` and put the provenance header on top.

    ``deadline`` (``time.monotonic()``) bounds the HTML rendering: past it, the page's plain-text
    rendering comes back instead (``render_html``)."""
    final = page.target
    try:
        body = decode_body(_needed_bytes(page, request.max_chars), page.charset)
    except UnknownCharset as unknown:
        return failures.unknown_charset(final.display, unknown.label).text
    text: PageText
    if page.kind is BodyKind.HTML:
        markdown, extraction = render_html(
            body, final.href, request.raw, max_chars=request.max_chars, deadline=deadline
        )
        text = rendered(markdown)
    else:
        text, extraction = verbatim(body), "plain"
    truncated = page.cut_at_cap
    if len(text) > request.max_chars:
        text = cut_text(text, request.max_chars)
        truncated = True
    return (
        f"url: {final.href}\n"
        f"truncated: {'true' if truncated else 'false'}\n"
        f"extraction: {extraction}\n"
        f"\n"
        f"{text}"
    )


def _needed_bytes(page: Page, max_chars: int) -> bytes:
    """The part of the body that decides the result text.

    A verbatim (non-HTML) UTF-8 body only ever shows its first ``max_chars`` characters, and
    ``max_chars + 1`` characters never take more than ``4 * (max_chars + 1)`` bytes (a BOM
    included, given the margin), so decoding an 8 MiB body to return 40,000 characters decodes
    only the first 160 KB. The text and the ``truncated`` flag come out exactly as from the whole
    body: UTF-8 decoding is self-synchronising, so every character that ends inside the prefix
    decodes the same, and a prefix that short of the body always holds more than ``max_chars``
    characters. Other charsets (some stateful, with escapes) are decoded whole.
    """
    limit = 4 * (max_chars + 2)
    if page.kind is BodyKind.HTML or len(page.body) <= limit or not _is_utf8(page.charset):
        return page.body
    return page.body[:limit]


def _is_utf8(charset: str | None) -> bool:
    return charset is None or charset.strip(" \t\n\f\r").lower() in ("utf-8", "utf8")
