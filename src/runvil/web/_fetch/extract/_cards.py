"""What a listing's cards look like: five or more look-alike siblings, short, each starting
with a title-length link and holding a blurb beside its links.

Why: a blog index, a shop category or a search page is a run of cards, and an article is not;
both the page-kind decision (is the pick a listing?) and the corrections inside an article (is
this big "related posts" block a wrapper or cards?) ask the same question of a group of
siblings. Sections and posts of an article look alike too, but do not start with such a link.
"""

from __future__ import annotations

from ._dom import Element
from ._tuning import TUNING


def holds_cards(element: Element) -> bool:
    """Whether the element's children include ``TUNING.repeated_min`` or more look-alike
    cards."""
    groups: dict[tuple[str, str | None], list[Element]] = {}
    for child in element.children:
        if type(child) is Element and child.chars:
            groups.setdefault((child.tag, child.attrs.get("class")), []).append(child)
    least = TUNING.repeated_min
    return any(len(items) >= least and card_like(items) for items in groups.values())


def alike(element: Element) -> list[Element] | None:
    """``element`` and its siblings of the same tag and class, when there are
    ``TUNING.repeated_min`` or more averaging under ``TUNING.card_max_chars``."""
    parent = element.parent
    if parent is None:
        return None
    key = element.attrs.get("class")
    items = [
        child
        for child in parent.children
        if type(child) is Element
        and child.tag == element.tag
        and child.chars
        and child.attrs.get("class") == key
    ]
    chars = sum(item.chars for item in items)
    if len(items) < TUNING.repeated_min or chars >= TUNING.card_max_chars * len(items):
        return None
    return items


def card_like(items: list[Element]) -> bool:
    """Whether look-alike items are cards: links hold ``TUNING.card_link_density`` of their
    text but leave ``TUNING.card_blurb_chars`` of other text per item (a list of bare links
    is a menu, left out as one), and ``TUNING.leading_links`` of them start with a link of a
    title's length."""
    chars = sum(item.chars for item in items)
    links = sum(item.link_chars for item in items)
    if links < TUNING.card_link_density * chars or chars - links < TUNING.card_blurb_chars * len(
        items
    ):
        return False
    leading = sum(1 for item in items if starts_with_link(item))
    return leading >= TUNING.leading_links * len(items)


def starts_with_link(element: Element) -> bool:
    """Whether the element's first text is a link of at least ``TUNING.title_chars``."""
    stack: list[tuple[Element | str, Element | None]] = [
        (element, element if element.tag == "a" else None)
    ]
    while stack:
        node, link = stack.pop()
        if type(node) is str:
            if node.strip():
                return link is not None and link.chars >= TUNING.title_chars
            continue
        assert isinstance(node, Element)
        if not node.chars:
            continue
        if link is None and node.tag == "a":
            link = node
        stack.extend((child, link) for child in reversed(node.children))
    return False
