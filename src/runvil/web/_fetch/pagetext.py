"""Page text a result may carry, and the only ways to make it.

Why: a result is markdown a model reads, and page text must never be markdown syntax there (a
page writing ``[x](javascript:...)``, ``![](https://tracker)``, ``<img onerror=...>`` or a fake
``## Page 2`` heading into it). HTML pages were escaped as they were rendered; a PDF's text was
not, and nothing stopped the next kind of body from being forgotten the same way. So the result
builders take :data:`PageText`, not ``str``, and a ``PageText`` is made only by the functions
below (``tests/web/fetch/test_pagetext.py`` holds every other module to that): each one says
why its text is safe to show.

- :func:`rendered`: markdown the extractor rendered; it escaped every piece of page text as it
  wrote it (docs/extraction.md, "Escaping");
- :func:`verbatim`: a flat-text body (``extraction: plain``), returned as the server sent it,
  as the specified text says a non-HTML text body is;
- :func:`pdf_text`: a converted PDF's pages, each line escaped exactly as a line of page text in
  a rendered page is, under headings this module writes;
- :func:`cut_text`: the first characters of a text that is already ``PageText``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NewType

from runvil.web._fetch.extract._escape import escape_line_start, escape_text

__all__ = [
    "PageText", "cut_text", "escape_lines", "page_heading", "pdf_text", "rendered", "verbatim",
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
