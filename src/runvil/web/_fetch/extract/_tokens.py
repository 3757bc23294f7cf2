"""The HTML tokenizer's view of a page, as regular expressions over its UTF-8 bytes.

Why: lexbor is the parser, but some inputs make its tree builder quadratic or explosive, and the
only place to stop that is before it runs. The pre-parse pass (``_sanitise``) therefore has to
see the page the way the HTML tokenizer will: where each tag really ends (a ``>`` inside a quoted
attribute value does not end it), which ``<`` starts a tag at all, where a comment ends
(``<!-->`` is a whole comment), and where a raw-text element such as ``<script>`` ends. Getting
one of these wrong in the wrong direction would let an attacker hide markup from the pass.

Everything here follows the tokenizer states of the HTML standard ("Tokenization", 13.2.5):

- a tag starts at ``<`` followed by an ASCII letter (``</`` and a letter for an end tag); its name
  runs to whitespace, ``/`` or ``>``;
- an attribute name may start with ``=`` and may hold quotes and ``<``; a value is quoted only
  when the quote directly follows ``=`` (after optional whitespace); an unquoted value runs to
  whitespace or ``>``; a quoted value that never closes, or a tag without ``>``, runs to the end
  of the input (the tokenizer then drops the tag);
- ``<!--`` opens a comment that ends at the first ``-->`` or ``--!>``, or at once for ``<!-->``
  and ``<!--->``; ``<!`` and ``<?`` otherwise open a bogus comment (or a doctype) that ends at
  the first ``>``; ``</>`` is nothing and ``</`` before anything but a letter is a bogus comment;
- any other ``<`` is text.

The one simplification is on the safe side: a raw-text element ends at the first end tag of its
name (``</script`` followed by whitespace, ``/`` or ``>``). The tokenizer can only end it later
(inside ``<!--<script>`` in a script), never earlier, so the pass may look at a few bytes of
script as markup, but never at markup as script.

:data:`MARKUP` consumes, in one call into the regex engine, everything that needs no decision:
text, comments, doctypes, end tags without attributes and ordinary start tags with fewer than
:data:`MAX_ATTRIBUTES` attributes. It stops in front of anything else (a raw-text element, a
``<select>``, ``<svg>``, ``<math>``, ``<html>`` or ``<body>`` start tag, a formatting element's
start or end tag, a tag with too many attributes, an end tag carrying attributes), and after at
most :data:`TOKENS_PER_MATCH` tokens so its caller can watch its budget.
"""

from __future__ import annotations

import re

from ._alternation import alternation

__all__ = [
    "ATTRIBUTE",
    "ATTRIBUTE_SECTIONS",
    "END_TAG",
    "FORMATTING",
    "MARKUP",
    "MAX_ATTRIBUTES",
    "RAW_TEXT",
    "START_TAG",
    "TOKENS_PER_MATCH",
    "raw_text_end",
]

#: Attributes kept on one tag. lexbor checks every new attribute of an element against all the
#: ones before it, so an element's cost grows with the square of its attribute count (40,000
#: attributes: 6 s). Real tags carry a handful; SVG and framework markup a few dozen.
MAX_ATTRIBUTES = 64
#: Tokens one :data:`MARKUP` match consumes at most before it hands back control.
TOKENS_PER_MATCH = 256

