"""The pick, adjusted to the kind of page: what Readability's pick misses on some kinds.

Readability's scores find where the prose is. On an article that is the main content; on
other kinds the main content holds things that score nothing (a title in a ``<header>``, a
table of options or specifications, a price) beside the prose:

- *documentation* (generators): a pick of several sibling blocks (paragraphs, a code block)
  is their parent, the document body, so its headings and tables come with them;
- *products* (shop platforms): a one-block pick (the description) grows to the nearest
  ancestor holding the page's ``<h1>`` (the product's name), up to :data:`Tuning.product_levels`
  levels when that ancestor stays within :data:`_AROUND_RATIO` of the pick's text, and up to
  ``Tuning.product_far_levels`` when what it adds outside furniture is at most
  ``Tuning.product_far_ratio`` times the pick (a name and price block, a specification tab,
  with the carousels and forms around them left out as furniture when rendered).

Every function returns the roots to render; none changes the tree.
"""

from __future__ import annotations

from ._dom import FURNITURE, Element
from ._page_type import DOCS, PRODUCT
from ._tree import holds_tag
from ._tuning import TUNING

_NEVER = frozenset({"body", "html"})


def adjusted_roots(
    kind: str, roots: list[Element], series: bool, excluded: list[bool]
) -> list[Element] | None:
    """The roots this kind of page renders instead of ``roots``; ``None`` to keep them."""
    if kind == DOCS and len(roots) > 1 and not series:
        parent = roots[0].parent
        if (
            parent is not None
            and parent.tag not in _NEVER
            and all(root.parent is parent for root in roots)
            and parent.chars <= TUNING.docs_parent_ratio * sum(root.chars for root in roots)
        ):
            return [parent]
    if kind == PRODUCT and len(roots) == 1 and not series:
        return _with_name(roots[0], excluded)
    return None


def _with_name(root: Element, excluded: list[bool]) -> list[Element] | None:
    if holds_tag(root, "h1"):
        return None
    node = root.parent
    kept = root.chars
    for _ in range(TUNING.product_far_levels):
        if node is None or node.tag in _NEVER:
            return None
        if holds_tag(node, "h1"):
            content = _content_chars(node, excluded)
            if content <= TUNING.product_far_ratio * max(kept, 1):
                return [node]
            return None
        node = node.parent
    return None


def _content_chars(element: Element, excluded: list[bool]) -> int:
    """The text of ``element`` outside furniture and excluded subtrees."""
    chars = 0
    stack = [element]
    while stack:
        node = stack.pop()
        if excluded[node.index] or node.flags & FURNITURE:
            continue
        if node.own_chars == node.chars:
            chars += node.chars
            continue
        chars += node.own_chars
        stack.extend(child for child in node.children if type(child) is Element)
    return chars
