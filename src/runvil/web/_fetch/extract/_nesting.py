"""Cap how deep a page can nest before lexbor parses it, the way browsers do.

Why: an HTML parser checks element scope by walking its stack of open elements, so its cost is
the number of tags times the nesting depth. lexbor is no exception: a page of 350,000 short
paragraphs inside 11,000 unclosed ``<div>``s took 6 s to parse, where the same paragraphs
without the ``<div>``s take about 0.1 s. Browsers cap the tree instead (Chromium stops nesting
at 512 levels), and so do we: a start tag that would open an element deeper than
:data:`MAX_DEPTH` is removed before parsing. Its text and everything else stay.

The cap works on the segments of the pre-parse pass (``_sanitise``): markup, and the content of
raw-text elements, which is never markup and is never looked at here. A page with fewer than
:data:`MIN_TAGS` start tags is never examined (its worst case is cheap). Otherwise comments are
cut out and innermost elements (a start tag, text and void tags, its own end tag) are removed a
few times over, all in the regex engine: no element removed that way is ever part of a deep
chain, so when the start tags left cannot reach ``MAX_DEPTH`` the page is left alone. Only a
page that still could is replayed on a model of the stack of open elements, and rewritten only
if that stack grows past the cap.

The model may think the page deeper than it is, never shallower: an end tag closes an element
only where the tree builder surely would. It closes the innermost open element of its name
among the last few, and only if no scope boundary lies between; an end tag the tree builder
treats as "any other end tag" (``</span>``, a custom element) stops at any element of the
special category, as the builder does; ``</form>`` removes only the form, ``</body>`` and
``</html>`` nothing; ``</a>`` over a block (the adoption agency case, ``<a><div>x</a>``) removes
only the ``a``; ``<li>``, ``<dd>`` and ``<dt>`` close an open item only up to the first special
element, ``<option>`` only when it is the current node. A page that hides depth behind any of
these is capped all the same.

What the rewrite never does, so the text of the page survives whole:

- it never removes an end tag (a lost ``</script>`` would swallow the rest of the page);
- it never looks inside comments or raw-text elements, whose tag-like text is not markup;
- it never removes the start tag of an element that changes how what follows is parsed
  (``select``, ``svg``, ``math``, ``table``, ``frameset``, and the raw-text elements).
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "MIN_TAGS", "limit_nesting", "limit_segments"]

MAX_DEPTH = 512
#: Below this many start tags even the worst nesting parses in a fraction of a second
#: (tags x depth <= 20,000^2 / 2 scope steps), so such a page is never replayed.
MIN_TAGS = 20_000

Segments = list[tuple[bool, bytes]]

_VOID_NAMES = "area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr|param|keygen|frame"
_VOID = frozenset(_VOID_NAMES.split("|"))
_COMMENT = re.compile(rb"<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)|<[!?][^>]*+(?:>|\Z)")
# An innermost element: its start tag, then only text and void tags, then its own end tag.
# Possessive, so a long run of text is scanned once and never backtracked into; and a void tag
# never starts one, so each run of text and void tags is scanned from one start tag at most.
_INNERMOST = re.compile(
    rb"<(?!(?:" + _VOID_NAMES.encode() + rb")\b)([A-Za-z][A-Za-z0-9-]*)\b[^<>]*+>"
    rb"(?:[^<]++|<(?:" + _VOID_NAMES.encode() + rb")\b[^<>]*+>)*+</\1\s*>",
    re.IGNORECASE,
)
_NAMES = re.compile(rb"<(/?[A-Za-z][A-Za-z0-9-]*)")
_INNERMOST_PASSES = 3
# One token at a time in a markup segment: a comment or bogus comment, or a whole tag (quoted
# attribute values included), or text.
_TOKEN = re.compile(
    rb"<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)"
    rb"|<[!?][^>]*+(?:>|\Z)"
    rb"|<(/?)([A-Za-z][^\t\n\f\r />]*+)(?:[\t\n\f\r /]*+[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+"
    rb"[\t\n\f\r /]*+(?:>|\Z)"
)
# Start tags never removed: each switches the parser into a mode the rest of the page depends on
# (a raw-text element's content is text only because of its start tag).
_KEPT = frozenset(
    [
        "select", "svg", "math", "table", "frameset", "html", "head", "body", "script", "style",
        "xmp", "iframe", "noembed", "noframes", "textarea", "title", "plaintext"
    ]
)  # fmt: skip
# The tree builder's "special" category (HTML standard, 13.2.4.2), lower-cased.
_SPECIAL = frozenset(
    [
        "address", "applet", "area", "article", "aside", "base", "basefont", "bgsound",
        "blockquote", "body", "br", "button", "caption", "center", "col", "colgroup", "dd",
        "details", "dir", "div", "dl", "dt", "embed", "fieldset", "figcaption", "figure", "footer",
        "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hgroup",
        "hr", "html", "iframe", "img", "input", "keygen", "li", "link", "listing", "main",
        "marquee", "menu", "meta", "nav", "noembed", "noframes", "noscript", "object", "ol", "p",
        "param", "plaintext", "pre", "script", "search", "section", "select", "source", "style",
        "summary", "table", "tbody", "td", "template", "textarea", "tfoot", "th", "thead", "title",
        "tr", "track", "ul", "wbr", "xmp", "mi", "mo", "mn", "ms", "mtext", "annotation-xml",
        "foreignobject", "desc"
    ]
)  # fmt: skip
# Scope boundaries: an end tag never closes an element past one of these.
_BARRIERS = frozenset(
    [
        "applet", "caption", "html", "table", "td", "th", "marquee", "object", "template", "mi",
        "mo", "mn", "ms", "mtext", "annotation-xml", "foreignobject", "desc", "title", "button",
        "select", "svg", "math"
    ]
)  # fmt: skip
_BUTTON_SCOPE = _BARRIERS | {"button"}
_LIST_ITEM_SCOPE = _BARRIERS | {"ol", "ul"}
_HEADINGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6"])
# End tags that close nothing in the tree builder, or that it turns into a void element.
_INERT_ENDS = frozenset(["html", "body", "head", "br"])
# End tags the builder handles as "any other end tag" only if not in this set.
_SCOPED_ENDS = _SPECIAL - {"form", "p", "li", "a"} | _HEADINGS
_TABLE = ("table", "tbody", "thead", "tfoot")
# Table-part start tags: each closes an open element of its family instead of nesting inside
# it (a new row closes the open row and the cell in it), looking no further out than the
# family's container.
_TABLE_PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tr": (("tr", "td", "th"), _TABLE),
    "td": (("td", "th"), ("tr", *_TABLE)),
    "th": (("td", "th"), ("tr", *_TABLE)),
    "thead": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
    "tbody": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
    "tfoot": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
}
# Items that close an open item of their family, up to the first special element that is not
# one of address, div and p (HTML standard, "li" and "dd"/"dt" start tags).
_ITEMS: dict[str, tuple[str, ...]] = {"li": ("li",), "dd": ("dd", "dt"), "dt": ("dd", "dt")}
_ITEM_PASSES = frozenset(["address", "div", "p"])
# Block starts close an open <p> (the parser closes it when one is in button scope).
_CLOSES_P = frozenset(
    [
        "address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div",
        "dl", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section",
        "summary", "table", "ul", "li", "dd", "dt"
    ]
)  # fmt: skip
_LOOK_BACK = 16  # an end tag closes one of the few innermost open elements, or is stray


def limit_segments(segments: Segments, cap: int = MAX_DEPTH, min_tags: int = MIN_TAGS) -> Segments:
    """``segments`` with every start tag that would open deeper than ``cap`` removed."""
    markup = [text for is_markup, text in segments if is_markup]
    starts = sum(text.count(b"<") - text.count(b"</") for text in markup)
    if starts < min_tags or not _may_nest_deeper(b"".join(markup), cap):
        return segments
    stack: list[str] = []
    return [(is_markup, _rewrite(text, stack, cap) if is_markup else text)
            for is_markup, text in segments]  # fmt: skip


def limit_nesting(html: str, cap: int = MAX_DEPTH, min_tags: int = MIN_TAGS) -> str:
    """``html`` with every start tag that would open deeper than ``cap`` removed (the same cap on
    a page that has not been through the pre-parse pass; returns ``html`` itself when nothing
    needs to change)."""
    from ._sanitise import split_raw_text  # the pass's view of raw text, without its rewrites

    segments = split_raw_text(html.encode("utf-8", "surrogatepass"))
    limited = limit_segments(segments, cap, min_tags)
    if limited is segments:
        return html
    return b"".join(text for _, text in limited).decode("utf-8", "surrogatepass")


def _may_nest_deeper(markup: bytes, cap: int) -> bool:
    """Whether the page's elements may nest deeper than ``cap`` (see the module notes)."""
    reduced = _COMMENT.sub(b"", markup)
    for _ in range(_INNERMOST_PASSES):
        ends = reduced.count(b"</")
        if reduced.count(b"<") - ends <= cap:
            return False  # even if no start tag left were ever closed
        shorter = _INNERMOST.sub(b"", reduced)
        if len(shorter) == len(reduced):
            break
        reduced = shorter
    ends = reduced.count(b"</")
    if reduced.count(b"<") - ends <= cap:
        return False
    stack: list[str] = []
    replay = _replay
    for name in b"\n".join(_NAMES.findall(reduced)).lower().decode("latin-1").split("\n"):
        if not name:
            continue
        if name[0] == "/":
            replay(stack, name[1:], True)
        elif replay(stack, name, False) and len(stack) > cap:
            return True
    return False


