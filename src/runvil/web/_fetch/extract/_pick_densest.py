"""The densest prose, and the corrections it makes to Readability's pick.

Why: Readability's scores spread each paragraph over a few ancestors only, so an article whose
paragraphs each sit in their own wrappers (page builders, CMS "paragraph" components) or whose
sections are separate blocks scores below a compact teaser or a title block with a ``content``
class. Per element, the prose in its whole subtree, net of link text and fragments, has no
such horizon: it finds where the text is. A pick that is a fragment of the densest region (a
title block, a teaser, one section of a page-builder article), a block spread over siblings,
or a piece of the body the page declares gives way to the larger whole (:func:`choose`).
"""

from __future__ import annotations

from ._dom import DETACHED, FURNITURE, INLINE, Document, Element
from ._pick_readability import class_weight
from ._selection import Pick, single
from ._tree import HEADING_TAGS, contains
from ._tuning import TUNING


def densest(
    document: Document, excluded: list[bool], linked: list[bool]
) -> tuple[list[int], Element]:
    """Per element, the prose in its subtree (own text of non-excluded blocks of a paragraph's
    length that are not mostly links, minus their link text), and the element whose subtree
    has the most prose net of its other text (link text, short fragments, excluded blocks),
    counted at ``TUNING.junk_weight``.

    One pass, from the last element to the first: every element comes after its ancestors,
    so its sums are complete when the pass reaches it."""
    elements = document.elements
    count = len(elements)
    prose = [0] * count
    junk = [0] * count
    block_links = [0] * count
    inline = INLINE
    headings = HEADING_TAGS
    weight = TUNING.junk_weight
    paragraph = TUNING.paragraph_min_chars
    best = document.body
    best_value = float("-inf")
    for element in reversed(elements):
        if not element.chars or element.flags & DETACHED:
            continue  # no text: nothing to add up
        index = element.index
        parent = element.parent
        if excluded[index]:
            if parent is not None:
                junk[parent.index] += element.chars
            continue
        tag = element.tag
        if tag in inline:
            if parent is not None:
                prose[parent.index] += prose[index]
                junk[parent.index] += junk[index]
            continue
        own = element.own_chars
        if own and tag not in headings:
            own_links = own if linked[index] else element.link_chars - block_links[index]
            if own >= paragraph and own_links * 2 < own:
                prose[index] += own - own_links
                junk[index] += own_links
            else:
                junk[index] += own
        value = prose[index] - weight * junk[index]
        if value >= best_value:
            best = element
            best_value = value
        if parent is not None:
            up = parent.index
            prose[up] += prose[index]
            junk[up] += junk[index]
            block_links[up] += element.link_chars
    return prose, best


def choose(pick: Pick, densest: Element, declared: Element | None, prose: list[int]) -> Pick:
    """Readability's pick, unless it is a fragment of the densest prose (a title block, a
    teaser, one section of an article split into many) or furniture kept for its size (a
    mega-menu) that does not hold it, or the page declares where its article is and the
    declaration holds the text.

    A declared body with under ``TUNING.fragment_share`` of the pick's prose is not the
    article's: it is a teaser card's ``articleBody`` in a list of related posts. A pick whose
    names say nothing of content (no ``article``/``content``/``post`` word, not ``<article>``
    or ``<main>``) that holds under ``TUNING.spread_share`` of the prose of the densest region
    around it is one block of an article spread over siblings (a table, an accordion, one
    page-builder section, a product description beside its specifications): the region is
    the article. When the pick is several siblings, every sibling with
    ``TUNING.joined_prose`` characters of prose joins them: a section of a long page whose
    paragraphs sit too deep in wrappers to score."""
    tuning = TUNING
    roots = pick.roots
    picked = sum(prose[root.index] for root in roots)
    # The pick lies elsewhere, or is a piece of the declared body. (A declared body inside the
    # pick never narrows it: sites leave the lead paragraph or the title out of it.)
    if (
        declared is not None
        and not any(contains(root, declared) for root in roots)
        and prose[declared.index] >= tuning.fragment_share * picked
    ):
        inside = any(contains(declared, root) for root in roots)
        if not inside or picked < tuning.piece_share * prose[declared.index]:
            return single(declared, pick.score)
    if (
        not roots
        or picked < tuning.fragment_share * prose[densest.index]
        or (len(roots) == 1 and roots[0].flags & FURNITURE)
    ) and not any(contains(root, densest) for root in roots):
        return single(densest, pick.score)
    parent = roots[0].parent if roots else None
    if (
        len(roots) > 1
        and not pick.series
        and parent is not None
        and parent.tag != "body"
        and parent.parent is not None
        and all(root.parent is parent for root in roots)
    ):
        chosen = {root.index for root in roots}
        joined = [
            child
            for child in parent.children
            if type(child) is Element
            and (child.index in chosen or prose[child.index] >= tuning.joined_prose)
        ]
        if len(joined) > len(roots):
            return Pick(joined, pick.top, pick.score)
    if (
        densest.tag != "body"
        and len(roots) == 1
        and picked < tuning.spread_share * prose[densest.index]
        and class_weight(roots[0]) <= 0
        and roots[0].tag not in ("article", "main")
        and contains(densest, roots[0])
    ):
        return single(densest, pick.score)
    return pick
