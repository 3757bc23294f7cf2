"""Measures of an article's rendered markdown: how much of it is prose, and whether it reads
like a list of links.

Why on the markdown: after the corrections have left furniture out, what a model would read is
the best evidence of what the page is. A page of headings and title links is a listing or a
catalogue whatever its container was called; a page whose text is paragraphs that end like
sentences is an article.
"""

from __future__ import annotations

import re

from ._tuning import TUNING

_LINE_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_FENCE = re.compile(r"(`{3,})[^`]*$")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")
_SENTENCE_ENDS = tuple('.!?:;"”’)…。')
_ORDERED_ITEM = re.compile(r"\d{1,9}\. ")


def prose_share(text: str) -> float:
    """The share of rendered markdown's visible text in paragraphs of prose: blocks of their
    own (not headings, list items, table rows, code or quotes) of at least
    ``TUNING.prose_block_chars`` that end like a sentence."""
    least = TUNING.prose_block_chars
    total = prose = 0
    for block in text.split("\n\n"):
        visible = _LINK.sub(r"\1", _IMAGE.sub("", block)).strip()
        total += len(visible)
        if (
            len(visible) >= least
            and (visible.endswith(_SENTENCE_ENDS))
            and not block.startswith(("#", "-", "|", "`", ">", " "))
            and not _ORDERED_ITEM.match(block)
        ):
            prose += len(visible)
    return prose / total if total else 0.0


def outside_code(text: str) -> str:
    """``text`` without its fenced code blocks: a fence opens with three or more backticks at
    the start of a line and closes at a line of just the same backticks (or the end). One pass
    over the lines, so text with many fences that never close costs no more than any other."""
    kept = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is None:
            opening = _FENCE.match(line)
            if opening is None:
                kept.append(line)
            else:
                fence = opening.group(1)
        elif line == fence:
            fence = None
    return "\n".join(kept)


def reads_like_links(text: str) -> bool:
    """Whether rendered markdown reads like a listing: over ``TUNING.headings_per_1000``
    headings or ``TUNING.title_links_per_1000`` title-length links (``TUNING.title_chars``)
    per 1,000 characters of its visible text (URLs and images not counted), or over
    ``TUNING.link_text_share`` of that text in links."""
    text = _IMAGE.sub("", text)
    links = [found.strip() for found in _LINK.findall(text)]
    size = max(len(text) - sum(len(found) + 4 for found in links), 1)
    # A comment line in a code block ("# clone the repository") is not a heading.
    prose = outside_code(text) if "```" in text else text
    if len(_LINE_HEADING.findall(prose)) * 1000 > TUNING.headings_per_1000 * size:
        return True
    titles = sum(1 for found in links if len(found) >= TUNING.title_chars)
    if titles * 1000 > TUNING.title_links_per_1000 * size:
        return True
    return sum(len(found) for found in links) > TUNING.link_text_share * size