def _rewrite(markup: bytes, stack: list[str], cap: int) -> bytes:
    replay = _replay
    kept = _KEPT
    void = _VOID

    def keep(match: re.Match[bytes]) -> bytes:
        raw = match.group(2)
        if raw is None:
            return match.group(0)
        name = raw.lower().decode("latin-1")
        if match.group(1):
            replay(stack, name, True)
        elif len(stack) >= cap and name not in kept and name not in void:
            return b""
        else:
            replay(stack, name, False)
        return match.group(0)

    return _TOKEN.sub(keep, markup)


def _find(stack: list[str], names: tuple[str, ...] | frozenset[str]) -> int:
    """The position of the innermost open element named ``names`` among the last few, or -1."""
    for back in range(1, min(_LOOK_BACK, len(stack)) + 1):
        if stack[-back] in names:
            return len(stack) - back
    return -1


def _replay(stack: list[str], name: str, end: bool) -> bool:
    """Apply one tag to the model of the stack of open elements; True when it pushed one."""
    if end:
        _close(stack, name)
        return False
    if name in _VOID or name in ("html", "body", "head"):
        return False
    if stack:
        if name == "a" and _find(stack, ("a",)) >= 0:
            _close(stack, "a")  # a new link ends the open one (the adoption agency)
        items = _ITEMS.get(name)
        if items is not None:
            for back in range(1, min(_LOOK_BACK, len(stack)) + 1):
                open_name = stack[-back]
                if open_name in items:
                    del stack[-back:]
                    break
                if open_name in _SPECIAL and open_name not in _ITEM_PASSES:
                    break
        elif name == "option" or name == "optgroup":
            if stack[-1] == "option":
                stack.pop()
            if name == "optgroup" and stack and stack[-1] == "optgroup":
                stack.pop()
        else:
            family = _TABLE_PARTS.get(name)
            if family is not None:
                closes, stops = family
                # Close the outermost open member of the family short of its container.
                outermost = 0
                for back in range(1, min(_LOOK_BACK, len(stack)) + 1):
                    open_name = stack[-back]
                    if open_name in stops:
                        break
                    if open_name in closes:
                        outermost = back
                if outermost:
                    del stack[-outermost:]
        if stack and stack[-1] == "p" and name in _CLOSES_P:
            stack.pop()
    stack.append(name)
    return True


