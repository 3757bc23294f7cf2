"""What to leave out of the main content of a page that is not an article, by its kind.

``_page_type.page_type`` says what kind of page it is; this module says what, on that kind, is
furniture that the general rules (``_names``, ``_cues``) keep because on an article it would
be content, or keep out because on an article it would be furniture. Every rule is general:
it reads tags, class/id/``data-role`` words and a block's first words, never a site's name.

- *Every kind but articles*: permalink marks, a link to its own heading (``#id``) whose text
  is one symbol (``¶``, ``#``, ``§``).
- *Threads* (forum engines, Q&A sites): signatures (a block whose names say ``signature``),
  a member's statistics beside each post (a ``<dl>`` of short label/value pairs: joined,
  posts, reaction score), and the boxes engines put around the posts: who is online, posting
  permissions, "you must log in to reply", "create an account or sign in to comment", "your
  answer", sorting controls.
- *Products* (shop platforms): the shipping and returns panel, the reviews widget's prompts,
  the basket controls.
- *Documentation* (generators): "last updated" and "edit this page" lines, "on this page",
  previous/next links, copy buttons.
- *Listings* (blog and news indexes, search results): sorting, filtering and paging lines.
- *Documentation and listings*: a ``<header>`` that holds a heading is kept (its navigation
  still goes): a documentation page's title, a listing item's title, sit in one.

Reading a block's words is bounded like the general cues: a block is read only when it is
short (``Tuning.chrome_box_chars``), only its first ``Tuning.chrome_nodes`` nodes, and at most
``Tuning.chrome_reads`` blocks per page.
"""

from __future__ import annotations

import re

from ._cues import normalise
from ._dom import FURNITURE, INLINE, Element
from ._names import FURNITURE as NAMED_FURNITURE
from ._names import furniture, words
from ._page_type import ARTICLE, DOCS, LISTING, OTHER, PRODUCT, THREAD
from ._tree import first_text, small_text
from ._tuning import TUNING

# Verdicts.
NONE = 0  # nothing to say: the general rules decide
LEAVE_OUT = 1  # furniture on this kind of page
SECTION = 2  # a heading opening a furniture section: it and what follows, to the next heading
KEEP = 3  # content on this kind of page, whatever the general rules say of it as a whole

