"""Find the main content of a page: which subtrees to render, what to leave out inside them,
and whether the page is an article at all.

1. **Readability's scores**, on counts gathered while the tree was built: every block with
   at least 25 characters of its own text is a *paragraph*; it scores 1 + its commas + one
   point per 100 characters (at most 3) and gives that to its parent, half to its grandparent
   and a shrinking share to three more ancestors, which start from a base for their tag and
   class/id words; totals are scaled by ``1 - link density``. The best element, grown to its
   ancestors, a series of look-alike posts or its sibling paragraphs, is the *pick*.
2. **The densest prose** (:func:`_densest`): per element, the prose in its whole subtree net
   of link text and fragments. A pick holding under a quarter of the densest region's prose
   is a fragment of it (a title block, a teaser, one section of a page-builder article) and
   the region replaces it.
3. **What the page declares** (``_signals``): a microdata ``itemprop="articleBody"`` element,
   or the element holding the start and the end of a JSON-LD ``articleBody``, replaces a pick
   that lies elsewhere or is a piece of it, but never narrows one that holds it.
4. **Furniture inside the pick** (:class:`Skipper`): furniture tags and roles, hidden
   elements, figure captions, blocks whose class/id words name furniture (``_names``), blocks
   of links, and short blocks whose words are furniture (``_cues``: "Related articles",
   "Read more: ...", "Foto: ...", "Share").
5. **The page kind** (:func:`is_article`): a listing of cards, or a page where the article
   is a small part of the text, comes back whole; declarations (``og:type``, JSON-LD, a
   publication date, a dated URL) lower the bar.

docs/extraction.md explains every rule with the kind of page it serves.
"""

from __future__ import annotations

import itertools
import re

from . import _cues
from ._dom import ARIA_HIDDEN, DETACHED, FURNITURE, INLINE, Document, Element, is_readable
from ._names import FURNITURE as NAMED_FURNITURE
from ._names import SHORT, WEAK, NamePattern, furniture
from ._signals import body_probes
from ._tuning import TUNING

PARAGRAPH_MIN_CHARS = 25
# An element holding more than this share of the page's text is treated as a page wrapper even
# when its tag or class says header, footer, form or sidebar.
_WRAPPER_SHARE = 0.5

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
_UNLIKELY = NamePattern(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|"
    r"gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
)
_UNLIKELY_THREAD = NamePattern(
    r"-ad-|ai2html|banner|breadcrumbs|combx|cover-wrap|disqus|extra|footer|"
    r"gdpr|header|legends|menu|related|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
)
_MAYBE = NamePattern(r"and|article|body|column|content|main|mathjax|shadow")

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
_CARD_MAX_CHARS = 1500
_CARDS_SHARE = 0.5
_LEADING_LINKS = 0.6
_CARD_LINK_DENSITY = 0.1
_CARD_SIZE_RATIO = 3  # the pick is a card when it is at most this many times the mean card
_TITLE_CHARS = 12
_CARD_BLURB_CHARS = 20
_DECLARED_SHARE = 0.1
_DECLARED_READABLE = 0.2
_ARTICLE_MIN_SHARE = 0.3
_ARTICLE_MIN_READABLE_SHARE = 0.7
_DATED_SHARE = 0.2
_DATED_READABLE = 0.4
_DATED_MOST = 3
_LANDING_PROSE = 0.25
_LANDING_MIN_CHARS = 1000
_PROSE_BLOCK_CHARS = PARAGRAPH_MIN_CHARS  # as long as a block Readability scores
_AROUND_RATIO = 3
_KEPT_SHARE = 0.5
_HEADINGS_PER_1000 = 4
_TITLE_LINKS_PER_1000 = 6
_LINK_TEXT_SHARE = 0.25
_SERIES_MIN_ITEMS = 3
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SERIES_LEVELS = 5
# A utility class styles anything (px-6, col-12, mt24, md:flex, w-1/2); only a class that names
# a kind of block (answer, cPost, elementor-element, sc-64912480-0) makes siblings a series.
_UTILITY_CLASS = re.compile(r"-?[a-z]{1,4}-[\d.]+|\S*[:\[/]\S*|[a-z]{2,4}\d+")
_PROSE_CHARS = 80
_SERIES_MIN_CHARS = 100
_SERIES_POST_CHARS = 300  # mean item length below which look-alike items are cards
_NEVER_CANDIDATE = frozenset({"body", "html"}) | INLINE
_CONTAINERS = frozenset({"div", "section", "ul", "ol", "table", "dl", "figure", "span"})
_MENU_TAGS = frozenset({"nav", "menu"})
_MENU_ARTICLE_CHARS = 1000  # the least article a page-sized menu is discounted beside


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


def _unlikely(element: Element, thread: bool = False) -> bool:
    """Class or id names that mark page furniture (comments, sidebars, share bars...). On a
    forum thread or Q&A page, comments and replies are the content."""
    if element.tag in ("body", "a", "article", "main") or element.attrs.get("role") == "main":
        return False
    if thread:
        return _names_say(element, _UNLIKELY_THREAD, _unlikely_thread_names)
    return _names_say(element, _UNLIKELY, _unlikely_names)


_unlikely_thread_names: dict[str, bool] = {}


def _names_say(element: Element, pattern: NamePattern, verdicts: dict[str, bool]) -> bool:
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
        verdict = pattern.search(names) and not _MAYBE.search(names)
        if len(verdicts) > _CACHE_LIMIT:
            verdicts.clear()
        verdicts[names] = verdict
    return verdict


