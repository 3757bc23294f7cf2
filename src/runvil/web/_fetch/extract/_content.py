"""Find the main content of a page: which subtrees to render, and what to leave out inside them.

The method follows Readability's proven idea, on counts gathered while the tree was built:

1. Every block with at least 25 characters of its own text is a *paragraph*. It scores
   1 + its commas + one point per 100 characters (at most 3), and gives that score to its
   parent, half to its grandparent and a third of it, shrinking, to three more ancestors.
2. An ancestor starts from a base score for its tag and the class/id words it carries
   (``article``, ``content``, ``post`` up; ``comment``, ``sidebar``, ``share``, ``related`` down),
   and its total is scaled by ``1 - link density`` so menus and link farms sink.
3. The best-scoring element is the article. Siblings that score close to it, or that are
   substantial paragraphs with few links, join it, so an article split over sibling blocks
   comes back whole.
4. Inside the chosen subtrees, page furniture (nav, header, footer, aside, forms), hidden
   elements and containers that look like boilerplate (negative class words, link-dense
   blocks with little prose) are left out.

docs/extraction.md explains how this was tuned and how non-article pages are recognised.
"""

from __future__ import annotations

import re

from ._dom import ARIA_HIDDEN, DETACHED, FURNITURE, INLINE, Document, Element, is_readable

PARAGRAPH_MIN_CHARS = 25
# An element holding more than this share of the page's text is treated as a page wrapper even
# when its tag or class says header, footer, form or sidebar.
_WRAPPER_SHARE = 0.5

_POSITIVE = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|prose",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|"
    r"masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|"
    r"sponsor|shopping|tags|widget|social|newsletter|subscribe|breadcrumb|byline|author|"
    r"disqus|popup|modal|signup|login|cookie|advert|recommend|teaser|toolbar|menu|navbar",
    re.IGNORECASE,
)
_UNLIKELY = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|"
    r"gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
    re.IGNORECASE,
)
_MAYBE = re.compile(r"and|article|body|column|content|main|mathjax|shadow", re.IGNORECASE)
# Inside the chosen article, the same names minus "header": an article's own header (title,
# byline, section anchors) is content.
_UNLIKELY_INSIDE = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|"
    r"gdpr|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
    re.IGNORECASE,
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
# Page-kind decision (tuned on the development set; docs/extraction.md).
_REPEATED_MIN = 5
_PROSE_TAGS = frozenset({"p", "br", "span", "a"})
_ARTICLE_MIN_SHARE = 0.3
_ARTICLE_MIN_READABLE_SHARE = 0.7
_LISTING_REPEATED_SHARE = 0.5
_LISTING_ARTICLE_SHARE = 0.9
_SERIES_MIN_ITEMS = 3
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BOILERPLATE_MAX_CHARS = 2000  # a bigger block named like boilerplate is content after all
_SERIES_LEVELS = 5
# A utility class styles anything (px-6, col-12, mt24, md:flex, w-1/2); only a class that names
# a kind of block (answer, cPost, elementor-element, sc-64912480-0) makes siblings a series.
_UTILITY_CLASS = re.compile(r"-?[a-z]{1,4}-[\d.]+|\S*[:\[/]\S*|[a-z]{2,4}\d+")
_PROSE_CHARS = 80
_SERIES_MIN_CHARS = 100
_SERIES_POST_CHARS = 300  # mean item length below which look-alike items are cards
_NEVER_CANDIDATE = frozenset({"body", "html"}) | INLINE
_CONTAINERS = frozenset({"div", "section", "ul", "ol", "table", "dl", "figure", "span"})


_CACHE_LIMIT = 20_000
_weights: dict[str, int] = {}
_unlikely_names: dict[str, bool] = {}


def _name_weight(name: str) -> int:
    weight = _weights.get(name)
    if weight is None:
        weight = (-25 if _NEGATIVE.search(name) else 0) + (25 if _POSITIVE.search(name) else 0)
        if len(_weights) > _CACHE_LIMIT:
            _weights.clear()
        _weights[name] = weight
    return weight


def class_weight(element: Element) -> int:
    """Readability's class/id weight: +25 per content-like name, -25 per boilerplate name.

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


def _unlikely(element: Element) -> bool:
    """Class or id names that mark page furniture (comments, sidebars, share bars...)."""
    if element.tag in ("body", "a", "article", "main"):
        return False
    return _names_say(element, _UNLIKELY, _unlikely_names)


_unlikely_inside_names: dict[str, bool] = {}


def _unlikely_inside(element: Element) -> bool:
    """Class or id names that mark furniture inside an article's content."""
    if element.tag in _HEADING_TAGS:
        return False
    return _names_say(element, _UNLIKELY_INSIDE, _unlikely_inside_names)


