"""The page's main region: what comes back when no single article can be picked.

Why: a listing, a shop category, a blog index, a landing page or a service page has no one
article, and coming back whole (``raw-html``) gives a model the site's menus, header, footer,
cookie texts and filter panels around the list or the sections it asked for. What such a page
is about sits in its main region: ``<main>`` (or ``role="main"``) when the page marks one that
holds a good part of its text, otherwise ``<body>``; in either, the page furniture is left out
(navigation, header, footer, asides, forms and blocks named so by their class words), and so are
the controls of a listing (filters, facets, sorting). What is kept of the list is every item:
a card's title link, its short text and its link.

The region is rendered with the same markdown renderer as an article. A page of more than
:data:`REGION_MAX_ELEMENTS` elements is not treated this way: its whole-page rendering can stop
early at what the fetch keeps, which a rendering with furniture left out cannot.
"""

from __future__ import annotations

from ._dom import ARIA_HIDDEN, DETACHED, FURNITURE, INLINE, Document, Element
from ._names import FURNITURE as NAMED_FURNITURE
from ._names import SHORT, furniture, words
from ._tuning import TUNING
from ._type_chrome import KEEP, NONE, TypeChrome

__all__ = ["REGION_MAX_ELEMENTS", "RegionSkipper", "leaves_out", "main_region"]

# A page this big (elements) comes back whole, rendered with the early stop: a listing's
# region is rendered in full, and real pages stay far below (the tuning split's largest
# holds 10,022 elements).
REGION_MAX_ELEMENTS = 60_000
# A block named furniture is left out when it is short (a share bar, a newsletter box) or
# mostly links (a menu, a related-posts rail). A long block of prose is kept whatever it is
# called: a listing's cards carry their buttons' names (``cart-button``), and a thread's
# replies are called comments. (The thresholds are ``Tuning`` fields: ``region_*``.)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# The controls of a listing: filter and facet panels, sorting, result counts' toolbars.
_CONTROL_WORDS = frozenset(
    {"filter", "filters", "facet", "facets", "sort", "sorting", "sortby", "refine", "refinements"}
)
_controls: dict[str, bool] = {}
_CACHE_LIMIT = 20_000


def main_region(document: Document) -> Element:
    """The page's main region: its largest ``<main>`` or ``role="main"`` element outside
    furniture, when that holds at least ``TUNING.main_share`` of the page's text; otherwise
    ``<body>``."""
    body = document.body
    best: Element | None = None
    for element in document.elements:
        if element.tag != "main" and element.attrs.get("role") != "main":
            continue
        if element.flags & (DETACHED | ARIA_HIDDEN) or _in_furniture(element):
            continue
        if best is None or element.chars > best.chars:
            best = element
    if best is not None and best.chars >= TUNING.main_share * body.chars:
        return best
    return body


def leaves_out(root: Element, skip: RegionSkipper) -> bool:
    """Whether ``skip`` leaves anything with text out of ``root``: when it does not, the region
    is the whole page, which comes back as such (and its rendering may stop early)."""
    if root.parent is not None:
        return True
    stack = [root]
    while stack:
        element = stack.pop()
        for child in element.children:
            if type(child) is Element and child.chars:
                if skip(child):
                    return True
                stack.append(child)
    return False


def _in_furniture(element: Element) -> bool:
    node = element.parent
    while node is not None:
        if node.flags & FURNITURE:
            return True
        node = node.parent
    return False


class RegionSkipper:
    """What to leave out of the main region: page furniture by tag, role or class words, and a
    listing's controls. An element that holds over half of the region is a wrapper and stays
    (an ASP.NET ``<form>`` around the page, a ``<header>`` around everything), and so does a
    ``<header>`` that holds the page's ``<h1>`` (a category page's title and introduction)."""

    __slots__ = ("chrome", "thread", "wrapper")

    def __init__(
        self, root: Element, thread: bool = False, chrome: TypeChrome | None = None
    ) -> None:
        self.wrapper = root.chars // 2
        self.thread = thread  # a forum thread or a Q&A page: its comments are the content
        self.chrome = chrome  # what the page's type leaves out or keeps (_type_chrome)

    def __call__(self, element: Element) -> bool:
        if element.chars > self.wrapper:
            return False
        if self.chrome is not None:
            verdict = self.chrome(element)
            if verdict != NONE:
                return verdict != KEEP  # (a section's heading goes, its text is judged alone)
        tag = element.tag
        # A form around a paragraph of prose is content: a forum engine's form around each
        # post (a login or search form holds labels and buttons, no paragraph).
        if element.flags & (FURNITURE | ARIA_HIDDEN) and (
            tag != "form" or element.flags & ARIA_HIDDEN or not _holds_paragraph(element)
        ):
            return not (tag == "header" and _holds_title(element))
        if tag in INLINE or tag in _HEADINGS or not element.attrs:
            return False
        if tag == "figcaption":
            return True
        attrs = element.attrs
        classes = attrs.get("class")
        ident = attrs.get("id")
        names = f"{classes} {ident}" if classes and ident else classes or ident
        if not names:
            return False
        named = furniture(names, self.thread)
        if named == NAMED_FURNITURE and _short_or_links(element):
            return True
        if named == SHORT and element.chars < TUNING.region_short_chars:
            return True
        return _names_controls(names)


def _short_or_links(element: Element) -> bool:
    """Short (a share bar, a login form) or mostly links (a menu, a rail of related posts)."""
    return (
        element.chars < TUNING.region_named_chars
        or element.link_chars >= TUNING.region_named_link_density * element.chars
    )


def _holds_paragraph(element: Element) -> bool:
    """Whether a block among the element's first ``TUNING.region_title_nodes`` elements has
    ``TUNING.region_paragraph_chars`` of its own text, not mostly links."""
    stack = [element]
    seen = 0
    least = TUNING.region_paragraph_chars
    nodes = TUNING.region_title_nodes
    while stack and seen < nodes:
        node = stack.pop()
        seen += 1
        if (
            node.own_chars >= least
            and node.tag not in INLINE
            and node.link_chars * 2 < node.chars
        ):
            return True
        stack.extend(child for child in reversed(node.children) if type(child) is Element)
    return False


def _holds_title(element: Element) -> bool:
    """Whether an ``<h1>`` is among the element's first ``TUNING.region_title_nodes`` elements
    (a page header holds its ``<h1>`` near its start)."""
    stack = [element]
    seen = 0
    nodes = TUNING.region_title_nodes
    while stack and seen < nodes:
        node = stack.pop()
        seen += 1
        if node.tag == "h1":
            return True
        stack.extend(child for child in reversed(node.children) if type(child) is Element)
    return False


def _names_controls(names: str) -> bool:
    verdict = _controls.get(names)
    if verdict is None:
        verdict = any(word in _CONTROL_WORDS for word in words(names))
        if len(_controls) > _CACHE_LIMIT:
            _controls.clear()
        _controls[names] = verdict
    return verdict