class Selection:
    """The chosen article: the subtrees to render (in document order), the best score, and the
    page's text measures the page-kind decision compares the article with."""

    __slots__ = (
        "cards",
        "chars",
        "content_chars",
        "copied",
        "dates",
        "declared",
        "inside_chars",
        "inside_readable",
        "outside_chars",
        "outside_readable",
        "page",
        "readable_chars",
        "readable_most",
        "roots",
        "score",
        "series",
        "teasers",
        "top",
    )

    def __init__(self, roots: list[Element], top: Element | None, score: float) -> None:
        self.roots = roots
        self.top = top
        self.score = score
        self.chars = sum(root.chars for root in roots)
        self.content_chars = 0  # page text outside furniture and unlikely blocks
        self.readable_chars = 0  # of that, text in blocks that are not mostly links
        self.outside_chars = 0  # content_chars outside the roots
        self.outside_readable = 0  # readable_chars outside the roots
        self.inside_chars = 0  # content_chars inside the roots
        self.inside_readable = 0  # readable_chars inside the roots
        self.copied: bool | None = None  # _copied, once computed
        self.readable_most = 0  # the most readable text a rendering of the roots can count
        self.series = False  # the roots are look-alike siblings (posts, or cards)
        self.declared = False  # the page marks the article's container (microdata, JSON-LD)
        self.cards: bool | None = None  # _cards, once computed
        self.teasers: tuple[int, int] | None = None  # _teasers, once computed
        self.dates: int | None = None  # _page_dates, once counted
        self.page: tuple[Document, list[bool], list[bool]] | None = None


def select(document: Document) -> Selection:
    """Score every candidate container and choose the article's subtrees.

    Three passes over the elements: one marks furniture and link text and sums the page's
    text (:func:`_mark`), one gives Readability's scores (:func:`_select`), one sums the prose
    under every element (:func:`_densest`); the rest looks only at the pick."""
    page = _mark(document)
    excluded = page.excluded
    linked = page.linked
    selection = _select(document, excluded)
    if not selection.roots:
        return selection  # no block holds a paragraph: the only text is <body>'s own
    if selection.roots[0] is not document.body:  # <body> holds every denser region
        prose, densest = _densest(document, excluded, linked)
        declared = _declared(document, page.itemprops, prose)
        selection = _choose(selection, densest, declared, prose)
        selection.declared = declared is not None
        signals = document.signals
        if signals.ld_products == 1 or signals.og_type == "product":
            selection = _with_product_name(selection)
        if declared is None and signals.ld_article and not signals.thread_region:
            article = _one_article(document, excluded, linked)
            if article is not None and _among_teasers(selection, article, prose):
                selection = _single(article, selection.score)  # a short article among teasers
    selection.content_chars = page.content_chars
    selection.readable_chars = page.readable_chars
    inside_chars, inside_readable, readable_most = _text_in(selection.roots, excluded, linked)
    selection.readable_most = readable_most
    selection.inside_chars = inside_chars
    selection.inside_readable = inside_readable
    outside_chars = page.content_chars - inside_chars
    outside_readable = page.readable_chars - inside_readable
    menus = page.menus if inside_chars >= _MENU_ARTICLE_CHARS else []
    for menu in _menus_beside(selection.roots, menus):
        # A navigation block that holds most of the page but not an article of its own
        # length is a mega-menu (a site map in an off-canvas menu), not the page's content.
        # (Beside a short block, a big menu is all a listing loaded by scripts shows.)
        menu_chars, menu_readable, _ = _text_in([menu], excluded, linked)
        outside_chars -= menu_chars
        outside_readable -= menu_readable
    selection.outside_chars = max(0, outside_chars)
    selection.outside_readable = max(0, outside_readable)
    selection.page = (document, excluded, page.anchors)
    return selection


def _menus_beside(roots: list[Element], menus: list[Element]) -> list[Element]:
    """The outermost of ``menus`` (in document order) that neither hold the pick nor lie
    inside it. Containment is read from document positions, so nested menus cost a walk
    down each outermost one's last children, not a walk up for every pair."""
    found = []
    spans = [(root.index, _last_descendant(root).index) for root in roots]
    end = -1
    for menu in menus:
        if menu.index <= end:
            continue  # inside the outermost menu before it
        end = _last_descendant(menu).index
        if any(
            menu.index <= first <= end or first <= menu.index <= last for first, last in spans
        ):
            continue
        found.append(menu)
    return found


def _text_in(
    roots: list[Element], excluded: list[bool], linked: list[bool]
) -> tuple[int, int, int]:
    """The text of ``roots`` outside excluded blocks, the readable part of it (text in readable
    blocks outside links), as :func:`_mark` counts the page's, and the readable text of all
    their blocks, excluded or linked or not (the most a rendering of ``roots`` can count)."""
    chars = readable = most = 0
    stack = list(roots)
    while stack:
        element = stack.pop()
        if element.tag not in INLINE:  # an inline element's own text is its block's
            own = element.own_chars
            if is_readable(element):
                most += own
                if not linked[element.index] and not excluded[element.index]:
                    readable += own
            if not excluded[element.index]:
                chars += own
        if element.own_chars != element.chars:
            stack.extend(child for child in element.children if type(child) is Element)
    return chars, readable, most


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
                    base = _TAG_BASE.get(ancestor.tag, 0)
                    if ancestor.attrs and ancestor.attrs.get("role") == "main":
                        base = _TAG_BASE["main"]  # role="main" is a <main> by another name
                    scores[key] = base + class_weight(ancestor)
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


