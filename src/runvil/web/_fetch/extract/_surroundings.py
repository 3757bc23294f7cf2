"""Measures of the pick and what surrounds it, which the page-kind decision asks for only
when its first answer is unsure: whether the pick is a run of cards, the teaser rails after
it, a second copy of it, the dates around it and on the page.

Why apart from the decision: each is a walk over part of the tree, and most pages are decided
without most of them. :class:`Surroundings` measures each at most once, on first use; the tree
and the selection it reads never change, so the decision that asks is still a function of the
page alone, however often it asks.
"""

from __future__ import annotations

import itertools

from . import _cues
from ._cards import alike, card_like
from ._corrections import NAMED, boilerplate, named
from ._dom import DETACHED, Document, Element
from ._names import FURNITURE as NAMED_FURNITURE
from ._selection import Selection
from ._tree import contains, last_descendant
from ._tuning import TUNING

# Look-alike blocks of these tags are runs of text, not cards.
_PROSE_TAGS = frozenset({"p", "br", "span", "a"})


class Surroundings:
    """The measures of one selection on one page, each taken on first use."""

    __slots__ = ("_cards", "_copied", "_dates", "_page_dated", "_teasers", "document", "selection")

    def __init__(self, document: Document, selection: Selection) -> None:
        self.document = document
        self.selection = selection
        self._cards: bool | None = None
        self._teasers: tuple[int, int] | None = None
        self._copied: bool | None = None
        self._dates: int | None = None
        self._page_dated: bool | None = None

    @property
    def cards(self) -> bool:
        """:func:`cards` of the selection."""
        if self._cards is None:
            self._cards = cards(self.selection)
        return self._cards

    @property
    def teasers(self) -> tuple[int, int]:
        """:func:`teasers` of the selection."""
        if self._teasers is None:
            self._teasers = teasers(self.document, self.selection)
        return self._teasers

    @property
    def copied(self) -> bool:
        """:func:`copied` of the selection."""
        if self._copied is None:
            self._copied = copied(self.document, self.selection)
        return self._copied

    @property
    def dates(self) -> int:
        """:func:`dates_around` the selection."""
        if self._dates is None:
            self._dates = dates_around(self.selection)
        return self._dates

    @property
    def page_dated(self) -> bool:
        """:func:`page_dated` of the document."""
        if self._page_dated is None:
            self._page_dated = page_dated(self.document)
        return self._page_dated


def cards(selection: Selection) -> bool:
    """Whether the pick is a listing: ``TUNING.repeated_min`` or more look-alike siblings
    (same tag and class) that are cards (``_cards.card_like``) and hold
    ``TUNING.cards_share`` of the pick's text, or one of which (of a size like the others',
    ``TUNING.card_size_ratio``) is the pick. Cards inside a block named furniture
    (``related-posts``) are a related list, which the article leaves out, not the page's
    listing."""
    tuning = TUNING
    roots = selection.roots
    if len(roots) == 1:
        node: Element | None = roots[0]
        for _ in range(tuning.series_levels):  # the pick inside one card
            if node is None or node.parent is None:
                break
            items = alike(node)
            if (
                items is not None
                and node.chars * len(items) <= tuning.card_size_ratio * sum(i.chars for i in items)
                and card_like(items)
            ):
                return True
            node = node.parent
    threshold = selection.chars * tuning.cards_share
    stack: list[Element] = []
    children: list[Element | str] = list(roots)  # the pick's roots are siblings too
    while True:  # the cards inside the pick
        groups: dict[tuple[str, str | None], list[Element]] = {}
        for child in children:
            if (
                type(child) is Element
                and child.chars
                and child.tag not in _PROSE_TAGS
                # a related-posts list is left out anyway (a wrapper is not, see Skipper)
                and (child.chars * 2 > selection.chars or boilerplate(child) != NAMED)
            ):
                groups.setdefault((child.tag, child.attrs.get("class")), []).append(child)
                stack.append(child)
        for items in groups.values():
            if len(items) < tuning.repeated_min:
                continue
            parent = items[0].parent
            if parent is not None and named(parent) == NAMED_FURNITURE:
                continue  # a related-posts list named so, however big: not the page's cards
            chars = sum(item.chars for item in items)
            if (
                chars >= threshold
                and chars < tuning.card_max_chars * len(items)
                and card_like(items)
            ):
                return True
        while stack and stack[-1].chars < threshold:
            stack.pop()
        if not stack:
            return False
        children = stack.pop().children


