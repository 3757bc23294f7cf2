"""The article the page declares: a microdata ``articleBody``, the element holding a JSON-LD
``articleBody``'s text, or the one ``<article>`` of a page declaring an article.

Why: publishers mark up their articles for search engines, and where the markup locates the
body it is usually right when Readability's scores are not (*news portals and blogs whose short
article sits among many teaser blocks*, a body split into many small wrappers). The
declarations are evidence, not truth: a declared body that holds no prose, or that the pick
holds already, changes nothing (``_pick_densest.choose`` weighs it).
"""

from __future__ import annotations

from ._dom import DETACHED, Document, Element
from ._page_signals import text_in
from ._selection import Pick
from ._signals import body_probes
from ._tree import HEADING_TAGS, contains
from ._tuning import TUNING


def declared(document: Document, itemprops: list[Element], prose: list[int]) -> Element | None:
    """The container the page declares for its article text: the element marked
    ``itemprop="articleBody"`` holding the most prose, or else the smallest element holding
    both the start and the end of the JSON-LD ``articleBody`` (found by a few runs of its
    words). ``None`` when there is neither, or when it holds no prose."""
    best: Element | None = None
    for element in itemprops:
        if best is None or prose[element.index] > prose[best.index]:
            best = element
    if best is not None and prose[best.index]:
        return best
    probes = body_probes(document.signals.article_body)
    if not probes:
        return None
    found: list[Element] = []
    for probe in probes:
        holder = _holder(document, probe)
        if holder is not None:
            found.append(holder)
    if len(found) < 2:
        return None
    common = _common_ancestor(found[0], found[-1])
    return common if common is not None and prose[common.index] else None


def _holder(document: Document, probe: str) -> Element | None:
    """The first element whose own text contains ``probe`` (whitespace collapsed)."""
    first = probe.split(" ", 1)[0]
    for element in document.elements:
        if element.flags & DETACHED:
            continue
        for child in element.children:
            if type(child) is str and first in child and probe in " ".join(child.split()):
                return element
    return None


def _common_ancestor(one: Element, other: Element) -> Element | None:
    ancestors = set()
    node: Element | None = one
    while node is not None:
        ancestors.add(node.index)
        node = node.parent
    node = other
    while node is not None:
        if node.index in ancestors:
            return node
        node = node.parent
    return None


def one_article(document: Document, excluded: list[bool], linked: list[bool]) -> Element | None:
    """The page's only ``<article>`` element with ``TUNING.short_article_readable`` of readable
    text (nested ones count as theirs); ``None`` when there is none or several (a listing of
    articles), or more than ``TUNING.articles_most`` ``<article>`` elements."""
    found: Element | None = None
    seen = 0
    for element in document.elements:
        if element.tag != "article" or excluded[element.index]:
            continue
        seen += 1
        if seen > TUNING.articles_most:
            return None  # a page of that many articles is a listing (and each costs a walk)
        if found is not None and contains(found, element):
            continue
        _, readable, _ = text_in([element], excluded, linked)
        if readable < TUNING.short_article_readable:
            continue
        if found is not None:
            return None
        found = element
    return found


def among_teasers(pick: Pick, article: Element, prose: list[int]) -> bool:
    """Whether the pick holds the ``<article>`` of a page declaring an article in JSON-LD as a
    small part of a portal page (*news portals whose short article sits among blocks of
    teasers*), not as one post of a series: the article holds under
    ``TUNING.fragment_share`` of the pick's prose, and the rest of the pick carries at least
    ``TUNING.series_min_items`` headings that are links of ``TUNING.title_chars`` (teaser
    titles)."""
    if pick.series:
        return False
    holders = [root for root in pick.roots if contains(root, article)]
    if not holders or holders[0] is article:
        return False
    picked = sum(prose[root.index] for root in pick.roots)
    if prose[article.index] >= TUNING.fragment_share * picked:
        return False
    titles = 0
    stack: list[Element] = list(pick.roots)
    while stack:
        element = stack.pop()
        if element is article:
            continue
        if element.tag in HEADING_TAGS:
            if element.link_chars >= TUNING.title_chars:
                titles += 1
                if titles >= TUNING.series_min_items:
                    return True
            continue
        stack.extend(child for child in element.children if type(child) is Element)
    return False