class _Page:
    """What the first pass over the elements found (see :func:`_mark`)."""

    __slots__ = (
        "anchors",
        "content_chars",
        "excluded",
        "itemprops",
        "linked",
        "menus",
        "readable_chars",
    )

    def __init__(self, count: int) -> None:
        self.excluded = [False] * count
        self.linked = [False] * count
        self.anchors = [False] * count  # is or holds an <a>, even one with no text
        self.itemprops: list[Element] = []  # elements marked itemprop="articleBody"
        self.menus: list[Element] = []  # navigation too big to be told from a page wrapper
        self.content_chars = 0  # the page's text outside furniture
        self.readable_chars = 0  # of that, in blocks that are not mostly links


def _mark(document: Document) -> _Page:
    """One pass over the elements: which lie inside furniture, an aria-hidden or an unlikely
    subtree (``excluded``), which inside a link (``linked``), the page's text outside
    furniture and the readable part of it, and the ``itemprop="articleBody"`` elements.

    Furniture that wraps most of the page (over half its text, or over half the text that is
    not in links) is a wrapper, not furniture: an ASP.NET ``<form>``, a ``<header>`` around
    everything, an ``<aside>`` or a ``socialicons-sticky`` block that a theme put around the
    article.

    Text inside a link is a link's text even in a paragraph of its own: a teaser card is
    often one ``<a>`` around a title, an image and a paragraph of blurb, and the blurb is
    not prose the page has to offer besides its article. (A publication date marked up in
    microdata, ``itemprop="datePublished"``, is noted in the page's signals here too.)"""
    elements = document.elements
    page = _Page(len(elements))
    excluded = page.excluded
    linked = page.linked
    anchors = page.anchors
    body = document.body
    total = body.chars
    total_prose = total - body.link_chars
    wrapper = _WRAPPER_SHARE
    thread = document.signals.thread
    furniture_chars = readable_chars = 0
    for element in elements:
        index = element.index
        parent = element.parent
        if element.tag == "a":
            # A card's link is often an empty <a> laid over its image: it holds no text.
            node: Element | None = element
            while node is not None and not anchors[node.index]:
                anchors[node.index] = True
                node = node.parent
        if parent is not None:
            if linked[parent.index] or parent.tag == "a":
                linked[index] = True
            if excluded[parent.index]:
                excluded[index] = True
                continue
        if element.flags & (ARIA_HIDDEN | DETACHED):
            excluded[index] = True
        elif element.flags & FURNITURE or _unlikely(element, thread):
            if (
                element.chars <= total * wrapper
                and element.chars - element.link_chars <= total_prose * wrapper
            ):
                excluded[index] = True
            elif element.tag in _MENU_TAGS or element.attrs.get("role") == "navigation":
                page.menus.append(element)  # a wrapper, or a mega-menu as big as the page
        if excluded[index]:
            furniture_chars += element.chars
            continue
        attrs = element.attrs
        if attrs and "itemprop" in attrs:
            itemprop = attrs.get("itemprop")
            if itemprop == "articleBody":
                page.itemprops.append(element)
            elif itemprop == "datePublished":
                document.signals.published = True
        if not linked[index] and is_readable(element):
            readable_chars += element.own_chars
    page.content_chars = total - furniture_chars
    page.readable_chars = readable_chars
    return page


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


def _named(element: Element, thread: bool = False) -> int:
    """What the element's class and id names say (``_names``): furniture, furniture when
    short, furniture when mostly links, or nothing."""
    attrs = element.attrs
    if not attrs:
        return 0
    classes = attrs.get("class")
    ident = attrs.get("id")
    if ident:
        return furniture(f"{classes} {ident}" if classes else ident, thread)
    return furniture(classes, thread) if classes else 0


# Captions and credits of figures: WCXB's texts leave them out (263 of 301 on the tuning split)
# and so do the trafilatura snippets (51 captions are "without" snippets, 9 "with").
_CAPTION_TAGS = frozenset({"figcaption"})
_WEAK_LINK_DENSITY = 0.3
_SHORT_CHARS = 400  # a login box or a paywall prompt; a longer "paywall" block is the article


# Why an element inside the article is left out.
KEEP = 0
NAMED = 1  # page furniture by its tag, role, class or id: furniture wherever it is
DENSE = 2  # a block of links: furniture here, but the stuff listings are made of