_PERMALINK_TEXTS = frozenset({"¶", "#", "§", "🔗", "⚓", "\u200b", "link", "permalink"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_TITLE_HEADINGS = frozenset({"h1", "h2", "h3"})
_TABLE_PARTS = frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption"})

# Blocks (up to Tuning.chrome_box_chars) that start with one of these are a box of chrome,
# each on its type of page only.
_THREAD_BOXES = (
    # the engine's panels, membership prompts, answer forms
    "who is online", "users browsing", "there are currently", "posting permissions",
    "thread information", "you must log in", "you must be logged in", "you must be a member",
    "you need to be a member", "you need to log in", "create an account or sign in",
    "create an account or log in", "sign in to comment", "log in to comment",
    "log in to reply", "sign up or log in", "register or log in", "please log in",
    "please sign in", "post as a guest", "your answer", "not the answer you're looking for",
    "hot network questions", "similar threads", "similar topics", "similar discussions",
    "related questions", "linked questions", "thread tools", "display modes", "quick reply",
    "share this thread", "share this topic", "jump to", "return to board index",
    "posting rules", "you may not post", "all times are", "this discussion is now closed",
    "this thread is closed", "this thread has been closed", "this thread has been locked",
    "this topic is now closed", "this topic was automatically closed",
)  # fmt: skip
_PRODUCT_BOXES = (
    # shipping boilerplate and the reviews widget's prompts
    "free shipping", "free delivery", "free returns", "be the first to review",
    "be the first to write a review", "write a review", "there are no reviews yet",
    "no reviews yet", "customers also bought", "frequently bought together",
    "recently viewed",
)  # fmt: skip
_DOCS_BOXES = (
    # page tools
    "was this page helpful", "was this helpful", "edit this page", "edit on github",
    "edit on gitlab", "improve this page", "view page source",
)  # fmt: skip
_BOXES = {
    THREAD: _THREAD_BOXES,
    PRODUCT: _PRODUCT_BOXES,
    DOCS: _DOCS_BOXES,
    LISTING: (),
}
# Short lines (up to Tuning.chrome_line_chars) that start with one of these are controls.
_LINES = (
    "last updated", "last update", "last modified", "last edited", "sorted by", "sort by",
    "filter by", "filter results", "refine by", "add to cart", "add to basket", "add to bag",
    "add to wish list", "add to wishlist", "add to compare", "buy it now", "tax included",
    "older posts", "newer posts", "next page", "previous page", "load more", "show more",
    "reply to this topic", "reply to thread", "start new topic", "post reply",
    "show activity on this post", "add a comment", "improve this question",
    "improve this answer", "skip to main content", "back to top", "powered by",
    "previous thread", "next thread", "scroll to see replies",
)  # fmt: skip
# Lines that are chrome only when they are the whole line.
_EXACT = frozenset(
    {
        "copy", "copied", "copy code", "previous", "next", "prev", "on this page",
        "in this article", "table of contents", "contents", "filters", "filter", "sort",
        "quantity", "qty", "share", "reply", "quote", "report", "edit",
    }
)  # fmt: skip
_PAGE_OF = re.compile(r"(?:page \d+ of \d+|showing \d+|reply \d+$|post #?\d+$)")
# Headings that open a section of chrome, each on its type of page only.
_SECTIONS = {
    PRODUCT: frozenset(
        {
            "shipping", "delivery", "returns", "shipping & returns", "shipping and returns",
            "delivery & returns", "delivery and returns", "shipping & delivery",
            "shipping and delivery", "shipping information", "delivery information",
            "customer reviews", "reviews", "ratings & reviews", "ratings and reviews",
        }
    ),
}  # fmt: skip
# Headings that open a section of chrome on a thread, when the heading starts with them.
_THREAD_SECTIONS = (
    "who is online", "posting permissions", "posting rules", "similar threads",
    "similar topics", "similar discussions", "related questions", "related threads",
    "related discussions", "related topics", "check out other", "more threads",
    "hot network questions", "your answer", "linked questions",
)  # fmt: skip
# The first words of every phrase above: a block starting with none of them is passed over.
_FIRST_WORDS = frozenset(
    phrase.split(" ", 1)[0]
    for phrase in (
        *(phrase for boxes in _BOXES.values() for phrase in boxes),
        *_LINES,
        *(phrase for sections in _SECTIONS.values() for phrase in sections),
        *_THREAD_SECTIONS,
        *_EXACT,
    )
)
_EDGES = " :.,!?»«\"'(#"
_STATS_MAX_ITEMS = 64


class TypeChrome:
    """The per-type test for an element inside the main content: :data:`NONE`,
    :data:`LEAVE_OUT`, :data:`SECTION` or :data:`KEEP`. Counts its reads
    (``Tuning.chrome_reads``)."""

    __slots__ = ("kind", "reads")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.reads = TUNING.chrome_reads

    def __call__(self, element: Element) -> int:
        kind = self.kind
        if kind == ARTICLE:
            return NONE
        tag = element.tag
        if tag == "a":
            if _permalink(element):
                return LEAVE_OUT
            if kind == OTHER or not 0 < element.chars <= TUNING.chrome_line_chars or not self.reads:
                return NONE
            return self._phrase(element)  # "Edit this page", "Write a review", "Next"
        if tag in INLINE:
            return NONE
        if tag in _TABLE_PARTS:
            # A table's cells say what they say, but older forum engines lay the page out in
            # tables: a cell that starts like the engine's panel ("Posting rules") is one.
            if kind != THREAD or tag not in ("td", "th") or not self.reads:
                return NONE
            if not 0 < element.chars <= TUNING.chrome_box_chars:
                return NONE
            return LEAVE_OUT if self._box(element) else NONE
        if (
            tag == "header"
            and kind in (DOCS, LISTING, OTHER)
            and element.flags & FURNITURE
            and _holds_heading(element)
        ):
            return KEEP
        if kind == THREAD and element.attrs and _thread_furniture(element):
            return LEAVE_OUT
        if kind == PRODUCT and self.reads and _holds_price(element):
            self.reads -= 1
            return KEEP
        if kind == LISTING and element.attrs and _results(element):
            return KEEP
        if kind == OTHER or not 0 < element.chars <= TUNING.chrome_box_chars or not self.reads:
            return NONE
        return self._phrase(element)

    def _box(self, element: Element) -> bool:
        first = first_text(element, TUNING.chrome_nodes)
        if not first:
            return False
        head = first.split(None, 1)
        if not head or head[0].strip(_EDGES).lower() not in _FIRST_WORDS:
            return False
        self.reads -= 1
        # "You <b>may not</b> post": the whole small block, else its first text
        lead = normalise(small_text(element, TUNING.chrome_nodes) or first)
        return lead.startswith(_BOXES.get(self.kind, ()))

    def _phrase(self, element: Element) -> int:
        first = first_text(element, TUNING.chrome_nodes)
        if not first:
            return NONE
        head = first.split(None, 1)
        starts = bool(head) and head[0].strip(_EDGES).lower() in _FIRST_WORDS
        if not starts and _PAGE_OF.match(normalise(first)) is None:
            return NONE
        self.reads -= 1
        # "You <b>may not</b> post": the whole small block, else its first text
        lead = normalise(small_text(element, TUNING.chrome_nodes) or first)
        if element.tag in _HEADINGS:
            text = normalise(small_text(element, TUNING.chrome_nodes))
            if text in _SECTIONS.get(self.kind, ()) or (
                self.kind == THREAD and text.startswith(_THREAD_SECTIONS)
            ):
                return SECTION
        if lead.startswith(_BOXES.get(self.kind, ())):
            return LEAVE_OUT
        if element.chars > TUNING.chrome_line_chars:
            return NONE
        text = normalise(small_text(element, TUNING.chrome_nodes))
        if text in _EXACT or text.startswith(_LINES) or _PAGE_OF.match(text) is not None:
            return LEAVE_OUT
        return NONE


def _permalink(element: Element) -> bool:
    """A link to an anchor on the page whose text is one symbol: a heading's permalink."""
    if element.chars > 9:
        return False
    href = element.attrs.get("href") or ""
    if not href.startswith("#"):
        return False
    text = "".join(child for child in element.children if type(child) is str).strip()
    return text.lower() in _PERMALINK_TEXTS or (not text and not element.chars)


def _holds_heading(element: Element) -> bool:
    """Whether an ``<h1>``-``<h3>`` is among the element's first ``Tuning.chrome_nodes``
    elements."""
    stack = [element]
    seen = 0
    while stack and seen < TUNING.chrome_nodes:
        node = stack.pop()
        seen += 1
        if node.tag in _TITLE_HEADINGS:
            return True
        stack.extend(child for child in reversed(node.children) if type(child) is Element)
    return False


def _thread_furniture(element: Element) -> bool:
    """A post's signature (named so by class, id or ``data-role``), or a member's statistics
    beside a post: a ``<dl>`` of two or more short label/value pairs."""
    attrs = element.attrs
    for key in ("class", "id", "data-role"):
        value = attrs.get(key)
        if value and any(word.startswith("signature") or word == "sig" for word in words(value)):
            return True
    if element.tag != "dl" or element.chars > TUNING.stat_max_chars * _STATS_MAX_ITEMS:
        return False
    labels = 0
    for child in element.children[: _STATS_MAX_ITEMS * 2]:
        if type(child) is not Element:
            continue
        if child.tag not in ("dt", "dd", "div") or child.chars > TUNING.stat_max_chars * 2:
            return False
        if child.tag == "dd" and child.chars > TUNING.stat_max_chars:
            return False
        labels += child.tag == "dt"
    return labels >= 1 and element.chars <= TUNING.stat_max_chars * 4 * max(labels, 1)


def _price(element: Element) -> bool:
    """A block that names itself the product's price (a class or id word ``price``, or
    microdata ``itemprop="offers"``/``"price"``): shop platforms put the price beside links
    (a reviews summary, a size guide) that make the block look like a menu."""
    attrs = element.attrs
    if attrs.get("itemprop") in ("offers", "price"):
        return True
    for key in ("class", "id"):
        value = attrs.get(key)
        if value and "price" in value.lower() and "price" in words(value):
            return True
    return False


def _holds_price(element: Element) -> bool:
    """Whether one price block (:func:`_price`), and no more, is among the element's first
    ``Tuning.chrome_nodes`` elements, and the element is not named furniture: the product's
    name-and-price block, which its links (reviews, wish list, compare) would otherwise make
    look like a menu. (A carousel of other products holds a price per card.)"""
    attrs = element.attrs
    names = " ".join(value for value in (attrs.get("class"), attrs.get("id")) if value)
    if names and furniture(names) == NAMED_FURNITURE:
        return False
    stack = [element]
    seen = found = 0
    while stack and seen < TUNING.chrome_nodes:
        node = stack.pop()
        seen += 1
        if node.attrs and _price(node):
            found += 1
            if found > 1:
                return False
            continue  # (a price block's own parts are one price)
        stack.extend(child for child in reversed(node.children) if type(child) is Element)
    return found == 1 and not stack


_RESULT_WORDS = frozenset({"result", "results", "hits", "serp"})
_CONTROL_WORDS = frozenset(
    {"filter", "filters", "facet", "facets", "sort", "refine", "count", "toolbar", "pager"}
)


def _results(element: Element) -> bool:
    """A block that names itself the results of a search (``search-results``), which the
    word ``search`` would otherwise make a search box."""
    attrs = element.attrs
    for key in ("class", "id"):
        value = attrs.get(key)
        if value and ("res" in value.lower() or "hits" in value.lower()):
            found = set(words(value))
            if found & _RESULT_WORDS and not found & _CONTROL_WORDS:
                return True
    return False

