"""A series of posts: the look-alike siblings a thread, a Q&A page or a sectioned page is.

Why: on a forum page, a Q&A page or a page built of sections, Readability's best element is one
post or one section, the one that happened to score best; the page is all of them. Siblings
look alike when they share their tag and their first class name (``answer`` and ``answer
accepted-answer``); a utility class (``px-6``, ``col-12``, ``md:flex``) styles anything, so it
makes no series. Whether short look-alike items are posts or a listing's cards is the
page-kind decision's question (``_kind``).
"""

from __future__ import annotations

import re

from ._dom import ARIA_HIDDEN, DETACHED, FURNITURE, Element
from ._tree import first_class
from ._tuning import TUNING

# A utility class styles anything (px-6, col-12, mt24, md:flex, w-1/2); only a class that names
# a kind of block (answer, cPost, elementor-element, sc-64912480-0) makes siblings a series.
_UTILITY_CLASS = re.compile(r"-?[a-z]{1,4}-[\d.]+|\S*[:\[/]\S*|[a-z]{2,4}\d+")


def series(best: Element) -> list[Element] | None:
    """The posts of a thread: at least ``TUNING.series_min_items`` look-alike siblings, of
    ``TUNING.series_min_chars`` each, of the best element or of one of its nearest
    ``TUNING.series_levels`` ancestors; ``None`` when there are none."""
    node: Element | None = best
    least_chars = TUNING.series_min_chars
    for _ in range(TUNING.series_levels):
        if node is None or node.parent is None or node.parent.parent is None:
            return None
        first = first_class(node)
        if first and not _UTILITY_CLASS.fullmatch(first):
            tag = node.tag
            alike = [
                child
                for child in node.parent.children
                if type(child) is Element
                and child.tag == tag
                and child.chars >= least_chars
                and not child.flags & (FURNITURE | ARIA_HIDDEN | DETACHED)
                and first_class(child) == first
            ]
            if len(alike) >= TUNING.series_min_items:
                return alike
        node = node.parent
    return None