class Skipper:
    """The test for what to leave out inside the chosen article (see :func:`boilerplate`),
    which also counts the text it leaves out for link density: the page-kind decision counts
    that text as the page's content (a listing's cards are links), while named furniture
    (comments, share bars, related stories) is not content on any kind of page.

    An element that holds over half of the article is never furniture, whatever it is called:
    it is a wrapper (an ASP.NET ``<form>``, a ``content-sidebar-wrap``), unless it is named
    furniture and holds cards (a related-posts list with blurbs, longer than a short post).

    Short blocks are also read (``_cues``): a heading such as "Related articles" or
    "Comments" is left out with what follows it up to the next heading of its rank (unless
    that is over half of the article: then only the heading goes), and "Read more: ..."
    lines, photo credits and lines of control words are left out alone. Headings are kept
    by the name rules: a heading is content whatever its class says.

    Reading cues is bounded by construction: at most :data:`_CUE_CHECKS` blocks are read per
    article, each only when its text is reached within :data:`_CUE_NODES` nodes, and at most
    :data:`_CUTS` sections are cut, each after one pass over its siblings. A page of 200,000
    short paragraphs costs no more than an article of a few thousand."""

    __slots__ = ("checks", "cut", "cuts", "dense_chars", "limit", "thread", "wrapper")

    def __init__(self, selection: Selection, thread: bool = False) -> None:
        self.wrapper = selection.chars // 2
        self.limit = selection.chars // 2
        self.dense_chars = 0
        self.cut: dict[int, int] = {}  # parent index: heading rank that ends the cut
        self.thread = thread  # a forum thread or a Q&A page: its comments are the content
        self.checks = _CUE_CHECKS  # blocks left to read for cues
        self.cuts = _CUTS  # sections left to cut

    def __call__(self, element: Element) -> bool:
        if element.chars > self.wrapper:
            # A wrapper holds the article's prose; a related-posts list as big is cards.
            return _named(element, self.thread) == NAMED_FURNITURE and _holds_cards(element)
        parent = element.parent
        if parent is not None and self.cut and parent.index in self.cut:
            rank = _HEADING_RANK.get(element.tag)
            if rank is not None and rank <= self.cut[parent.index]:
                del self.cut[parent.index]
            else:
                return True
        verdict = boilerplate(element, self.thread)
        if verdict == DENSE:
            self.dense_chars += element.chars
        if verdict != KEEP:
            return True
        if (
            element.tag in INLINE
            or element.tag in _TABLE_PARTS
            or not 0 < element.chars <= _cues.CUE_MAX_CHARS
            or not self.checks
        ):
            return False
        self.checks -= 1
        return self._cue(element)

    def _cue(self, element: Element) -> bool:
        first = _first_text(element)
        if not first or not _cues.may_be_cue(first):
            return False
        text = _text_of(element)
        if not text:
            return False
        if not self.thread and _cues.section_heading(text):
            if self.cuts:
                self.cuts -= 1
                self._cut_after(element)
            return True
        if element.link_chars * 5 >= element.chars * 2 and _cues.read_more(text):
            return True
        return _cues.credit(text) or _cues.controls(text)

    def _cut_after(self, element: Element) -> None:
        """Leave out what follows ``element`` (or the wrapper that holds only it) up to the
        next heading of its rank, unless that is over half of the article."""
        holder = element
        while (
            holder.parent is not None
            and holder.parent.parent is not None
            and holder.parent.chars == element.chars
        ):
            holder = holder.parent
        parent = holder.parent
        if parent is None:
            return
        following = 0
        seen = False
        for child in parent.children:
            if child is holder:
                seen = True
            elif seen and type(child) is Element:
                following += child.chars
        if following <= self.limit:
            self.cut[parent.index] = _HEADING_RANK.get(element.tag, 7)


_CUE_CHECKS = 4096
_CUE_NODES = 64
_CUTS = 32
# A table's cells say what they say: "Facebook" in a table of ad prices is data.
_TABLE_PARTS = frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption"})
_HEADING_RANK = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


def _first_text(element: Element) -> str:
    """The first text of a subtree that is not only spaces (``""`` when it takes over
    :data:`_CUE_NODES` nodes to reach)."""
    children = element.children
    if children and type(children[0]) is str and not children[0].isspace():
        return children[0]  # the common case: a block that starts with its text
    stack: list[Element | str] = [element]
    nodes = _CUE_NODES
    while stack and nodes:
        nodes -= 1
        node = stack.pop()
        if type(node) is str:
            if not node.isspace():
                return node
        else:
            assert isinstance(node, Element)
            stack.extend(reversed(node.children))
    return ""


def _text_of(element: Element) -> str:
    """The text of a small subtree, in document order (``""`` when it has over
    :data:`_CUE_NODES` nodes: a line of furniture is a few nodes, not thousands)."""
    parts: list[str] = []
    stack: list[Element | str] = [element]
    nodes = _CUE_NODES
    while stack:
        nodes -= 1
        if not nodes:
            return ""
        node = stack.pop()
        if type(node) is str:
            parts.append(node)
        else:
            assert isinstance(node, Element)
            stack.extend(reversed(node.children))
    return " ".join(parts)


def boilerplate(element: Element, thread: bool = False) -> int:
    """Whether an element inside the article is boilerplate to leave out, and why."""
    if element.flags & (FURNITURE | ARIA_HIDDEN):
        return NAMED
    tag = element.tag
    if not element.attrs and tag not in _CONTAINERS and tag not in _CAPTION_TAGS:
        return KEEP  # a plain paragraph, heading or item: nothing names it furniture
    if tag in INLINE:
        return KEEP
    if tag in _CAPTION_TAGS:
        return NAMED
    named = _named(element, thread)
    if tag not in _HEADING_TAGS and (
        named == NAMED_FURNITURE or (named == SHORT and element.chars < _SHORT_CHARS)
    ):
        return NAMED
    density = _link_density(element)
    if named == WEAK and density > _WEAK_LINK_DENSITY:
        return DENSE
    if tag in _CONTAINERS and element.own_commas < 10:
        prose = element.chars - element.link_chars
        if density > 0.5 or (density > 0.2 and class_weight(element) < 25 and prose < _PROSE_CHARS):
            return DENSE
    return KEEP


