"""Corrections inside the pick: the furniture an article's subtrees still hold, left out as
they are rendered.

Why a stage of its own: the pick is a container, and a container holds more than its article
(share bars, "related articles" rails, photo credits, a login box). What is left out: furniture
tags and roles, hidden elements, figure captions, blocks whose class/id words name furniture
(``_names``), blocks of links, and short blocks whose words are furniture (``_cues``: "Related
articles", "Read more: ...", "Foto: ...", "Share"). The same test, :func:`boilerplate`, tells
the page-kind decision which blocks of the pick are a related list (``_surroundings``).
"""

from __future__ import annotations

from . import _cues
from ._cards import holds_cards
from ._dom import ARIA_HIDDEN, FURNITURE, INLINE, Element
from ._names import FURNITURE as NAMED_FURNITURE
from ._names import SHORT, WEAK, furniture
from ._pick_readability import class_weight
from ._selection import Selection
from ._tree import HEADING_RANK, HEADING_TAGS, first_text, link_density, small_text
from ._tuning import TUNING
from ._type_chrome import KEEP as TYPE_KEEP
from ._type_chrome import LEAVE_OUT, SECTION, TypeChrome

# Why an element inside the article is left out.
KEEP = 0
NAMED = 1  # page furniture by its tag, role, class or id: furniture wherever it is
DENSE = 2  # a block of links: furniture here, but the stuff listings are made of

CONTAINERS = frozenset({"div", "section", "ul", "ol", "table", "dl", "figure", "span"})
# Captions and credits of figures: WCXB's texts leave them out (263 of 301 on the tuning split)
# and so do the trafilatura snippets (51 captions are "without" snippets, 9 "with").
_CAPTION_TAGS = frozenset({"figcaption"})
# A table's cells say what they say: "Facebook" in a table of ad prices is data.
_TABLE_PARTS = frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th", "caption"})


def named(element: Element, thread: bool = False) -> int:
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


def boilerplate(element: Element, thread: bool = False) -> int:
    """Whether an element inside the article is boilerplate to leave out, and why: named
    furniture (short when ``TUNING.short_chars`` says so), or a block of links (mostly links
    when its names are weak, ``TUNING.weak_link_density``; the ``dense_*`` fields for a
    container)."""
    if element.flags & (FURNITURE | ARIA_HIDDEN):
        return NAMED
    tag = element.tag
    if not element.attrs and tag not in CONTAINERS and tag not in _CAPTION_TAGS:
        return KEEP  # a plain paragraph, heading or item: nothing names it furniture
    if tag in INLINE:
        return KEEP
    if tag in _CAPTION_TAGS:
        return NAMED
    tuning = TUNING
    names = named(element, thread)
    if tag not in HEADING_TAGS and (
        names == NAMED_FURNITURE or (names == SHORT and element.chars < tuning.short_chars)
    ):
        return NAMED
    density = link_density(element)
    if names == WEAK and density > tuning.weak_link_density:
        return DENSE
    if tag in CONTAINERS and element.own_commas < tuning.dense_commas:
        prose = element.chars - element.link_chars
        if density > tuning.dense_link_density or (
            density > tuning.dense_weak_density
            and class_weight(element) < tuning.dense_class_weight
            and prose < tuning.dense_prose_chars
        ):
            return DENSE
    return KEEP


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

    Reading cues is bounded by construction: at most ``TUNING.cue_checks`` blocks are read per
    article, each only when its text is reached within ``TUNING.cue_nodes`` nodes, and at most
    ``TUNING.cuts`` sections are cut, each after one pass over its siblings. A page of 200,000
    short paragraphs costs no more than an article of a few thousand."""

    __slots__ = ("checks", "chrome", "cut", "cuts", "dense_chars", "limit", "thread", "wrapper")

    def __init__(
        self, selection: Selection, thread: bool = False, chrome: TypeChrome | None = None
    ) -> None:
        self.wrapper = selection.chars // 2
        self.limit = selection.chars // 2
        self.dense_chars = 0
        self.cut: dict[int, int] = {}  # parent index: heading rank that ends the cut
        self.thread = thread  # a forum thread or a Q&A page: its comments are the content
        self.checks = TUNING.cue_checks  # blocks left to read for cues
        self.cuts = TUNING.cuts  # sections left to cut
        self.chrome = chrome  # what the page's type leaves out or keeps (_type_chrome)

    def __call__(self, element: Element) -> bool:
        if element.chars > self.wrapper:
            # A wrapper holds the article's prose; a related-posts list as big is cards.
            return named(element, self.thread) == NAMED_FURNITURE and holds_cards(element)
        parent = element.parent
        if parent is not None and self.cut and parent.index in self.cut:
            rank = HEADING_RANK.get(element.tag)
            if rank is not None and rank <= self.cut[parent.index]:
                del self.cut[parent.index]
            else:
                return True
        if self.chrome is not None:
            type_verdict = self.chrome(element)
            if type_verdict == SECTION and self.cuts:
                self.cuts -= 1
                self._cut_after(element)
            if type_verdict in (LEAVE_OUT, SECTION):
                return True
            if type_verdict == TYPE_KEEP:
                return False
        verdict = boilerplate(element, self.thread)
        if verdict == DENSE:
            self.dense_chars += element.chars
        if verdict != KEEP:
            return True
        if (
            element.tag in INLINE
            or element.tag in _TABLE_PARTS
            or not 0 < element.chars <= TUNING.cue_max_chars
            or not self.checks
        ):
            return False
        self.checks -= 1
        return self._cue(element)

    def _cue(self, element: Element) -> bool:
        first = first_text(element, TUNING.cue_nodes)
        if not first or not _cues.may_be_cue(first):
            return False
        text = small_text(element, TUNING.cue_nodes)
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
            self.cut[parent.index] = HEADING_RANK.get(element.tag, 7)

