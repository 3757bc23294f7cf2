"""A compact element tree built from lexbor's HTML5 parse, with the counts extraction needs.

Why a tree of our own: lexbor (through selectolax) parses like a browser and is the fastest
parser we measured, but every attribute read on one of its nodes crosses into C and allocates.
Walking it once, iteratively, into small ``__slots__`` objects lets the content scorer and the
markdown renderer read tag names, attributes and text counts as plain Python data, and lets the
walk drop what is never content (scripts, styles, hidden elements, form controls) up front.

Every walk here is iterative: a page may nest elements 10,000 deep and must not hit the
interpreter's recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from selectolax.lexbor import LexborHTMLParser

from ._names import NamePattern
from ._sanitise import prepare
from ._signals import Signals, read_signals
from ._tokens import FORMATTING

# Elements whose content is never text a reader sees.
_DROPPED = frozenset(
    {
        "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
        "svg", "iframe", "object", "embed", "canvas", "select", "datalist", "option", "optgroup",
        "dialog", "input", "textarea", "audio", "video", "source", "track", "map",
        "area", "frame", "frameset", "param", "applet", "portal", "slot",
    }
)  # fmt: skip

# Elements that flow inside a line of text; every other element starts a block.
INLINE = frozenset(
    {
        "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn",
        "em", "font", "i", "img", "ins", "kbd", "label", "mark", "nobr", "q", "rp", "rt",
        "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt",
        "u", "var", "wbr", "br", "picture", "button", "output", "math", "meter", "progress",
    }
)  # fmt: skip

# Page furniture: kept in a whole-page rendering, skipped inside an extracted article.
_FURNITURE_TAGS = frozenset({"nav", "header", "footer", "aside", "form", "menu", "button"})
_FURNITURE_ROLES = frozenset(
    {
        "navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search",
        "dialog", "alertdialog",
    }
)  # fmt: skip

# Cookie and consent banners: dropped from every rendering, but only when small, so a page
# whose <body> carries a "cookie-consent" class does not vanish.
# A consent-management platform ("CMP") is named by the platforms' own prefixes and words
# (``qc-cmp2-container``, ``cmpbox``, ``cmp-banner``), never by a bare ``cmp-``: component
# libraries name every block that way (``cmp-container``, ``cmp-text``, ``cmp-teaser``), and a
# site built from them came back empty.
_CONSENT_NAMES = NamePattern(
    "cookie|consent|gdpr|onetrust|cookiebot|didomi|qc-cmp|cmpbox|cmpwrapper|cmp-banner"
    "|cmp-popup|cmp-modal|cmp-dialog|cmp-overlay|cmp-notice|cmp-layer|cmp-message|cmp-root",
    "cmp",
)
# Pages repeat the same class strings thousands of times: memoise the verdict per string.
_consent_names: dict[str, bool] = {}
_CACHE_LIMIT = 20_000
_CONSENT_MAX_CHARS = 3000
# Most elements have no attributes: they all share this one empty dict instead of holding one
# each (64 bytes an element, a tenth of a big table's tree). Never written to.
_NO_ATTRIBUTES: dict[str, str | None] = {}

FURNITURE = 1
ARIA_HIDDEN = 2
_CONSENT = 4
DETACHED = 8
# A table somewhere below this element: a table holding another table is laid out, not data,
# and the renderer asks that of every table without scanning its subtree.
HOLDS_TABLE = 16


class Element:
    """One HTML element: its tag, its few attributes, its children and its text counts.

    ``children`` mixes ``Element`` and ``str`` (text nodes, NUL-free, not yet normalised).
    ``chars`` counts the trimmed text characters of the whole subtree, ``link_chars`` those
    inside links, and ``own_chars``/``own_commas`` the text whose nearest block ancestor is this
    element: a block with enough own text is a paragraph for the content scorer.
    """

    __slots__ = (
        "attrs",
        "chars",
        "children",
        "flags",
        "index",
        "link_chars",
        "own_chars",
        "own_commas",
        "parent",
        "tag",
    )

    def __init__(
        self,
        tag: str,
        attrs: dict[str, str | None],
        parent: Element | None,
        index: int = 0,
        flags: int = 0,
    ) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Element | str] = []
        self.chars = 0
        self.link_chars = 0
        self.own_chars = 0
        self.own_commas = 0
        self.flags = flags
        self.index = index

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.tag} chars={self.chars}>"


def is_readable(element: Element) -> bool:
    """A block whose own text reads as prose rather than a menu: it has text of its own, and
    links are less than half of its text."""
    return (
        element.own_chars > 0
        and element.link_chars * 2 < element.chars
        and element.tag not in INLINE
    )


class Document:
    """The parsed page: its ``body`` element, every element in document order (``body`` first),
    the ``<base href>`` the page declares (``None`` when it declares none), and what it
    declares about itself (``signals``: Open Graph type, JSON-LD).

    ``longest_own_text`` is the most own text (``own_chars``) of any block element: a page
    whose longest is below what makes a paragraph has nothing to score, and the content scorer
    is not run on it at all (a page of 600,000 table cells or links saves a quarter second).
    """

    __slots__ = ("base_href", "body", "elements", "longest_own_text", "signals")

    def __init__(
        self,
        body: Element,
        elements: list[Element],
        base_href: str | None,
        longest_own_text: int = 0,
        signals: Signals | None = None,
    ) -> None:
        self.body = body
        self.elements = elements
        self.base_href = base_href
        self.longest_own_text = longest_own_text
        self.signals = signals if signals is not None else Signals()


# Streaming server rendering (React's ``renderToPipeableStream``, and the frameworks built on
# it) sends each part of the page that was not ready in time later, in a ``hidden`` element
# (``<div hidden id="S:0">``), followed by a call of its small runtime that moves it into its
# placeholder (``$RC("B:0","S:0")``, ``$RS("S:0","P:0")``). A browser shows it; without running
# the script, the article of such a page would be dropped as hidden. The ids that a call names
# are read from the markup; their hidden elements are kept where they are.
_REVEAL_CALL = re.compile(rb'\$R[A-Z]\(\s*"([^"\\]{1,64})"\s*,\s*"([^"\\]{1,64})"')


def revealed_ids(markup: bytes) -> frozenset[str]:
    """The element ids a streaming-render script in ``markup`` reveals (moves into place)."""
    if b"$R" not in markup:
        return frozenset()
    found: set[str] = set()
    for match in _REVEAL_CALL.finditer(markup):
        found.add(match.group(1).decode("utf-8", "replace"))
        found.add(match.group(2).decode("utf-8", "replace"))
    return frozenset(found)


def _shown(attrs: dict[str, str | None], revealed: frozenset[str]) -> bool:
    """Whether an element with the ``hidden`` attribute is shown after all: ``until-found``
    content (collapsed sections a reader opens, which find-in-page reveals), or a streamed part
    of the page that its own script moves into place."""
    if attrs.get("hidden") == "until-found":
        return True
    return bool(revealed) and attrs.get("id") in revealed


def _hidden_style(style: str) -> bool:
    compact = style.replace(" ", "").lower()
    return "display:none" in compact or "visibility:hidden" in compact


def _detach(element: Element) -> None:
    """Mark a dropped consent banner and everything in it, so no scorer looks inside."""
    stack = [element]
    while stack:
        node = stack.pop()
        node.flags |= DETACHED
        stack.extend(child for child in node.children if type(child) is Element)


# --- hooks for the render limits (``_sanitise``, ``extract.render_html``) ---------------------
# The pre-parse pass renames the formatting elements (``b`` -> ``rv-b``) so the tree builder
# cannot multiply them; the tree gets their real names back.
_RENAMED = {"rv-" + name.decode(): name.decode() for name in FORMATTING}
#: Elements between two calls of a parse's ``progress`` callback (a power of two).
PROGRESS_EVERY = 4096
_PROGRESS_MASK = PROGRESS_EVERY - 1


def parse(html: str | bytes, progress: Callable[[int], None] | None = None) -> Document:
    """Parse ``html`` like a browser and build the compact tree under ``<body>``.

    A ``str`` goes through the pre-parse pass first; ``bytes`` are taken to have been through it
    already (``_sanitise.prepare``; a ``str`` past its node budget is parsed up to the budget).
    ``progress``, when given, is called with the number of elements built so far every
    :data:`PROGRESS_EVERY` elements, and may raise to abandon the build.
    """
    data = prepare(html).markup if isinstance(html, str) else html
    tree = LexborHTMLParser(data)
    base_href: str | None = None
    base = tree.css_first("base[href]")
    if base is not None:
        base_href = base.attributes.get("href")
    signals = read_signals(tree, data)
    body = Element("body", {}, None)
    elements = [body]
    start = tree.body
    if start is None:
        start = tree.root
    if start is None:
        return Document(body, elements, base_href, 0, signals)
    dropped = _DROPPED
    inline = INLINE
    furniture_tags = _FURNITURE_TAGS
    furniture_roles = _FURNITURE_ROLES
    consent = _consent_names.get
    revealed = revealed_ids(data)
    if len(_consent_names) > _CACHE_LIMIT:
        _consent_names.clear()
    current = body
    children = body.children  # current.children, kept at hand for the text nodes
    node = start.child
    longest = 0  # the most own text of a block element, for Document.longest_own_text
    pending: list[object] = []  # lexbor nodes whose next sibling is still to visit
    renamed = _RENAMED
    new_element = Element
    add_element = elements.append
    count = 1  # len(elements)
    while True:
        if node is None:
            if not pending:
                break
            # Close ``current``: fold its counts into its parent.
            element = current
            parent = element.parent
            assert parent is not None
            current = parent
            children = parent.children
            node = pending.pop().next  # type: ignore[attr-defined]
            if element.flags & _CONSENT and element.chars < _CONSENT_MAX_CHARS:
                _detach(element)
                continue
            tag = element.tag
            if tag == "a":
                element.link_chars = element.chars
            children.append(element)
            if tag == "table" or element.flags & HOLDS_TABLE:
                parent.flags |= HOLDS_TABLE
            parent.chars += element.chars
            parent.link_chars += element.link_chars
            if tag in inline:
                parent.own_chars += element.own_chars
                parent.own_commas += element.own_commas
            elif element.own_chars > longest:
                longest = element.own_chars
            continue
        tag = node.tag  # type: ignore[assignment]
        if tag == "-text":
            text = node.text_content  # lexbor drops or replaces NUL: text never holds one
            if text:
                children.append(text)
                stripped = text.strip()
                if stripped:
                    chars = len(stripped)
                    current.chars += chars
                    current.own_chars += chars
                    if "," in stripped:
                        current.own_commas += stripped.count(",")
                    if not stripped.isascii():
                        current.own_commas += stripped.count("，") + stripped.count("、")
            node = node.next
            continue
        if tag in dropped or tag is None or tag[0] in "-!#":
            node = node.next
            continue
        tag = renamed.get(tag, tag)
        attrs = node.attributes
        flags = FURNITURE if tag in furniture_tags else 0
        if attrs:
            if "hidden" in attrs and not _shown(attrs, revealed):
                node = node.next
                continue
            style = attrs.get("style")
            if style and ("none" in style or "hidden" in style) and _hidden_style(style):
                node = node.next
                continue
            if attrs.get("role") in furniture_roles:
                flags |= FURNITURE
            if attrs.get("aria-hidden") == "true":
                flags |= ARIA_HIDDEN
            classes = attrs.get("class")
            if classes:
                verdict = consent(classes)
                if verdict is None:
                    verdict = _consent_names[classes] = _CONSENT_NAMES.search(classes)
                if verdict:
                    flags |= _CONSENT
            ident = attrs.get("id")
            if ident and _CONSENT_NAMES.search(ident):
                flags |= _CONSENT
            element = new_element(tag, attrs, current, count, flags)
        else:
            element = new_element(tag, _NO_ATTRIBUTES, current, count, flags)
        add_element(element)
        if not count & _PROGRESS_MASK and progress is not None:
            progress(count)
        count += 1
        child = node.child
        if child is None:  # an empty element: nothing to count
            if flags & _CONSENT:
                element.flags |= DETACHED
            else:
                children.append(element)
                if tag == "table":
                    current.flags |= HOLDS_TABLE
            node = node.next
            continue
        pending.append(node)
        current = element
        children = element.children
        node = child
    return Document(body, elements, base_href, max(longest, body.own_chars), signals)