def _cards(selection: Selection) -> bool:
    """Whether the pick is a listing: five or more look-alike siblings (same tag and class)
    averaging under :data:`_CARD_MAX_CHARS`, most of which start with a title-length link (to
    the item's own page) and hold :data:`_CARD_LINK_DENSITY` of their text in links, that hold
    half of the pick's text, or one of which (of a size like the others') is the pick.
    Sections and posts of an article look alike too, but do not start with such a link.
    Cards inside a block named furniture (``related-posts``) are a related list, which the
    article leaves out, not the page's listing."""
    roots = selection.roots
    if len(roots) == 1:
        node: Element | None = roots[0]
        for _ in range(_SERIES_LEVELS):  # the pick inside one card
            if node is None or node.parent is None:
                break
            items = _alike(node)
            if (
                items is not None
                and node.chars * len(items) <= _CARD_SIZE_RATIO * sum(i.chars for i in items)
                and _card_like(items)
            ):
                return True
            node = node.parent
    threshold = selection.chars * _CARDS_SHARE
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
            if len(items) < _REPEATED_MIN:
                continue
            parent = items[0].parent
            if parent is not None and _named(parent) == NAMED_FURNITURE:
                continue  # a related-posts list named so, however big: not the page's cards
            chars = sum(item.chars for item in items)
            if chars >= threshold and chars < _CARD_MAX_CHARS * len(items) and _card_like(items):
                return True
        while stack and stack[-1].chars < threshold:
            stack.pop()
        if not stack:
            return False
        children = stack.pop().children


def _holds_cards(element: Element) -> bool:
    """Whether the element's children include five or more look-alike cards."""
    groups: dict[tuple[str, str | None], list[Element]] = {}
    for child in element.children:
        if type(child) is Element and child.chars:
            groups.setdefault((child.tag, child.attrs.get("class")), []).append(child)
    return any(len(items) >= _REPEATED_MIN and _card_like(items) for items in groups.values())


def _alike(element: Element) -> list[Element] | None:
    """``element`` and its siblings of the same tag and class, when there are five or more
    averaging under :data:`_CARD_MAX_CHARS`."""
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
    if len(items) < _REPEATED_MIN or chars >= _CARD_MAX_CHARS * len(items):
        return None
    return items


def _card_like(items: list[Element]) -> bool:
    """Whether look-alike items are cards: links hold :data:`_CARD_LINK_DENSITY` of their
    text but leave :data:`_CARD_BLURB_CHARS` of other text per item (a list of bare links
    is a menu, left out as one), and most of them start with a link of a title's length."""
    chars = sum(item.chars for item in items)
    links = sum(item.link_chars for item in items)
    if links < _CARD_LINK_DENSITY * chars or chars - links < _CARD_BLURB_CHARS * len(items):
        return False
    leading = sum(1 for item in items if _starts_with_link(item))
    return leading >= _LEADING_LINKS * len(items)


def _starts_with_link(element: Element) -> bool:
    """Whether the element's first text is a link of at least :data:`_TITLE_CHARS`."""
    stack: list[tuple[Element | str, Element | None]] = [
        (element, element if element.tag == "a" else None)
    ]
    while stack:
        node, link = stack.pop()
        if type(node) is str:
            if node.strip():
                return link is not None and link.chars >= _TITLE_CHARS
            continue
        assert isinstance(node, Element)
        if not node.chars:
            continue
        if link is None and node.tag == "a":
            link = node
        stack.extend((child, link) for child in reversed(node.children))
    return False


def is_article(
    document: Document,
    selection: Selection,
    article_chars: int,
    article_readable: int,
    dense_chars: int = 0,
    text: str | None = None,
) -> bool:
    """Whether the page is an article, so that returning only its main content is right.

    Not an article (the page comes back whole, ``raw-html``):

    - a listing: the pick is a run of cards that start with a link, or one of them
      (:func:`_cards`), or look-alike items averaging under 300 characters;
    - the article is a small part of the page: its text is under :data:`_DECLARED_SHARE` of
      the page's text outside furniture (link blocks skipped inside the pick count as the
      page's), or its readable text under :data:`_DECLARED_READABLE` of the page's, both
      counted without the teaser rails that follow the article (:func:`_teasers`) and
      without a second copy of the article (:func:`_copied`) (and, beside an article of
      :data:`_MENU_ARTICLE_CHARS`, without a page-sized navigation block: a mega-menu);
    - for a page that does not declare itself an article (``og:type``, JSON-LD, microdata), the
      same with the stricter :data:`_ARTICLE_MIN_SHARE` and :data:`_ARTICLE_MIN_READABLE_SHARE`,
      and an article that reads like a list of links: under :data:`_KEPT_SHARE` of the pick
      kept, over :data:`_HEADINGS_PER_1000` headings or :data:`_TITLE_LINKS_PER_1000` title
      links per 1,000 characters, or over :data:`_LINK_TEXT_SHARE` of its text in links.

    ``text`` is the rendered article, ``None`` before rendering: the verdict never turns from
    no to yes as ``article_chars`` or ``article_readable`` shrink, or when ``text`` is given,
    so ``render_html`` asks first with the selection's own size, before rendering anything.
    """
    if not article_chars or not article_readable:
        return False
    if selection.series and selection.chars < _SERIES_POST_CHARS * len(selection.roots):
        return False  # short look-alike items are cards of a listing, not posts of a thread
    if selection.cards is None:
        selection.cards = _cards(selection)
    if selection.cards:
        return False
    outside = selection.outside_chars
    outside_readable = selection.outside_readable
    share = article_chars / (article_chars + outside + dense_chars)
    readable = article_readable / (article_readable + outside_readable)
    declared = selection.declared or document.signals.declares_article
    if (
        declared
        and article_readable >= TUNING.short_article_readable
        and _declared_body(selection, document.signals.ld_article)
    ):
        return True  # a short article on a large portal page is still the article
    least_share, least_readable = (
        (_DECLARED_SHARE, _DECLARED_READABLE)
        if declared
        else (_ARTICLE_MIN_SHARE, _ARTICLE_MIN_READABLE_SHARE)
    )
    if share < least_share or readable < least_readable:
        if selection.teasers is None:
            selection.teasers = _teasers(selection)
        teaser_chars, teaser_readable = selection.teasers
        outside = max(0, outside - teaser_chars)
        outside_readable = max(0, outside_readable - teaser_readable)
        share = article_chars / (article_chars + outside + dense_chars)
        readable = article_readable / (article_readable + outside_readable)
    if share < least_share or readable < least_readable:
        if selection.copied is None:
            selection.copied = _copied(selection)
        if selection.copied:  # the page holds the article twice: one copy is not other text
            outside = max(0, outside - selection.inside_chars)
            outside_readable = max(0, outside_readable - selection.inside_readable)
            share = article_chars / (article_chars + outside + dense_chars)
            readable = article_readable / (article_readable + outside_readable)
    if declared:
        return share >= _DECLARED_SHARE and readable >= _DECLARED_READABLE
    if article_chars < _KEPT_SHARE * (article_chars + dense_chars):
        return False  # the pick is mostly blocks of links
    if share < _ARTICLE_MIN_SHARE or readable < _ARTICLE_MIN_READABLE_SHARE:
        # An article shows its date once or twice around its text, and a listing one per
        # item (or none): the lower thresholds of a dated article.
        if share < _DATED_SHARE or readable < _DATED_READABLE:
            return False
        if document.signals.og_type:  # it says what it is, and that is not an article
            return False
        if selection.dates is None:
            selection.dates = _dates_around(selection)
        return 1 <= selection.dates <= _DATED_MOST
    if text is None:
        return True
    if _reads_like_links(text):
        return False
    # A page that declares nothing, shows no date and whose text is not prose is a landing
    # page or a catalogue (headings, blurbs, feature lists): it comes back whole. (A short
    # page is too short to tell.)
    return (
        article_chars < _LANDING_MIN_CHARS
        or _prose_share(text) >= _LANDING_PROSE
        or _page_dated(document)
    )


