"""The pick's siblings: paragraphs and blocks beside the best element that belong to it.

Why: an article's body is often split over sibling blocks (a lead paragraph outside the body's
wrapper, a second ``<div>`` after an inline advert), and Readability's best element holds only
one of them. A sibling joins when it scores close to the best (more readily when it shares the
best element's class), or when it is a paragraph of prose: long with few links, or short with
none and ending like a sentence.
"""

from __future__ import annotations

from ._dom import ARIA_HIDDEN, FURNITURE, INLINE, Element
from ._tree import link_density
from ._tuning import TUNING


def with_siblings(best: Element, best_score: float, scores: dict[int, float]) -> list[Element]:
    """``best`` and the siblings that join it, in document order."""
    parent = best.parent
    if parent is None or parent.parent is None:
        return [best]
    tuning = TUNING
    threshold = max(tuning.sibling_least_score, best_score * tuning.sibling_score_share)
    prose_chars = tuning.sibling_prose_chars
    best_class = best.attrs.get("class")
    roots: list[Element] = []
    for child in parent.children:
        if type(child) is not Element:
            continue
        if child is best:
            roots.append(child)
            continue
        if child.flags & (FURNITURE | ARIA_HIDDEN):
            continue
        bonus = (
            best_score * tuning.sibling_class_bonus
            if best_class and child.attrs.get("class") == best_class
            else 0
        )
        if scores.get(child.index, 0.0) + bonus >= threshold:
            roots.append(child)
            continue
        if child.tag == "p" or (child.tag not in INLINE and child.own_chars == child.chars):
            density = link_density(child)
            if child.chars > prose_chars and density < tuning.sibling_link_density:
                roots.append(child)
            elif 0 < child.chars <= prose_chars and density == 0 and child.own_commas >= 0:
                text_end = _last_text(child)
                if text_end.endswith((".", "!", "?", "。")):
                    roots.append(child)
    return roots


def _last_text(element: Element) -> str:
    node: Element = element
    while True:
        for child in reversed(node.children):
            if type(child) is str:
                if child.strip():
                    return child.strip()
                continue
            assert isinstance(child, Element)
            if child.chars:
                node = child
                break
        else:
            return ""