def _close(stack: list[str], name: str) -> None:
    """Apply the end tag ``name`` to the model (see the module notes)."""
    if not stack or name in _INERT_ENDS:
        return
    if name in _HEADINGS:
        position = _find(stack, _HEADINGS)
        boundaries: frozenset[str] = _BARRIERS
    else:
        position = _find(stack, (name,))
        boundaries = (
            _BUTTON_SCOPE if name == "p" else _LIST_ITEM_SCOPE if name == "li" else _BARRIERS
        )
    if position < 0:
        return  # stray, or too far out to be sure of
    above = stack[position + 1 :]
    if name in _SCOPED_ENDS or name in ("p", "li"):
        if not any(open_name in boundaries for open_name in above):
            del stack[position:]
        return
    if name == "form":
        if not any(open_name in _BARRIERS for open_name in above):
            del stack[position]  # the tree builder removes the form and nothing else
        return
    if name == "a":
        if any(open_name in _BARRIERS for open_name in above):
            return
        if any(open_name in _SPECIAL for open_name in above):
            del stack[position]  # the blocks above stay open (the adoption agency)
        else:
            del stack[position:]
        return
    # Any other end tag: it closes its element only if no special element is open above it.
    if not any(open_name in _SPECIAL for open_name in above):
        del stack[position:]
