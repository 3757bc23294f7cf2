"""``web/fetch``: arguments in, one page out as text with its provenance header.

:class:`WebFetch` is the tool. It owns one egress client (:mod:`runvil._net.client`: a
keep-alive pool guarded per hop), whose pool is made inside the running event loop either by
``async with`` or lazily on the first call, because a Host builds its tools before any loop runs.

A call goes: arguments (:mod:`.arguments`) -> URL admission (:mod:`.admission`, no network yet)
-> the fetch task (resolve, dial, redirects, body under the caps) -> decoding -> extraction
(in a worker thread for large HTML, so a hostile page cannot freeze the event loop, under the
process-wide memory budget and by the policy's ``render_timeout``: :mod:`.rendering`) -> the
``max_chars`` cut (:mod:`.pagetext`, the one pipeline) -> one typed outcome (:mod:`.outcome`),
whose text the model reads. Every soft failure is an outcome too (its text is the whole result
text); hard failures raise :class:`~runvil._errors.ToolError`. :meth:`WebFetch.call_outcome`
returns the outcome (the Host calls it, so a face reads the fields), :meth:`WebFetch.call` its
text.

The fetch runs in a task of its own, awaited by the call, under one whole-request deadline (a
timer that cancels the task while it is still on the network). Cancelling the call cancels the task
and waits for it, so the connection is closed at once and nothing outlives the call. A task that
ends without a result for any other reason (cancelled from elsewhere, or an unexpected exception
from an injected resolver) fails the call with kind Other, ``web_fetch: the fetch task did not
finish``, and is logged with its traceback for the operator.

A policy that turns on a reading extension (continuation, PDFs, robots.txt) adds four hooks to
this path, all in :mod:`.reading`; with the seeds' default policy there are none.
A policy with a browser (``browser="auto"|"always"``) hands an HTML page to
:class:`~runvil.web._fetch.browser.BrowserReader`, with this tool's egress client (every
request the page makes goes through it) and rendering; its outcome says ``rendered_by``.
:meth:`WebFetch.fetch` is the same call read for a Python program (:mod:`.result`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from runvil._closing import AsyncClosing
from runvil._errors import ToolError, ToolErrorKind
from runvil._net import Network
from runvil._net.hostnames import host_key
from runvil._net.network import with_ca_bundle
from runvil._net.proxy import Proxies
from runvil._tools import Tool, current_run
from runvil.web._fetch import failures, rendering
from runvil.web._fetch.admission import UrlRefused, admit_url
from runvil.web._fetch.arguments import (
    FetchRequest,
    offers_start_index,
    parameters_schema,
    parse_arguments,
    reads_on,
)
from runvil.web._fetch.content import BodyKind
from runvil.web._fetch.deadlines import DeadlineQueue
from runvil.web._fetch.hosts import host_rules
from runvil.web._fetch.http import Page, Progress, fetch_client
from runvil.web._fetch.outcome import AddressRefused, FetchOutcome
from runvil.web._fetch.pagetext import render_held
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.reading import reading_for
from runvil.web._fetch.redirects import fetch_page
from runvil.web._fetch.result import FetchResult

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
                self.policy.max_chars, continuation=offers_start_index(self.policy)
            ),
        )
        self._reading = reading_for(self.policy)
        self._client = fetch_client(self.network, self.policy, self._proxies)
        self._browser: BrowserReader | None = None
        if self.policy.browser != "never":  # the browser package is imported only then
            from runvil.web._fetch.browser import BrowserReader

            self._browser = BrowserReader(self.policy, self._rules)
        self._deadlines: DeadlineQueue | None = None

    async def __aenter__(self) -> Self:
        self._client.start()
        return self

    async def aclose(self) -> None:
        """Close the connection pool (and let go of the browser, with one). A later call opens
        a new one."""
        if self._browser is not None:
            await self._browser.aclose()
        await self._client.aclose()

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
            if not reads_on(self.tool.parameters):
                raise ValueError("start_index needs FetchPolicy(continuation=True)")
            arguments["start_index"] = start_index
        try:
            outcome = await self.call_outcome(arguments)
        except ToolError as error:
            outcome = FetchOutcome.from_error(error)
        return FetchResult.from_outcome(outcome)

    async def call(self, arguments: object) -> str:
        """Run one fetch. Success and soft failures return text; hard failures raise."""
        return (await self.call_outcome(arguments)).model_text()

    async def call_outcome(self, arguments: object) -> FetchOutcome:
        """Run one fetch: its outcome as one typed value (the page, or a soft failure); a hard
        failure raises :class:`~runvil._errors.ToolError`. The text a model reads is rendered
        from the outcome (:meth:`~runvil.web._fetch.outcome.FetchOutcome.model_text`)."""
        request = parse_arguments(
            arguments, self.policy.max_chars, continuation=offers_start_index(self.policy)
        )
        try:
            target = admit_url(request.url, self._rules)
        except UrlRefused as refusal:
            if refusal.soft:
                return FetchOutcome.soft(refusal.message)
            raise ToolError(ToolErrorKind.InvalidArguments, refusal.message) from None
        if self._reading is not None:
            kept = self._reading.recall(target, request)
            if kept is not None:
                if self._browser is not None:
                    kept = self._browser.recalled(target, request, kept)
                return kept  # continuation: the page this run keeps, read without a fetch
        loop = asyncio.get_running_loop()
        progress = Progress(target)
        task = loop.create_task(self._run(progress, request))
        deadlines = self._deadline_queue(loop)
        deadline = deadlines.call_later(self.policy.timeout, _expire, task, progress)
        try:
            return await task
        except AddressRefused as refused:
            # Reached by a redirect from another host (a person's hint tells the two apart).
            refused.redirected = host_key(progress.target.host) != host_key(target.host)
            raise
        except ToolError:
            raise
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the call itself was cancelled: the task has already closed everything
            if progress.expired:
                return FetchOutcome.soft(_deadline_text(progress))
            logger.error("web_fetch task for %s was cancelled outside its call", target.display)
            raise failures.task_did_not_finish() from None
        except Exception:
            logger.exception("web_fetch task for %s failed", target.display)
            raise failures.task_did_not_finish() from None
        finally:
            deadline.cancel()

    async def _run(self, progress: Progress, request: FetchRequest) -> FetchOutcome:
        reading = self._reading
        client = self._client
        before_hop = None if reading is None else reading.before_hop(client, self._rules)
        try:
            page = await fetch_page(client, self.policy, progress, self._rules, before_hop)
        except failures.SoftFailure as failure:
            return FetchOutcome.soft(failure.text, failure.cause, failure.certificate)
        progress.finished = True  # the deadline covers the network only
        if self._browser is not None and page.kind is BodyKind.HTML:
            return await self._browser.read(client, page, request, self._render)
        return await self._render(page, request)

    async def _render(self, page: Page, request: FetchRequest) -> FetchOutcome:
        """The outcome of a fetched page: rendered, converted or refused."""
        reading = self._reading
        deadline = time.monotonic() + self.policy.render_timeout
        render: Callable[[Page, FetchRequest, float | None], FetchOutcome] = render_page
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

    def _deadline_queue(self, loop: asyncio.AbstractEventLoop) -> DeadlineQueue:
        """The queue that holds this tool's deadlines in ``loop`` (one per loop, as a session)."""
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = DeadlineQueue(loop)
        return deadlines


def _expire(task: asyncio.Task[FetchOutcome], progress: Progress) -> None:
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


def render_page(
    page: Page, request: FetchRequest, deadline: float | None = None
) -> FetchOutcome:
    """The outcome of a page without continuation: decoded, rendered and cut at ``max_chars``
    by the one pipeline (:mod:`.pagetext`). ``deadline`` (``time.monotonic()``) bounds the HTML
    rendering: past it, the page's plain-text rendering comes back instead."""
    held = render_held(page, request.raw, request.max_chars, deadline)
    if isinstance(held, FetchOutcome):
        return held
    # slice_outcome(held, 0, max_chars, continuation=False), built directly: the text is
    # already cut at max_chars, so the slice is all of it and ``truncated`` is ``held.cut``.
    return FetchOutcome(held.text, held.href, held.cut, held.extraction)