def _declared_body(selection: Selection, ld_article: bool) -> bool:
    """Whether the pick is the body a page declares as its article (*news portals and blogs
    whose short article sits among many teaser blocks*): the element microdata or JSON-LD's
    ``articleBody`` locates, or, on a page that declares an article in JSON-LD, its one
    ``<article>`` element (:func:`_one_article`)."""
    if selection.declared:
        return True
    return ld_article and len(selection.roots) == 1 and selection.roots[0].tag == "article"


def _with_product_name(selection: Selection) -> Selection:
    """On a product page, a one-block pick without the page's ``<h1>`` grows to the nearest
    ancestor, ``TUNING.product_levels`` up at most, that holds the ``<h1>`` and under
    :data:`_AROUND_RATIO` times the pick's text (*shop platforms: the name and price above
    the description, the specification table beside it*); the basket form, shipping notes
    and recommendation carousels stay out as furniture or outside it."""
    if len(selection.roots) != 1 or selection.series:
        return selection
    root = selection.roots[0]
    if _holds_tag(root, "h1"):
        return selection
    node = root.parent
    for _ in range(TUNING.product_levels):
        if node is None or node.tag in _NEVER_CANDIDATE or node.chars > _AROUND_RATIO * root.chars:
            return selection
        if _holds_tag(node, "h1"):
            return _single(node, selection.score)
        node = node.parent
    return selection


def _holds_tag(element: Element, tag: str) -> bool:
    stack = [element]
    while stack:
        node = stack.pop()
        if node.tag == tag:
            return True
        stack.extend(child for child in node.children if type(child) is Element)
    return False


def _one_article(document: Document, excluded: list[bool], linked: list[bool]) -> Element | None:
    """The page's only ``<article>`` element with ``TUNING.short_article_readable`` of readable
    text (nested ones count as theirs); ``None`` when there is none or several (a listing of
    articles)."""
    found: Element | None = None
    seen = 0
    for element in document.elements:
        if element.tag != "article" or excluded[element.index]:
            continue
        seen += 1
        if seen > TUNING.articles_most:
            return None  # a page of that many articles is a listing (and each costs a walk)
        if found is not None and _contains(found, element):
            continue
        _, readable, _ = _text_in([element], excluded, linked)
        if readable < TUNING.short_article_readable:
            continue
        if found is not None:
            return None
        found = element
    return found


def _among_teasers(selection: Selection, article: Element, prose: list[int]) -> bool:
    """Whether the pick holds the ``<article>`` of a page declaring an article in JSON-LD as a
    small part of a portal page (*news portals whose short article sits among blocks of
    teasers*), not as one post of a series: the article holds under
    :data:`_FRAGMENT_SHARE` of the pick's prose, and the rest of the pick carries at least
    :data:`_SERIES_MIN_ITEMS` headings that are links (teaser titles)."""
    if selection.series:
        return False
    holders = [root for root in selection.roots if _contains(root, article)]
    if not holders or holders[0] is article:
        return False
    picked = sum(prose[root.index] for root in selection.roots)
    if prose[article.index] >= _FRAGMENT_SHARE * picked:
        return False
    titles = 0
    stack: list[Element] = list(selection.roots)
    while stack:
        element = stack.pop()
        if element is article:
            continue
        if element.tag in _HEADING_TAGS:
            if element.link_chars >= _TITLE_CHARS:
                titles += 1
                if titles >= _SERIES_MIN_ITEMS:
                    return True
            continue
        stack.extend(child for child in element.children if type(child) is Element)
    return False


