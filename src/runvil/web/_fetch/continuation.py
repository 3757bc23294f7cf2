"""Continuation: a page's whole text, kept for the run and read in slices (``start_index``).

Without continuation a call renders only what it returns: the first ``max_chars`` characters,
and whether there are more. With it (``FetchPolicy(continuation=True)``), the page is rendered
whole, once, and the whole text is kept for the run in :data:`PAGES`, keyed by the final URL and
``raw``; a call with ``start_index`` reads the slice it asks for from the kept text, so reading
on reads the same text as the first call did, without fetching the page again. A URL not kept
(never fetched in this run, evicted, older than ten minutes) is fetched again, under every rule.

"Whole" stays within the limits a single fetch already has: the body is the byte-capped body,
and the text kept is at most :func:`hold_limit` characters (the byte cap's number, 8,388,608
under the default policy). A page whose text goes on past that, or a flat-text body cut at the
byte cap, or a PDF cut at its page limit, is kept *cut*: the slice that reaches the end of what
is kept still says ``truncated: true``, as a fetch without continuation would, and its
``next_start_index`` then reads nothing more (docs/fetch.md, "Reading more").
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from runvil.web._fetch import failures
from runvil.web._fetch.content import BodyKind, UnknownCharset, decode_body
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.http import Page
from runvil.web._fetch.pagetext import PageText, cut_text, rendered, verbatim
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.runstore import RunStore

__all__ = ["PAGES", "Held", "held_size", "hold_limit", "hold_page", "result_text"]

#: What every run together may keep of page texts, per process.
PAGE_BUDGET = 64 * 1024 * 1024
#: Pages kept at most, per process, however small.
PAGE_ENTRIES = 4096
#: Seconds a kept page is served after it was fetched.
PAGE_MAX_AGE = 600.0


class Held(NamedTuple):
    """A page's text as a run keeps it."""

    href: str
    """The final URL (query kept, fragment dropped): the ``url:`` line."""
    text: PageText
    """The whole text, or its first :func:`hold_limit` characters (escaped: :mod:`.pagetext`)."""
    extraction: str
    """The ``extraction:`` label: readability, raw-html, plain or pdf."""
    cut: bool
    """The page goes on past ``text`` (byte cap, hold limit, PDF page limit)."""


#: Every run's kept pages, keyed by ``(final href, raw)``.
PAGES: RunStore[Held] = RunStore(
    budget=PAGE_BUDGET, max_entries=PAGE_ENTRIES, max_age=PAGE_MAX_AGE
)


def hold_limit(policy: FetchPolicy) -> int:
    """The most characters of one page a run keeps: the byte cap's number. A flat-text body
    never decodes to more characters than it has bytes; rendered HTML may, and is cut there."""
    return policy.max_bytes


def held_size(held: Held) -> int:
    """The bytes a kept page costs, for the store's budget (its strings, and a margin for the
    tuple and the store's own records)."""
    return sys.getsizeof(held.text) + sys.getsizeof(held.href) + 256


def hold_page(page: Page, raw: bool, limit: int, deadline: float | None = None) -> Held | str:
    """Decode and render ``page`` whole, keeping at most ``limit`` characters; or the soft
    failure text of an unknown charset. ``deadline`` bounds the HTML rendering as in
    :func:`~runvil.web._fetch.tool.render_page` (past it: the page's plain-text rendering).

    The first ``max_chars`` characters of the result are exactly those a call without
    continuation returns (``render_html`` guarantees its text does not depend on where it is
    told to stop), so turning continuation on never changes what a first call reads.
    """
    final = page.target
    try:
        body = decode_body(page.body, page.charset)
    except UnknownCharset as unknown:
        return failures.unknown_charset(final.display, unknown.label).text
    if page.kind is BodyKind.HTML:
        markdown, extraction = render_html(
            body, final.href, raw, max_chars=limit, deadline=deadline
        )
        text = rendered(markdown)
    else:
        text, extraction = verbatim(body), "plain"
    cut = page.cut_at_cap or len(text) > limit
    return Held(final.href, cut_text(text, limit), extraction, cut)


def result_text(held: Held, start: int, max_chars: int, *, continuation: bool) -> str:
    """The result text of one call: the header and at most ``max_chars`` characters from
    ``start``.

    ``truncated`` is true when kept text remains after the part returned, or when the part
    reaches the end of a page kept cut (as without continuation). A ``start`` at or past the
    end returns no text and ``truncated: false``. With ``continuation``, a truncated result
    says where to read on: ``next_start_index`` is ``start`` plus the characters returned.
    """
    text = held.text
    part = text[start : start + max_chars]
    end = start + len(part)
    if end < len(text):
        truncated = True
    elif start < len(text) or start == 0:
        truncated = held.cut
    else:
        truncated = False
    next_line = f"next_start_index: {end}\n" if continuation and truncated else ""
    return (
        f"url: {held.href}\n"
        f"truncated: {'true' if truncated else 'false'}\n"
        f"{next_line}"
        f"extraction: {held.extraction}\n"
        f"\n"
        f"{part}"
    )