_WS = rb"\t\n\f\r "
#: One attribute: its name, then optionally ``=`` and a value (quoted, or up to whitespace/``>``).
_ATTRIBUTE = (
    rb"[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?"
)
_SEPARATOR = rb"[\t\n\f\r /]*+"
_NAME_END = rb"(?=[\t\n\f\r />]|\Z)"
#: The tokens that are neither text nor a tag: a comment (``<!-->`` included), a bogus comment
#: or doctype (``<!``, ``<?``), and ``</`` before anything but a letter.
_NOT_TAGS = (
    rb"<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)"
    rb"|<[!?][^>]*+(?:>|\Z)"
    rb"|</(?![A-Za-z])[^>]*+(?:>|\Z)"
)
#: Raw-text and RCDATA elements: their content is text up to their own end tag.
RAW_TEXT = frozenset(
    [b"script", b"style", b"xmp", b"iframe", b"noembed", b"noframes", b"textarea", b"title",
     b"plaintext"]
)  # fmt: skip
#: The formatting elements other than ``<a>``, which the pass renames (``_sanitise``).
FORMATTING = frozenset(
    [b"b", b"big", b"code", b"em", b"font", b"i", b"nobr", b"s", b"small", b"strike", b"strong",
     b"tt", b"u"]
)  # fmt: skip
_FORMATTING = alternation(FORMATTING)
#: Start tags the pass decides on one by one (see the module notes).
_DECIDED = alternation(RAW_TEXT | FORMATTING | {b"select", b"svg", b"math", b"html", b"body"})

MARKUP = re.compile(
    rb"(?:"
    rb"[^<]{1,16384}+"
    rb"|<(?!(?i:" + _DECIDED + rb")" + _NAME_END + rb")[A-Za-z][^\t\n\f\r />]*+"
    rb"(?:"
    + _SEPARATOR
    + _ATTRIBUTE
    + rb"){0,%d}+" % (MAX_ATTRIBUTES - 1)
    + _SEPARATOR
    + rb"(?:>|\Z)"
    rb"|</(?!(?i:"
    + _FORMATTING
    + rb")"
    + _NAME_END
    + rb")[A-Za-z][^\t\n\f\r />]*+"
    + _SEPARATOR
    + rb"(?:>|\Z)|"
    + _NOT_TAGS
    + rb"|<(?![A-Za-z/!?])"
    rb"){0,%d}+" % TOKENS_PER_MATCH
)
#: A start tag at a stop: group 1 the name, group 2 the attribute section, group 3 the end
#: (``>``, ``/>`` or nothing at the end of the input).
START_TAG = re.compile(
    rb"<([A-Za-z][^\t\n\f\r />]*+)((?:" + _SEPARATOR + _ATTRIBUTE + rb")*+)"
    rb"(" + _SEPARATOR + rb">|" + _SEPARATOR + rb"\Z)"
)
#: An end tag (with whatever attributes it carries): group 1 the name.
END_TAG = re.compile(
    rb"</([A-Za-z][^\t\n\f\r />]*+)(?:"
    + _SEPARATOR
    + _ATTRIBUTE
    + rb")*+"
    + _SEPARATOR
    + rb"(?:>|\Z)"
)
#: The markup token by token, as the tokenizer reads it, for ``findall``: group 1 is a tag's
#: attribute section (empty for every other token). Every position starts a token, so the
#: matches cover the markup one after the other and each section is exactly the tokenizer's.
ATTRIBUTE_SECTIONS = re.compile(
    rb"[^<]++|"
    + _NOT_TAGS
    + rb"|</?[A-Za-z][^\t\n\f\r />]*+((?:"
    + _SEPARATOR
    + _ATTRIBUTE
    + rb")*+)"
    + _SEPARATOR
    + rb"(?:>|\Z)"
    rb"|<"
)
#: One attribute inside an attribute section: group 1 its name.
ATTRIBUTE = re.compile(rb"(?:[\t\n\f\r /]*+)(" + rb"[^\t\n\f\r />][^\t\n\f\r />=]*+" + rb")"
                       rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|"
                       rb"[^\t\n\f\r >]*+))?")  # fmt: skip

_RAW_TEXT_ENDS: dict[bytes, re.Pattern[bytes]] = {
    name: re.compile(rb"</(?i:" + name + rb")[\t\n\f\r />]") for name in RAW_TEXT
}


def raw_text_end(data: bytes, name: bytes, start: int) -> int:
    """Where the content of raw-text element ``name`` that starts at ``start`` ends: at its end
    tag, or at the end of the input (``plaintext`` has no end tag)."""
    if name == b"plaintext":
        return len(data)
    found = _RAW_TEXT_ENDS[name].search(data, start)
    return len(data) if found is None else found.start()