def _prose_share(text: str) -> float:
    """The share of rendered markdown's visible text in paragraphs of prose: blocks of their
    own (not headings, list items, table rows, code or quotes) of at least
    :data:`_PROSE_BLOCK_CHARS` that end like a sentence."""
    total = prose = 0
    for block in text.split("\n\n"):
        visible = _LINK.sub(r"\1", _IMAGE.sub("", block)).strip()
        total += len(visible)
        if (
            len(visible) >= _PROSE_BLOCK_CHARS
            and (visible.endswith(_SENTENCE_ENDS))
            and not block.startswith(("#", "-", "|", "`", ">", " "))
            and not _ORDERED_ITEM.match(block)
        ):
            prose += len(visible)
    return prose / total if total else 0.0


_SENTENCE_ENDS = tuple(".!?:;\"”’)…。")
_ORDERED_ITEM = re.compile(r"\d{1,9}\. ")


def _page_dated(document: Document) -> bool:
    """Whether the page's text shows a full date anywhere."""
    for element in document.elements:
        if element.flags & DETACHED:
            continue
        for child in element.children:
            if (
                type(child) is str
                and len(child) >= 8
                and any(c.isdigit() for c in child)
                and _cues.dates(child, 1)
            ):
                return True
    return False


def _dates_around(selection: Selection) -> int:
    """How many full dates the article and its surroundings show (up to one more than
    :data:`_DATED_MOST`): the text of the pick's ancestor two levels up (where the
    headline, the byline and the date sit), or of a nearer one when that holds over
    :data:`_AROUND_RATIO` times the pick's text."""
    region = selection.roots[0].parent if len(selection.roots) > 1 else selection.roots[0]
    for _ in range(2):
        if region is None or region.parent is None:
            break
        if region.parent.chars > _AROUND_RATIO * max(selection.chars, 1):
            break
        region = region.parent
    if region is None:
        return 0
    most = _DATED_MOST + 1
    found = 0
    stack: list[Element] = [region]
    while stack:
        element = stack.pop()
        for child in element.children:
            if type(child) is str:
                if len(child) >= 8 and any(c.isdigit() for c in child):
                    found += _cues.dates(child, most - found)
                    if found >= most:
                        return found
            else:
                assert isinstance(child, Element)
                stack.append(child)
    return found


def _teasers(selection: Selection) -> tuple[int, int]:
    """The text, and the text outside links, of teaser lists after the pick: three or more
    look-alike siblings (same tag and class) that each hold a link and average under
    :data:`_CARD_MAX_CHARS`, such as "more stories" rails with a blurb under each title.
    Any ``<a>`` counts, even an empty one laid over a card's picture (its title and blurb
    are then text outside links).
    Only those after it: an article comes first and its rails follow it, while a category
    page's grid of products comes before the text about the category at its foot."""
    if selection.page is None or not selection.roots:
        return 0, 0
    document, excluded, anchors = selection.page
    end = _last_descendant(selection.roots[-1]).index
    parents: list[Element] = []
    node = selection.roots[-1].parent
    while node is not None:  # the pick's ancestors hold items after it too
        parents.append(node)
        node = node.parent
    chars = prose = 0
    for parent in itertools.chain(parents, document.elements[end + 1 :]):
        children = parent.children
        if len(children) < 3 or not anchors[parent.index] or excluded[parent.index]:
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
            if len(items) < 3:
                continue
            total = sum(item.chars for item in items)
            if total < _CARD_MAX_CHARS * len(items):
                chars += total
                prose += total - sum(item.link_chars for item in items)
    return chars, prose


_COPY_MIN_CHARS = 500


def _copied(selection: Selection) -> bool:
    """Whether the page holds a second copy of the article: an element outside the pick
    (and not one of its wrappers) with exactly its text and link text lengths,
    :data:`_COPY_MIN_CHARS` or more. Responsive templates render the article twice
    (one copy for small screens, or a hidden template), and the copy is not other text."""
    if selection.page is None or len(selection.roots) != 1:
        return False
    root = selection.roots[0]
    if root.chars < _COPY_MIN_CHARS:
        return False
    document, excluded, _ = selection.page
    first, last = root.index, _last_descendant(root).index
    chars, link_chars = root.chars, root.link_chars
    for element in document.elements:
        if (
            element.chars == chars
            and element.link_chars == link_chars
            and not first <= element.index <= last
            and not excluded[element.index]
            and not _contains(element, root)
        ):
            return True
    return False


def _last_descendant(element: Element) -> Element:
    """The last element of ``element``'s subtree in document order."""
    while True:
        for child in reversed(element.children):
            if type(child) is Element:
                element = child
                break
        else:
            return element


_LINE_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_FENCE = re.compile(r"(`{3,})[^`]*$")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\s]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*\)")


def _outside_code(text: str) -> str:
    """``text`` without its fenced code blocks: a fence opens with three or more backticks at
    the start of a line and closes at a line of just the same backticks (or the end). One pass
    over the lines, so text with many fences that never close costs no more than any other."""
    kept = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is None:
            opening = _FENCE.match(line)
            if opening is None:
                kept.append(line)
            else:
                fence = opening.group(1)
        elif line == fence:
            fence = None
    return "\n".join(kept)


