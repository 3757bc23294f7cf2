"""A page's text: decode, render, cut (once for every fetch), then the slice a call returns.

:func:`render_held` turns a fetched body into the text a run may read: the charset decoded
(WHATWG labels), HTML rendered to markdown (or the page's plain text past the render
deadline), other text kept, all cut at ``limit`` characters. Without continuation the limit is
the call's ``max_chars``; with it, the most a run keeps of one page
(:func:`~runvil.web._fetch.continuation.hold_limit`), so the page is rendered whole once and
read in slices. Either way :func:`slice_outcome` then makes the call's
:class:`~runvil.web._fetch.outcome.FetchOutcome` from it: the first call of a page reads the
same text with continuation on or off (``render_html`` guarantees its text does not depend on
where it is told to stop).
"""

from __future__ import annotations

from typing import NamedTuple

from runvil.web._fetch import failures
from runvil.web._fetch.content import BodyKind, UnknownCharset, decode_body
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.http import Page
from runvil.web._fetch.outcome import FetchOutcome

__all__ = ["Held", "render_held", "slice_outcome"]


class Held(NamedTuple):
    """A page's text as rendered (and, under continuation, kept for the run)."""

    href: str
    """The final URL (query kept, fragment dropped): the ``url:`` line."""
    text: str
    """The whole text, or its first ``limit`` characters."""
    extraction: str
    """The ``extraction:`` label: readability, raw-html, plain or pdf."""
    cut: bool
    """The page goes on past ``text`` (byte cap, the limit, PDF page limit)."""


def render_held(
    page: Page, raw: bool, limit: int, deadline: float | None = None
) -> Held | FetchOutcome:
    """Decode and render ``page``, keeping at most ``limit`` characters; or the soft failure of
    an unknown charset. ``deadline`` (``time.monotonic()``) bounds the HTML rendering: past it,
    the page's plain-text rendering comes back instead (``render_html``)."""
    final = page.target
    try:
        text = decode_body(_needed_bytes(page, limit), page.charset)
    except UnknownCharset as unknown:
        return FetchOutcome.soft(failures.unknown_charset(final.display, unknown.label).text)
    if page.kind is BodyKind.HTML:
        text, extraction = render_html(text, final.href, raw, max_chars=limit, deadline=deadline)
    else:
        extraction = "plain"
    cut = page.cut_at_cap
    if len(text) > limit:
        text = text[:limit]
        cut = True
    return Held(final.href, text, extraction, cut)


def slice_outcome(held: Held, start: int, max_chars: int, *, continuation: bool) -> FetchOutcome:
    """One call's outcome: at most ``max_chars`` characters of ``held`` from ``start``.

    ``truncated`` is true when text remains after the part returned, or when the part reaches
    the end of a page kept cut (as without continuation). A ``start`` at or past the end returns
    no text and ``truncated: false``. With ``continuation``, a truncated result says where to
    read on: ``next_start_index`` is ``start`` plus the characters returned.
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
    return FetchOutcome(
        text=part,
        url=held.href,
        truncated=truncated,
        extraction=held.extraction,
        next_start_index=end if continuation and truncated else None,
    )


def _needed_bytes(page: Page, limit: int) -> bytes:
    """The part of the body that decides the text.

    A verbatim (non-HTML) UTF-8 body only ever shows its first ``limit`` characters, and
    ``limit + 1`` characters never take more than ``4 * (limit + 1)`` bytes (a BOM included,
    given the margin), so decoding an 8 MiB body to return 40,000 characters decodes only the
    first 160 KB. The text and the cut flag come out exactly as from the whole body: UTF-8
    decoding is self-synchronising, so every character that ends inside the prefix decodes the
    same, and a prefix that short of the body always holds more than ``limit`` characters.
    Other charsets (some stateful, with escapes) are decoded whole; so is a body a run keeps
    whole (its limit is the byte cap, which no body passes).
    """
    cap = 4 * (limit + 2)
    if page.kind is BodyKind.HTML or len(page.body) <= cap or not _is_utf8(page.charset):
        return page.body
    return page.body[:cap]


def _is_utf8(charset: str | None) -> bool:
    return charset is None or charset.strip(" \t\n\f\r").lower() in ("utf-8", "utf8")