def _names_say(element: Element, pattern: re.Pattern[str], verdicts: dict[str, bool]) -> bool:
    """Whether the element's class and id names match ``pattern`` and not :data:`_MAYBE`,
    memoised in ``verdicts``: pages repeat the same class strings thousands of times."""
    attrs = element.attrs
    if not attrs:
        return False
    names = (attrs.get("class") or "") + " " + (attrs.get("id") or "")
    if len(names) < 2:
        return False
    verdict = verdicts.get(names)
    if verdict is None:
        verdict = bool(pattern.search(names)) and not _MAYBE.search(names)
        if len(verdicts) > _CACHE_LIMIT:
            verdicts.clear()
        verdicts[names] = verdict
    return verdict


class Selection:
    """The chosen article: the subtrees to render (in document order), the best score, and the
    page's text measures the page-kind decision compares the article with."""

    __slots__ = (
        "chars",
        "content_chars",
        "readable_chars",
        "repeated",
        "roots",
        "score",
        "series",
        "top",
    )

    def __init__(self, roots: list[Element], top: Element | None, score: float) -> None:
        self.roots = roots
        self.top = top
        self.score = score
        self.chars = sum(root.chars for root in roots)
        self.content_chars = 0  # page text outside furniture and unlikely blocks
        self.readable_chars = 0  # of that, text in blocks that are not mostly links
        self.series = False  # the roots are look-alike siblings (posts, or cards)
        self.repeated: tuple[float, int] | None = None  # repeated_items, once computed


def select(document: Document) -> Selection:
    """Score every candidate container and choose the article's subtrees."""
    elements = document.elements
    excluded = _excluded_flags(elements)
    furniture_chars = 0
    readable_chars = 0
    for element in elements:
        if excluded[element.index]:
            parent = element.parent
            if parent is not None and not excluded[parent.index]:
                furniture_chars += element.chars
        elif is_readable(element):
            readable_chars += element.own_chars
    content_chars = document.body.chars - furniture_chars
    selection = _select(document, excluded)
    selection.content_chars = content_chars
    selection.readable_chars = readable_chars
    return selection


