"""Readability's pick: score paragraphs into their ancestors, take the best, climb to what
holds it together.

Why Readability's scores: on news and blog articles they find the body's container from
counts the tree already holds (text, commas, link text), in one pass. Every block with at
least ``TUNING.paragraph_min_chars`` of its own text is a *paragraph*; it scores 1 + its commas
+ one point per ``TUNING.chars_per_point`` characters (at most ``TUNING.length_points_most``)
and gives that to its parent, half to its grandparent and a shrinking share to more
ancestors (``TUNING.score_levels`` in all), which start from a base for their tag and
class/id words; totals are scaled by ``1 - link density``. The best element, climbed to its
ancestors, then grown to a series of look-alike posts (:mod:`_pick_series`) or its sibling
paragraphs (:mod:`_pick_siblings`), is the pick.
"""

from __future__ import annotations

from ._dom import INLINE, Document, Element
from ._names import NamePattern
from ._pick_series import series
from ._pick_siblings import with_siblings
from ._selection import Pick
from ._tree import contains, link_density
from ._tuning import TUNING

_POSITIVE = NamePattern(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|prose",
)
_NEGATIVE = NamePattern(
    r"-ad-|hidden|banner|combx|comment|com-|contact|footer|gdpr|"
    r"masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|"
    r"sponsor|shopping|tags|widget|social|newsletter|subscribe|breadcrumb|byline|author|"
    r"disqus|popup|modal|signup|login|cookie|advert|recommend|teaser|toolbar|menu|navbar",
    whole_words="hid",
)

_TAG_BASE = {
    "div": 5,
    "article": 8,
    "main": 5,
    "section": 3,
    "pre": 3,
    "td": 3,
    "blockquote": 3,
    "address": -3,
    "ol": -3,
    "ul": -3,
    "dl": -3,
    "dd": -3,
    "dt": -3,
    "li": -3,
    "form": -3,
    "h1": -5,
    "h2": -5,
    "h3": -5,
    "h4": -5,
    "h5": -5,
    "h6": -5,
    "th": -5,
}
# Never a candidate: the page itself (but <body> is, when it is the only one) and inline
# elements (a paragraph's score goes to the block holding it).
NEVER_CANDIDATE = frozenset({"body", "html"}) | INLINE

_CACHE_LIMIT = 20_000
_weights: dict[str, int] = {}


def _name_weight(name: str) -> int:
    weight = _weights.get(name)
    if weight is None:
        points = TUNING.name_weight
        weight = (-points if _NEGATIVE.search(name) else 0) + (
            points if _POSITIVE.search(name) else 0
        )
        if len(_weights) > _CACHE_LIMIT:
            _weights.clear()
        _weights[name] = weight
    return weight


def class_weight(element: Element) -> int:
    """Readability's class/id weight: ``TUNING.name_weight`` per content-like name, minus as
    much per boilerplate name.

    Pages repeat the same class strings thousands of times, so verdicts are memoised.
    """
    attrs = element.attrs
    if not attrs:
        return 0
    weight = 0
    classes = attrs.get("class")
    if classes:
        weight += _name_weight(classes)
    ident = attrs.get("id")
    if ident:
        weight += _name_weight(ident)
    return weight


def readability_pick(document: Document, excluded: list[bool]) -> Pick:
    """Score every paragraph outside ``excluded`` into its ancestors and pick the best,
    climbed and grown (an empty pick when no block holds a paragraph)."""
    elements = document.elements
    scores = score_paragraphs(elements, excluded)
    if not scores:
        return Pick([], None, 0.0)
    best: Element | None = None
    best_score = 0.0
    for key, score in scores.items():
        element = elements[key]  # <body> too: a page of bare paragraphs is its own article
        final = score * (1.0 - link_density(element))
        scores[key] = final
        if best is None or final > best_score:
            best = element
            best_score = final
    if best is None:
        return Pick([], None, 0.0)
    best = _climb(best, best_score, scores, elements)
    best_score = scores.get(best.index, best_score)
    posts = series(best)
    if posts is not None:
        return Pick(posts, best, best_score, series=True)
    return Pick(with_siblings(best, best_score, scores), best, best_score)


def score_paragraphs(elements: list[Element], excluded: list[bool]) -> dict[int, float]:
    """Readability's scores before link density, by element index: each paragraph's points
    spread over its ancestors, each of which starts from its tag's and names' base."""
    tuning = TUNING
    least = tuning.paragraph_min_chars
    per_point = tuning.chars_per_point
    most_points = tuning.length_points_most
    levels = tuning.score_levels
    scores: dict[int, float] = {}
    for element in elements:
        if excluded[element.index]:
            continue
        if element.own_chars < least or element.tag in INLINE:
            continue
        score = 1.0 + element.own_commas + min(element.own_chars // per_point, most_points)
        ancestor = element.parent
        level = 0
        while ancestor is not None and level < levels:
            if ancestor.tag not in NEVER_CANDIDATE or ancestor.parent is None:
                key = ancestor.index
                if key not in scores:
                    base = _TAG_BASE.get(ancestor.tag, 0)
                    if ancestor.attrs and ancestor.attrs.get("role") == "main":
                        base = _TAG_BASE["main"]  # role="main" is a <main> by another name
                    scores[key] = base + class_weight(ancestor)
                divider = 1 if level == 0 else 2 if level == 1 else level * 3
                scores[key] += score / divider
            ancestor = ancestor.parent
            level += 1
    return scores


def _climb(
    best: Element, best_score: float, scores: dict[int, float], elements: list[Element]
) -> Element:
    """Move up from the best element while its ancestors hold the content together."""
    # Several strong candidates under one ancestor mean that ancestor is the article.
    strong_most = TUNING.strong_most
    strong = [
        elements[key]
        for key, score in scores.items()
        if score >= best_score * TUNING.strong_share and elements[key] is not best
    ]
    if len(strong) >= strong_most:
        ancestor = best.parent
        while ancestor is not None and ancestor.parent is not None:
            inside = sum(1 for candidate in strong if contains(ancestor, candidate))
            if inside >= strong_most:
                best = ancestor
                break
            ancestor = ancestor.parent
    # A lone child says nothing about its wrapper: the wrapper is the article.
    while (
        best.parent is not None
        and best.parent.parent is not None
        and sum(1 for child in best.parent.children if type(child) is Element) == 1
    ):
        best = best.parent
    return best