def teasers(document: Document, selection: Selection) -> tuple[int, int]:
    """The text, and the text outside links, of teaser lists after the pick:
    ``TUNING.teaser_min_items`` or more look-alike siblings (same tag and class) that each
    hold a link and average under ``TUNING.card_max_chars``, such as "more stories" rails
    with a blurb under each title. Any ``<a>`` counts, even an empty one laid over a card's
    picture (its title and blurb are then text outside links).
    Only those after it: an article comes first and its rails follow it, while a category
    page's grid of products comes before the text about the category at its foot."""
    if selection.page is None or not selection.roots:
        return 0, 0
    excluded = selection.page.excluded
    anchors = selection.page.anchors
    least = TUNING.teaser_min_items
    card_max = TUNING.card_max_chars
    end = last_descendant(selection.roots[-1]).index
    parents: list[Element] = []
    node = selection.roots[-1].parent
    while node is not None:  # the pick's ancestors hold items after it too
        parents.append(node)
        node = node.parent
    chars = prose = 0
    for parent in itertools.chain(parents, document.elements[end + 1 :]):
        children = parent.children
        if len(children) < least or not anchors[parent.index] or excluded[parent.index]:
            continue  # teasers hold links
        groups: dict[tuple[str, str | None], list[Element]] = {}
        for child in children:
            if (
                type(child) is Element
                and anchors[child.index]
                and child.index > end
                and not excluded[child.index]
            ):
                groups.setdefault((child.tag, child.attrs.get("class")), []).append(child)
        for items in groups.values():
            if len(items) < least:
                continue
            total = sum(item.chars for item in items)
            if total < card_max * len(items):
                chars += total
                prose += total - sum(item.link_chars for item in items)
    return chars, prose


def copied(document: Document, selection: Selection) -> bool:
    """Whether the page holds a second copy of the article: an element outside the pick
    (and not one of its wrappers) with exactly its text and link text lengths,
    ``TUNING.copy_min_chars`` or more. Responsive templates render the article twice
    (one copy for small screens, or a hidden template), and the copy is not other text."""
    if selection.page is None or len(selection.roots) != 1:
        return False
    root = selection.roots[0]
    if root.chars < TUNING.copy_min_chars:
        return False
    excluded = selection.page.excluded
    first, last = root.index, last_descendant(root).index
    chars, link_chars = root.chars, root.link_chars
    for element in document.elements:
        if (
            element.chars == chars
            and element.link_chars == link_chars
            and not first <= element.index <= last
            and not excluded[element.index]
            and not contains(element, root)
        ):
            return True
    return False


def page_dated(document: Document) -> bool:
    """Whether the page's text shows a full date anywhere."""
    least = TUNING.date_min_chars
    for element in document.elements:
        if element.flags & DETACHED:
            continue
        for child in element.children:
            if (
                type(child) is str
                and len(child) >= least
                and any(c.isdigit() for c in child)
                and _cues.dates(child, 1)
            ):
                return True
    return False


def dates_around(selection: Selection) -> int:
    """How many full dates the article and its surroundings show (up to one more than
    ``TUNING.dated_most``): the text of the pick's ancestor two levels up (where the
    headline, the byline and the date sit), or of a nearer one when that holds over
    ``TUNING.around_ratio`` times the pick's text."""
    region = selection.roots[0].parent if len(selection.roots) > 1 else selection.roots[0]
    for _ in range(2):
        if region is None or region.parent is None:
            break
        if region.parent.chars > TUNING.around_ratio * max(selection.chars, 1):
            break
        region = region.parent
    if region is None:
        return 0
    least = TUNING.date_min_chars
    most = TUNING.dated_most + 1
    found = 0
    stack: list[Element] = [region]
    while stack:
        element = stack.pop()
        for child in element.children:
            if type(child) is str:
                if len(child) >= least and any(c.isdigit() for c in child):
                    found += _cues.dates(child, most - found)
                    if found >= most:
                        return found
            else:
                assert isinstance(child, Element)
                stack.append(child)
    return found
