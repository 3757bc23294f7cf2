"""Cap how deep a page can nest before lexbor parses it, the way browsers do.

Why: an HTML parser checks element scope by walking its stack of open elements, so its cost is
the number of tags times the nesting depth. lexbor is no exception: a page of 350,000 short
paragraphs inside 11,000 unclosed ``<div>``s took 6 s to parse, where the same paragraphs
without the ``<div>``s take about 0.1 s. Browsers cap the tree instead (Chromium stops nesting
at 512 levels), and so do we: a start tag that would open an element deeper than
:data:`MAX_DEPTH` is removed before parsing. Its text and everything else stay.

Finding out whether a page nests that deep must itself be cheap and must not be fooled. A
page with fewer than :data:`MIN_TAGS` start tags is never examined (its worst case is cheap).
Otherwise comments and raw-text elements are cut out and innermost elements (a start tag, text
and void tags, its own end tag) are removed a few times over, all in the regex engine: no
element removed that way is ever part of a deep chain, so when the start tags left cannot
reach ``MAX_DEPTH`` the page is left alone. Only a page that still could is replayed on an
approximate stack of open elements (implied ends for ``p``, ``li``, table cells and the like;
an end tag closes the innermost matching element among the last few, never across a table or
another scope boundary, so stray end tags cannot hide depth), and rewritten only if that
stack grows past the cap.

What the rewrite never does, so the text of the page survives whole:

- it never removes an end tag (a lost ``</script>`` would swallow the rest of the page);
- it never looks inside comments or raw-text elements (``<script>``, ``<style>``,
  ``<textarea>``, ...), whose tag-like text is not markup;
- it never removes the start tag of an element that changes how what follows is parsed
  (``select``, ``svg``, ``math``, ``table``, ``noscript``, ``frameset``).
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "MIN_TAGS", "limit_nesting"]

MAX_DEPTH = 512
#: Below this many start tags even the worst nesting parses in a fraction of a second
#: (tags x depth <= 20,000^2 / 2 scope steps), so such a page is never replayed.
MIN_TAGS = 20_000

_RAW_TEXT = r"(script|style|textarea|title|xmp|iframe|noembed|noframes|plaintext)"
_VOID_NAMES = "area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr|param|keygen|frame"
_VOID = frozenset(_VOID_NAMES.split("|"))
# Comments and raw-text elements, whose content is not markup.
_OPAQUE = re.compile(r"<!--.*?(?:-->|\Z)|<" + _RAW_TEXT + r"\b.*?(?:</\1\s*>|\Z)", re.DOTALL | re.I)
# An innermost element: its start tag, then only text and void tags, then its own end tag.
# Possessive, so a long run of text is scanned once and never backtracked into.
_INNERMOST = re.compile(
    r"<([A-Za-z][A-Za-z0-9-]*)\b[^<>]*+>(?:[^<]++|<(?:" + _VOID_NAMES + r")\b[^<>]*+>)*+</\1\s*>",
    re.IGNORECASE,
)
_NAMES = re.compile(r"<(/?[A-Za-z][A-Za-z0-9-]*)")
_INNERMOST_PASSES = 3
# One token at a time: a comment, a raw-text element with its content, or a tag.
_TOKEN = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<" + _RAW_TEXT + r"\b.*?(?:</\1\s*>|\Z)"
    r"|<(/?)([A-Za-z][A-Za-z0-9-]*)[^>]*>?",
    re.DOTALL | re.IGNORECASE,
)
# Start tags never removed: each switches the parser into a mode the rest of the page depends on.
_KEPT = frozenset(
    ["select", "svg", "math", "table", "noscript", "frameset", "html", "head", "body"]
)
# A start tag of one of these closes an open element of its family instead of nesting inside
# it (an <li> closes the open <li>), looking no further out than the family's container.
_TABLE = ("table", "tbody", "thead", "tfoot")
_SIBLINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "li": (("li",), ("ul", "ol", "menu")),
    "dt": (("dt", "dd"), ("dl",)),
    "dd": (("dt", "dd"), ("dl",)),
    "option": (("option",), ("select", "datalist", "optgroup")),
    "optgroup": (("optgroup", "option"), ("select",)),
    "tr": (("tr", "td", "th"), _TABLE),
    "td": (("td", "th"), ("tr", *_TABLE)),
    "th": (("td", "th"), ("tr", *_TABLE)),
    "thead": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
    "tbody": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
    "tfoot": (("thead", "tbody", "tfoot", "tr", "td", "th"), ("table",)),
}
# Block starts close an open <p> (the parser closes it when one is in button scope).
_CLOSES_P = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "center",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "ul",
        "li",
        "dd",
        "dt",
    ]
)
_LOOK_BACK = 16  # an end tag closes one of the few innermost open elements, or is stray
# Elements an end tag never closes past (the parser's scope boundaries).
_BARRIERS = frozenset(
    ["table", "td", "th", "caption", "template", "html", "object", "marquee", "applet",
     "svg", "math", "button", "select"]
)  # fmt: skip


def limit_nesting(html: str, cap: int = MAX_DEPTH, min_tags: int = MIN_TAGS) -> str:
    """``html`` with every start tag that would open deeper than ``cap`` removed."""
    ends = html.count("</")
    if html.count("<") - ends < min_tags or not _may_nest_deeper(html, cap):
        return html
    return _rewrite(html, [], cap)


def _may_nest_deeper(html: str, cap: int) -> bool:
    """Whether the page's elements may nest deeper than ``cap`` (see the module notes)."""
    reduced = _OPAQUE.sub("", html)
    for _ in range(_INNERMOST_PASSES):
        ends = reduced.count("</")
        if reduced.count("<") - ends <= cap:
            return False  # even if no start tag left were ever closed
        shorter = _INNERMOST.sub("", reduced)
        if len(shorter) == len(reduced):
            break
        reduced = shorter
    ends = reduced.count("</")
    if reduced.count("<") - ends <= cap:
        return False
    stack: list[str] = []
    replay = _replay
    for name in "\n".join(_NAMES.findall(reduced)).lower().split("\n"):
        if not name:
            continue
        if name[0] == "/":
            replay(stack, name[1:], True)
        elif replay(stack, name, False) and len(stack) > cap:
            return True
    return False


def _rewrite(html: str, stack: list[str], cap: int) -> str:
    replay = _replay
    kept = _KEPT
    void = _VOID

    def keep(match: re.Match[str]) -> str:
        name = match.group(3)
        if name is None:
            return match.group(0)
        name = name.lower()
        if match.group(2):
            replay(stack, name, True)
        elif len(stack) >= cap and name not in kept and name not in void:
            return ""
        else:
            replay(stack, name, False)
        return match.group(0)

    return _TOKEN.sub(keep, html)


def _replay(stack: list[str], name: str, end: bool) -> bool:
    """Apply one tag to the approximate stack of open elements; True when it pushed one."""
    if end:
        if stack and stack[-1] == name:
            stack.pop()
            return False
        tail = stack[-_LOOK_BACK:]
        if name in tail:  # one C scan: a stray end tag (the common case here) costs no loop
            position = len(stack) - 1 - tail[::-1].index(name)
            if not any(open_name in _BARRIERS for open_name in stack[position + 1 :]):
                del stack[position:]
        return False
    if name in _VOID:
        return False
    if stack:
        family = _SIBLINGS.get(name)
        if family is not None:
            closes, stops = family
            # Close the outermost open member of the family short of its container: a new row
            # closes the open row and the cell in it.
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