def _reads_like_links(text: str) -> bool:
    """Whether rendered markdown reads like a listing: many headings or title-length links
    for the size of its visible text (URLs and images not counted), or much of that text in
    links."""
    text = _IMAGE.sub("", text)
    links = [found.strip() for found in _LINK.findall(text)]
    size = max(len(text) - sum(len(found) + 4 for found in links), 1)
    # A comment line in a code block ("# clone the repository") is not a heading.
    prose = _outside_code(text) if "```" in text else text
    if len(_LINE_HEADING.findall(prose)) * 1000 > _HEADINGS_PER_1000 * size:
        return True
    titles = sum(1 for found in links if len(found) >= _TITLE_CHARS)
    if titles * 1000 > _TITLE_LINKS_PER_1000 * size:
        return True
    return sum(len(found) for found in links) > _LINK_TEXT_SHARE * size


# --- the densest prose, and what the page declares -------------------------------------------

# Link text and text fragments count against a subtree at this weight; prose counts for it.
_JUNK_WEIGHT = 0.5


def _densest(
    document: Document, excluded: list[bool], linked: list[bool]
) -> tuple[list[int], Element]:
    """Per element, the prose in its subtree (own text of non-excluded blocks of a paragraph's
    length that are not mostly links, minus their link text), and the element whose subtree
    has the most prose net of its other text (link text, short fragments, excluded blocks),
    counted at :data:`_JUNK_WEIGHT`.

    Readability's scores spread each paragraph over five ancestors only, so an article whose
    paragraphs each sit in their own wrappers (page builders, CMS "paragraph" components) or
    whose sections are separate blocks scores below a compact teaser or a title block with a
    ``content`` class. The prose sum has no such horizon: it finds where the text is.

    One pass, from the last element to the first: every element comes after its ancestors,
    so its sums are complete when the pass reaches it."""
    elements = document.elements
    count = len(elements)
    prose = [0] * count
    junk = [0] * count
    block_links = [0] * count
    inline = INLINE
    headings = _HEADING_TAGS
    weight = _JUNK_WEIGHT
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
            if own >= PARAGRAPH_MIN_CHARS and own_links * 2 < own:
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


def _declared(document: Document, itemprops: list[Element], prose: list[int]) -> Element | None:
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


# A pick holding under this share of the prose of the other candidate is a fragment of it.
_FRAGMENT_SHARE = 0.25
# A pick holding under this share of the declared body's prose is a piece of it.
_PIECE_SHARE = 0.6
# A pick that names itself nothing and holds under this share of the densest prose around it
# is one part of an article spread over sibling blocks.
_SPREAD_SHARE = 0.65
# A sibling of joined blocks with this much prose of its own is one more section of them.
_JOINED_PROSE = 200


def _choose(
    selection: Selection, densest: Element, declared: Element | None, prose: list[int]
) -> Selection:
    """Readability's pick, unless it is a fragment of the densest prose (a title block, a
    teaser, one section of an article split into many) or furniture kept for its size (a
    mega-menu) that does not hold it, or the page declares where its article is and the
    declaration holds the text.

    A declared body with under :data:`_FRAGMENT_SHARE` of the pick's prose is not the
    article's: it is a teaser card's ``articleBody`` in a list of related posts. A pick whose
    names say nothing of content (no ``article``/``content``/``post`` word, not ``<article>``
    or ``<main>``) that holds under :data:`_SPREAD_SHARE` of the prose of the densest region
    around it is one block of an article spread over siblings (a table, an accordion, one
    page-builder section, a product description beside its specifications): the region is
    the article. When the pick is several siblings, every sibling with
    :data:`_JOINED_PROSE` characters of prose joins them: a section of a long page whose
    paragraphs sit too deep in wrappers to score."""
    picked = sum(prose[root.index] for root in selection.roots)
    # The pick lies elsewhere, or is a piece of the declared body. (A declared body inside the
    # pick never narrows it: sites leave the lead paragraph or the title out of it.)
    if (
        declared is not None
        and not any(_contains(root, declared) for root in selection.roots)
        and prose[declared.index] >= _FRAGMENT_SHARE * picked
    ):
        inside = any(_contains(declared, root) for root in selection.roots)
        if not inside or picked < _PIECE_SHARE * prose[declared.index]:
            return _single(declared, selection.score)
    if (
        not selection.roots
        or picked < _FRAGMENT_SHARE * prose[densest.index]
        or (len(selection.roots) == 1 and selection.roots[0].flags & FURNITURE)
    ) and not any(_contains(root, densest) for root in selection.roots):
        return _single(densest, selection.score)
    parent = selection.roots[0].parent if selection.roots else None
    if (
        len(selection.roots) > 1
        and not selection.series
        and parent is not None
        and parent.tag != "body"
        and parent.parent is not None
        and all(root.parent is parent for root in selection.roots)
    ):
        chosen = {root.index for root in selection.roots}
        roots = [
            child
            for child in parent.children
            if type(child) is Element
            and (child.index in chosen or prose[child.index] >= _JOINED_PROSE)
        ]
        if len(roots) > len(selection.roots):
            return Selection(roots, selection.top, selection.score)
    if (
        densest.tag != "body"
        and len(selection.roots) == 1
        and picked < _SPREAD_SHARE * prose[densest.index]
        and class_weight(selection.roots[0]) <= 0
        and selection.roots[0].tag not in ("article", "main")
        and _contains(densest, selection.roots[0])
    ):
        return _single(densest, selection.score)
    return selection


def _single(root: Element, score: float) -> Selection:
    return Selection([root], root, score)
