"""A page's text: the only ways to make it, then decode, render, cut (once for every fetch), and
the slice a call returns.

**Page text.** A result is markdown a model reads, and page text must never be markdown syntax
there (a page writing ``[x](javascript:...)``, ``![](https://tracker)``, ``<img onerror=...>``
or a fake ``## Page 2`` heading into it). HTML pages were escaped as they were rendered; a PDF's
text was not, and nothing stopped the next kind of body from being forgotten the same way. So
the result builders take :data:`PageText`, not ``str``, and a ``PageText`` is made only by the
functions below (``tests/web/fetch/test_pagetext.py`` holds every other module to that): each
one says why its text is safe to show.

- :func:`rendered`: markdown the extractor rendered; it escaped every piece of page text as it
  wrote it (docs/extraction.md, "Escaping");
- :func:`verbatim`: a flat-text body (``extraction: plain``), returned as the server sent it,
  as the specified text says a non-HTML text body is;
- :func:`pdf_text`: a converted PDF's pages, each line escaped exactly as a line of page text in
  a rendered page is, under headings this module writes;
- :func:`cut_text`: the first characters of a text that is already ``PageText``;
- :func:`restored`: a kept page's text read back from a shared page store (a fleet's Redis),
  which only ever holds text one of the functions above made.

**The pipeline.** :func:`render_held` turns a fetched body into the text a run may read: the
charset decoded (WHATWG labels), HTML rendered to markdown (or the page's plain text past the
render deadline), other text kept, all cut at ``limit`` characters. Without continuation the
limit is the call's ``max_chars``; with it, the most a run keeps of one page
(:func:`~runvil.web._fetch.continuation.hold_limit`), so the page is rendered whole once and
read in slices. Either way :func:`slice_outcome` then makes the call's
:class:`~runvil.web._fetch.outcome.FetchOutcome` from it: the first call of a page reads the
same text with continuation on or off (``render_html`` guarantees its text does not depend on
where it is told to stop).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, NewType

from runvil.web._fetch import failures
from runvil.web._fetch.content import BodyKind, UnknownCharset, decode_body
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._escape import escape_line_start, escape_text
from runvil.web._fetch.http import Page
from runvil.web._fetch.outcome import FetchOutcome

__all__ = [
    "Held", "PageText", "cut_text", "escape_lines", "page_heading", "pdf_text", "render_held",
    "rendered", "restored", "slice_outcome", "verbatim",
]

PageText = NewType("PageText", str)
"""Text fit for a result's body: made only in this module."""


def rendered(markdown: str) -> PageText:
    """The extractor's markdown (``render_html``), escaped as it was written."""
    return PageText(markdown)


def verbatim(text: str) -> PageText:
    """A flat-text body, shown as it is (``extraction: plain``)."""
    return PageText(text)


def cut_text(text: PageText, limit: int) -> PageText:
    """The first ``limit`` characters of ``text``."""
    return PageText(text[:limit])


def restored(text: str) -> PageText:
    """A kept page's text as a shared page store gives it back: the store is written only with
    :class:`Held` pages, whose text one of this module's functions made."""
    return PageText(text)


def escape_lines(text: str) -> str:
    """``text`` (page text, ``\\n`` line ends) with each line escaped as the extractor escapes a
    line of page text: inline syntax (links, images, HTML, emphasis, code) everywhere, block
    syntax (headings, quotes, list markers, rules) at the start of the line. The extractor's
    lines never start with blank space; a PDF's may, and up to three spaces before ``##`` still
    make a heading, so block syntax is escaped after the line's indentation."""
    return "\n".join(_escape_line(line) for line in text.split("\n"))


def _escape_line(line: str) -> str:
    line = escape_text(line)
    body = line.lstrip(" \t")
    indent = line[: len(line) - len(body)]
    return indent + escape_line_start(body)


def page_heading(number: int) -> str:
    """The heading that opens page ``number`` (from 1) of a converted PDF."""
    return f"## Page {number}"


def pdf_text(pages: Sequence[str]) -> PageText:
    """A PDF's pages as one text: each under its ``## Page N`` heading, its lines escaped, pages a
    blank line apart (a page with no text keeps its heading, so the numbers stay true)."""
    return PageText(
        "\n\n".join(
            page_heading(number) + (f"\n\n{escape_lines(text)}" if text else "")
            for number, text in enumerate(pages, 1)
        )
    )


class Held(NamedTuple):
    """A page's text as rendered (and, under continuation, kept for the run)."""

    href: str
    """The final URL (query kept, fragment dropped): the ``url:`` line."""
    text: PageText
    """The whole text, or its first ``limit`` characters (escaped: see above)."""
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
        body = decode_body(_needed_bytes(page, limit), page.charset)
    except UnknownCharset as unknown:
        return FetchOutcome.soft(failures.unknown_charset(final.display, unknown.label).text)
    text: PageText
    if page.kind is BodyKind.HTML:
        markdown, extraction = render_html(
            body, final.href, raw, max_chars=limit, deadline=deadline
        )
        text = rendered(markdown)
    else:
        text, extraction = verbatim(body), "plain"
    cut = page.cut_at_cap
    if len(text) > limit:
        text = cut_text(text, limit)
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
