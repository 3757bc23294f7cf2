"""The page-level signals every later stage reads, gathered in one pass over the elements.

Why one pass: the picks, the page-kind decision and the corrections all ask which blocks are
furniture, which text is inside links and how much text the page has outside furniture.
Answering once, into a frozen :class:`PageSignals`, keeps each question's answer the same for
every stage and the cost linear, and no later stage writes to it.

A block is *excluded* when it lies inside furniture (a furniture tag or role, a block whose
class or id words Readability finds unlikely to be content), an ``aria-hidden`` subtree or a
detached one. Furniture that wraps most of the page is a wrapper, not furniture.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._dom import ARIA_HIDDEN, DETACHED, FURNITURE, INLINE, Document, Element, is_readable
from ._names import NamePattern
from ._tree import last_descendant
from ._tuning import TUNING

# Readability's class and id words of blocks unlikely to be content (comments, sidebars,
# share bars...), unless they also say :data:`_MAYBE`.
_UNLIKELY = NamePattern(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|"
    r"gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
)
# On a forum thread or a Q&A page, comments and replies are the content.
_UNLIKELY_THREAD = NamePattern(
    r"-ad-|ai2html|banner|breadcrumbs|combx|cover-wrap|disqus|extra|footer|"
    r"gdpr|header|legends|menu|related|rss|shoutbox|sidebar|skyscraper|social|"
    r"sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
)
_MAYBE = NamePattern(r"and|article|body|column|content|main|mathjax|shadow")
_MENU_TAGS = frozenset({"nav", "menu"})

_CACHE_LIMIT = 20_000
_unlikely_names: dict[str, bool] = {}
_unlikely_thread_names: dict[str, bool] = {}


@dataclass(frozen=True, slots=True)
class PageSignals:
    """What the first pass over the elements found (see :func:`read_page`). The lists are
    indexed by ``Element.index``."""

    excluded: list[bool]  # inside furniture, an aria-hidden, a detached or an unlikely block
    linked: list[bool]  # inside a link
    anchors: list[bool]  # is or holds an <a>, even one with no text
    itemprops: list[Element]  # elements marked itemprop="articleBody"
    menus: list[Element]  # navigation too big to be told from a page wrapper
    content_chars: int  # the page's text outside furniture
    readable_chars: int  # of that, in blocks that are not mostly links
    published: bool  # a publication date marked up in microdata (itemprop="datePublished")


def unlikely(element: Element, thread: bool = False) -> bool:
    """Class or id names that mark page furniture (comments, sidebars, share bars...). On a
    forum thread or Q&A page, comments and replies are the content."""
    if element.tag in ("body", "a", "article", "main") or element.attrs.get("role") == "main":
        return False
    if thread:
        return _names_say(element, _UNLIKELY_THREAD, _unlikely_thread_names)
    return _names_say(element, _UNLIKELY, _unlikely_names)


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


def read_page(document: Document) -> PageSignals:
    """One pass over the elements: which lie inside furniture, an aria-hidden or an unlikely
    subtree (``excluded``), which inside a link (``linked``), the page's text outside
    furniture and the readable part of it, and the ``itemprop="articleBody"`` elements.

    Furniture that wraps most of the page (over ``TUNING.wrapper_share`` of its text, or of
    the text that is not in links) is a wrapper, not furniture: an ASP.NET ``<form>``, a
    ``<header>`` around everything, an ``<aside>`` or a ``socialicons-sticky`` block that a
    theme put around the article.

    Text inside a link is a link's text even in a paragraph of its own: a teaser card is
    often one ``<a>`` around a title, an image and a paragraph of blurb, and the blurb is
    not prose the page has to offer besides its article. (A publication date marked up in
    microdata, ``itemprop="datePublished"``, is noted here too.)"""
    elements = document.elements
    count = len(elements)
    excluded = [False] * count
    linked = [False] * count
    anchors = [False] * count
    itemprops: list[Element] = []
    menus: list[Element] = []
    published = False
    body = document.body
    total = body.chars
    total_prose = total - body.link_chars
    wrapper = TUNING.wrapper_share
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
        elif element.flags & FURNITURE or unlikely(element, thread):
            if (
                element.chars <= total * wrapper
                and element.chars - element.link_chars <= total_prose * wrapper
            ):
                excluded[index] = True
            elif element.tag in _MENU_TAGS or element.attrs.get("role") == "navigation":
                menus.append(element)  # a wrapper, or a mega-menu as big as the page
        if excluded[index]:
            furniture_chars += element.chars
            continue
        attrs = element.attrs
        if attrs and "itemprop" in attrs:
            itemprop = attrs.get("itemprop")
            if itemprop == "articleBody":
                itemprops.append(element)
            elif itemprop == "datePublished":
                published = True
        if not linked[index] and is_readable(element):
            readable_chars += element.own_chars
    return PageSignals(
        excluded=excluded,
        linked=linked,
        anchors=anchors,
        itemprops=itemprops,
        menus=menus,
        content_chars=total - furniture_chars,
        readable_chars=readable_chars,
        published=published,
    )


def text_in(roots: list[Element], excluded: list[bool], linked: list[bool]) -> tuple[int, int, int]:
    """The text of ``roots`` outside excluded blocks, the readable part of it (text in readable
    blocks outside links), as :func:`read_page` counts the page's, and the readable text of
    all their blocks, excluded or linked or not (the most a rendering of ``roots`` can
    count)."""
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


def menus_beside(roots: list[Element], menus: list[Element]) -> list[Element]:
    """The outermost of ``menus`` (in document order) that neither hold the pick nor lie
    inside it. Containment is read from document positions, so nested menus cost a walk
    down each outermost one's last children, not a walk up for every pair."""
    found = []
    spans = [(root.index, last_descendant(root).index) for root in roots]
    end = -1
    for menu in menus:
        if menu.index <= end:
            continue  # inside the outermost menu before it
        end = last_descendant(menu).index
        if any(menu.index <= first <= end or first <= menu.index <= last for first, last in spans):
            continue
        found.append(menu)
    return found