def _select(document: Document, excluded: list[bool]) -> Selection:
    elements = document.elements
    scores: dict[int, float] = {}
    for element in elements:
        if excluded[element.index]:
            continue
        if element.own_chars < PARAGRAPH_MIN_CHARS or element.tag in INLINE:
            continue
        score = 1.0 + element.own_commas + min(element.own_chars // 100, 3)
        ancestor = element.parent
        level = 0
        while ancestor is not None and level < 5:
            if ancestor.tag not in _NEVER_CANDIDATE or ancestor.parent is None:
                key = ancestor.index
                if key not in scores:
                    scores[key] = _TAG_BASE.get(ancestor.tag, 0) + class_weight(ancestor)
                divider = 1 if level == 0 else 2 if level == 1 else level * 3
                scores[key] += score / divider
            ancestor = ancestor.parent
            level += 1
    if not scores:
        return Selection([], None, 0.0)
    best: Element | None = None
    best_score = 0.0
    for key, score in scores.items():
        element = elements[key]  # <body> too: a page of bare paragraphs is its own article
        final = score * (1.0 - _link_density(element))
        scores[key] = final
        if best is None or final > best_score:
            best = element
            best_score = final
    if best is None:
        return Selection([], None, 0.0)
    best = _climb(best, best_score, scores, elements)
    best_score = scores.get(best.index, best_score)
    series = _series(best)
    if series is not None:
        selection = Selection(series, best, best_score)
        selection.series = True
        return selection
    return Selection(_with_siblings(best, best_score, scores), best, best_score)


def _series(best: Element) -> list[Element] | None:
    """The posts of a thread: look-alike siblings of the article (or of one of its nearest
    ancestors) that hold prose too. A forum page, a Q&A page or a page built of sections is
    all of them, not the one that happened to score best. Siblings look alike when they share
    their tag and their first class name (``answer`` and ``answer accepted-answer``)."""
    node: Element | None = best
    for _ in range(_SERIES_LEVELS):
        if node is None or node.parent is None or node.parent.parent is None:
            return None
        first = _first_class(node)
        if first and not _UTILITY_CLASS.fullmatch(first):
            tag = node.tag
            alike = [
                child
                for child in node.parent.children
                if type(child) is Element
                and child.tag == tag
                and child.chars >= _SERIES_MIN_CHARS
                and not child.flags & (FURNITURE | ARIA_HIDDEN | DETACHED)
                and _first_class(child) == first
            ]
            if len(alike) >= _SERIES_MIN_ITEMS:
                return alike
        node = node.parent
    return None


def _first_class(element: Element) -> str:
    classes = element.attrs.get("class")
    if not classes:
        return ""
    parts = classes.split(None, 1)
    return parts[0] if parts else ""


def _excluded_flags(elements: list[Element]) -> list[bool]:
    """Per element: whether it lies inside furniture, an aria-hidden or an unlikely subtree."""
    excluded = [False] * len(elements)
    if not elements:
        return excluded
    total = elements[0].chars
    for element in elements:
        parent = element.parent
        if (parent is not None and excluded[parent.index]) or element.flags & (
            ARIA_HIDDEN | DETACHED
        ):
            excluded[element.index] = True
        elif element.flags & FURNITURE or _unlikely(element):
            # A <form> or <header> that wraps most of the page is a wrapper, not furniture.
            excluded[element.index] = element.chars <= total * _WRAPPER_SHARE
    return excluded


def _link_density(element: Element) -> float:
    if element.chars == 0:
        return 0.0
    return element.link_chars / element.chars


def _climb(
    best: Element, best_score: float, scores: dict[int, float], elements: list[Element]
) -> Element:
    """Move up from the best element while its ancestors hold the content together."""
    # Several strong candidates under one ancestor mean that ancestor is the article.
    strong = [
        elements[key]
        for key, score in scores.items()
        if score >= best_score * 0.75 and elements[key] is not best
    ]
    if len(strong) >= 3:
        ancestor = best.parent
        while ancestor is not None and ancestor.parent is not None:
            inside = sum(1 for candidate in strong if _contains(ancestor, candidate))
            if inside >= 3:
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


def _contains(ancestor: Element, element: Element) -> bool:
    node: Element | None = element
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _with_siblings(best: Element, best_score: float, scores: dict[int, float]) -> list[Element]:
    parent = best.parent
    if parent is None or parent.parent is None:
        return [best]
    threshold = max(10.0, best_score * 0.2)
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
        bonus = best_score * 0.2 if best_class and child.attrs.get("class") == best_class else 0
        if scores.get(child.index, 0.0) + bonus >= threshold:
            roots.append(child)
            continue
        if child.tag == "p" or (child.tag not in INLINE and child.own_chars == child.chars):
            density = _link_density(child)
            if child.chars > 80 and density < 0.25:
                roots.append(child)
            elif 0 < child.chars <= 80 and density == 0 and child.own_commas >= 0:
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


def is_boilerplate(element: Element) -> bool:
    """Whether an element inside the article is boilerplate to leave out."""
    if element.flags & (FURNITURE | ARIA_HIDDEN):
        return True
    tag = element.tag
    if tag in INLINE:
        return False
    weight = class_weight(element)
    if (weight < 0 or _unlikely_inside(element)) and element.chars < _BOILERPLATE_MAX_CHARS:
        return True
    if tag in _CONTAINERS and element.own_commas < 10:
        density = _link_density(element)
        if density > 0.5 or (
            density > 0.2 and weight < 25 and element.chars - element.link_chars < _PROSE_CHARS
        ):
            return True
    return False


def repeated_items(document: Document) -> tuple[float, int]:
    """The largest run of look-alike siblings: its share of the page's text, and the mean text
    length of its items.

    Five or more siblings with the same tag and class (cards, result rows, product tiles) that
    hold much of the page's text mark a listing, whatever its paragraphs look like.
    """
    total = document.body.chars
    if not total:
        return 0.0, 0
    best = 0
    best_count = 1
    for element in document.elements:
        if element.flags & DETACHED:
            continue
        groups: dict[tuple[str, str | None], list[int]] = {}
        for child in element.children:
            if type(child) is Element and child.chars and child.tag not in _PROSE_TAGS:
                key = (child.tag, child.attrs.get("class"))
                group = groups.get(key)
                if group is None:
                    groups[key] = [1, child.chars]
                else:
                    group[0] += 1
                    group[1] += child.chars
        for count, chars in groups.values():
            if count >= _REPEATED_MIN and chars > best:
                best = chars
                best_count = count
    return best / total, best // best_count


def is_article(
    document: Document, selection: Selection, article_chars: int, article_readable: int
) -> bool:
    """Whether the page is an article, so that returning only its main content is right.

    The extracted content must be the bulk of the page outside its furniture: at least 30% of
    that text, and at least 70% of its readable text (blocks that are not mostly links). And a
    page whose look-alike items (cards, rows, tiles) hold over half its text is a listing unless
    the content is nearly all of it. Otherwise the page comes back whole (``raw-html``).

    The verdict never turns from no to yes when ``article_chars`` or ``article_readable``
    shrink, so ``render_html`` asks first with the selection's own size as both, before
    rendering anything.
    """
    if not selection.content_chars or not selection.readable_chars:
        return False
    if selection.series and selection.chars < _SERIES_POST_CHARS * len(selection.roots):
        return False  # short look-alike items are cards of a listing, not posts of a thread
    share = article_chars / selection.content_chars
    if share < _ARTICLE_MIN_SHARE:
        return False
    if article_readable / selection.readable_chars < _ARTICLE_MIN_READABLE_SHARE:
        return False
    if selection.repeated is None:
        selection.repeated = repeated_items(document)
    repeated, item_chars = selection.repeated
    if repeated <= _LISTING_REPEATED_SHARE:
        return True
    return share >= _LISTING_ARTICLE_SHARE and item_chars >= _SERIES_POST_CHARS
