"""A product page's pick grows to hold the product's name.

Why (*shop platforms*): the description scores best, but the page is about the product its
``<h1>`` names, with the price beside the name and the specification table near it. So on a
page that declares a product (one JSON-LD ``Product``, or ``og:type`` product), a one-block pick
without the ``<h1>`` grows to the nearest ancestor that holds it, if that ancestor is not much
larger; the basket form, shipping notes and recommendation carousels stay out as furniture or
outside it.
"""

from __future__ import annotations

from ._pick_readability import NEVER_CANDIDATE
from ._selection import Pick, single
from ._tree import holds_tag
from ._tuning import TUNING


def with_product_name(pick: Pick) -> Pick:
    """The pick grown to the nearest ancestor, ``TUNING.product_levels`` up at most, that
    holds the ``<h1>`` and under ``TUNING.around_ratio`` times the pick's text; the pick
    itself when it holds the ``<h1>``, is several blocks or a series, or no such ancestor
    exists."""
    if len(pick.roots) != 1 or pick.series:
        return pick
    root = pick.roots[0]
    if holds_tag(root, "h1"):
        return pick
    node = root.parent
    for _ in range(TUNING.product_levels):
        if (
            node is None
            or node.tag in NEVER_CANDIDATE
            or node.chars > TUNING.around_ratio * root.chars
        ):
            return pick
        if holds_tag(node, "h1"):
            return single(node, pick.score)
        node = node.parent
    return pick
