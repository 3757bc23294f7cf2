"""Reading more: what ``continuation``, ``pdf`` and ``robots`` add to a fetch, in one place.

:class:`~runvil.web._fetch.tool.WebFetch` builds a :class:`Reading` only when its policy turns one
of them on; with the seeds' default policy there is none, and a call runs exactly the seeds'
path. The tool calls four hooks, each at one point of a call:

1. :meth:`Reading.recall`, after URL admission: a page this run keeps answers a continuation
   without a fetch;
2. :meth:`Reading.before_hop`, handed to the hop loop: the robots.txt check;
3. :meth:`Reading.convert`, for a PDF body: the text from the PDF worker;
4. :attr:`Reading.render`, for any other body under continuation: render the whole page, keep
   it, return the slice asked for (it runs where the tool's own rendering would, in a render
   thread for a big page).

Each run's pages and robots.txt rules are kept under the run of the call in progress
(:data:`runvil._tools.current_run`, set by the Host for every call); a tool called on its own,
outside any Host run, is a run of its own, :attr:`Reading.scope`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from runvil._net.client import EgressClient
from runvil._tools import RunScope, current_run
from runvil.web._fetch.admission import TargetUrl
from runvil.web._fetch.arguments import FetchRequest
from runvil.web._fetch.continuation import PAGES, Held, held_size, hold_limit
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import Page
from runvil.web._fetch.outcome import FetchOutcome
from runvil.web._fetch.pagetext import render_held, slice_outcome
from runvil.web._fetch.pdf import convert_pdf
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.robots import robots_check
from runvil.web._fetch.runstore import RunStoreBackend, fingerprint_text

__all__ = ["Reading", "page_changed", "reading_for"]


def reading_for(policy: FetchPolicy) -> Reading | None:
    """The reading extensions ``policy`` turns on, or None for none (the seeds' fetch)."""
    if policy.continuation or policy.pdf or policy.robots:
        return Reading(policy)
    return None


class Reading:
    """The reading extensions of one ``WebFetch`` (see the module docstring)."""

    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy
        self.scope = RunScope()
        """The run of calls made outside any Host run: the tool's own life."""
        self.limit = hold_limit(policy)
        self.render: Callable[[Page, FetchRequest, float | None], FetchOutcome] | None = (
            self._render_whole if policy.continuation else None
        )
        """Renders a non-PDF page under continuation; None when the seeds' rendering applies."""

    @property
    def pages(self) -> RunStoreBackend[Held]:
        """The store of the run's pages: the policy's (one replicas share), else the process's
        own, :data:`~runvil.web._fetch.continuation.PAGES`, looked up at each call."""
        store = self.policy.page_store
        return store if store is not None else PAGES

    def run_scope(self) -> RunScope:
        return current_run.get() or self.scope

    def recall(self, target: TargetUrl, request: FetchRequest) -> FetchOutcome | None:
        """The outcome from the page this run keeps for ``target``, if it keeps one."""
        if not self.policy.continuation:
            return None
        held = self.pages.get(self.run_scope(), (target.href, request.raw))
        if held is None:
            return None
        return slice_outcome(held, request.start_index, request.max_chars, continuation=True)

    def before_hop(
        self, client: EgressClient, rules: HostRules | None = None
    ) -> Callable[[TargetUrl], Awaitable[None]] | None:
        """The hop loop's robots.txt check, or None without ``robots``. ``rules`` are the
        operator's host rules, so a listed private host's robots.txt is read like its pages."""
        if not self.policy.robots:
            return None
        return robots_check(client, self.policy, self.run_scope(), rules)

    async def convert(self, page: Page, request: FetchRequest) -> FetchOutcome:
        """A PDF's outcome (or its soft failure)."""
        if self.policy.continuation:
            char_limit = self.limit
        else:  # one more than is returned tells whether there is more
            char_limit = min(request.max_chars + 1, self.limit)
        held = await convert_pdf(
            page,
            max_pages=self.policy.pdf_max_pages,
            char_limit=char_limit,
            timeout=self.policy.timeout,
            run=self.run_scope(),
        )
        if isinstance(held, str):
            return FetchOutcome.soft(held)
        return self._answer(held, request, page.target.display)

    def _render_whole(
        self, page: Page, request: FetchRequest, deadline: float | None = None
    ) -> FetchOutcome:
        held = render_held(page, request.raw, self.limit, deadline)
        if isinstance(held, FetchOutcome):
            return held
        return self._answer(held, request, page.target.display)

    def _answer(self, held: Held, request: FetchRequest, display: str) -> FetchOutcome:
        """Keep ``held`` for the run (under continuation) and return the slice asked for; or,
        reading on (``start_index`` > 0) in a page the run read before and no longer keeps,
        the soft failure :func:`page_changed` when the page fetched again is not the one read."""
        continuation = self.policy.continuation
        if continuation:
            scope = self.run_scope()
            key = (held.href, request.raw)
            seen = fingerprint_text(held.text)
            if request.start_index > 0:
                before = self.pages.fingerprint(scope, key)
                if before is not None and before != seen:
                    return FetchOutcome.soft(page_changed(display, request.start_index))
            self.pages.put(scope, key, held, held_size(held), seen)
        return slice_outcome(
            held, request.start_index, request.max_chars, continuation=continuation
        )


def page_changed(display: str, start_index: int) -> str:
    """The soft failure of reading on in a page that changed since the run read it: the text
    from ``start_index`` of the new version would not continue the old one. The new version is
    not kept; a call without ``start_index`` reads it (and keeps it) from its start."""
    return (
        f"the page at {display} has changed since it was first read; its text from start_index "
        f"{start_index} would not continue what was read before; fetch it again without "
        "start_index to read the current version from its start"
    )
