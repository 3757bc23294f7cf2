"""A page's text as plain markdown paragraphs, in time and memory linear in its size.

Why: this is what a fetch returns when the real rendering cannot be afforded, so it must never be
the expensive part. It is used for the part of a page past the node budget (``_sanitise``), and
for the whole page when a rendering runs past its deadline. It builds no tree: comments and the
content of raw-text elements (scripts, styles, titles...) are cut out, block-level tags end a
paragraph, ``<br>`` ends a line, every other tag is removed, entities are decoded, and each line
is escaped like any page text (``_escape``). All of that is a few passes of the regex engine over
one chunk of the page at a time, so a page of any shape costs about the same per byte, and the
work stops as soon as the text is longer than the caller will keep. What it returns then is cut
:data:`MARGIN` characters past that, so a page of one long paragraph is not returned whole.
"""

from __future__ import annotations

import html as html_module
import re

from ._escape import escape_line_start, escape_text

__all__ = ["render_text"]

#: Bytes of page converted per step; the memory this needs is a few times this.
CHUNK_BYTES = 256 * 1024
#: Characters kept past ``max_chars`` when the text stops early: the end of a paragraph cut
#: short may differ from the whole paragraph's (a trailing space, an escape, an entity), never
#: more than this far back.
MARGIN = 64

_ATTRIBUTES = (
    rb"(?:[\t\n\f\r /]*+[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+"
    rb"[\t\n\f\r /]*+(?:>|\Z)"
)
_HIDDEN_NAMES = rb"script|style|title|textarea|iframe|noembed|noframes"
# Comments, doctypes, bogus comments, and raw-text elements with their content.
_HIDDEN = re.compile(
    rb"<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)"
    rb"|<[!?][^>]*+(?:>|\Z)"
    rb"|</(?![A-Za-z])[^>]*+(?:>|\Z)"
    rb"|<((?i:"
    + _HIDDEN_NAMES
    + rb"))(?=[\t\n\f\r />]|\Z)"
    + _ATTRIBUTES
    + rb"(?:.*?</(?i:\1)(?=[\t\n\f\r />])"
    + _ATTRIBUTES
    + rb"|.*\Z)",
    re.DOTALL,
)
_BLOCK_NAMES = (
    rb"address|article|aside|blockquote|body|caption|center|dd|details|dialog|dir|div|dl|dt|"
    rb"fieldset|figcaption|figure|footer|form|h[1-6]|header|hgroup|hr|html|legend|li|listing|"
    rb"main|menu|nav|ol|p|plaintext|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul|xmp"
)
_BLOCK_TAG = re.compile(rb"</?(?i:" + _BLOCK_NAMES + rb")(?=[\t\n\f\r />]|\Z)" + _ATTRIBUTES)
_BREAK_TAG = re.compile(rb"</?(?i:br)(?=[\t\n\f\r />]|\Z)" + _ATTRIBUTES)
_ANY_TAG = re.compile(rb"</?[A-Za-z][^\t\n\f\r />]*+" + _ATTRIBUTES)
_CRUDE_TAGS = re.compile(rb"<[^>]*+>")
_SPACES = re.compile(r"[ \t\n\r\f\v\u00a0\u2028\u2029]+")
# Each starts at a marker and never backtracks, so a long run is scanned once.
_LINE_RUNS = re.compile(rb"\x02[ \t\f\x02]*+")
_PARAGRAPH_RUNS = re.compile(rb"\x02?\x01[ \t\f\x01\x02]*+")
_SOURCE_BREAKS = bytes.maketrans(b"\n\r\x01\x02", b"    ")
_PARAGRAPH = "\x01"  # where a block-level tag was
_LINE = "\x02"  # where a <br> was
# A line escaped because all of it reads as a rule or a table's delimiter row: more text on it
# would undo the escape, so a paragraph ending in one is not cut short.
_ESCAPED_RULE = re.compile(r"\\[-=*_:| ]+")


def render_text(data: bytes, max_chars: int | None = None) -> str:
    """The text of the HTML in ``data`` as markdown paragraphs. With ``max_chars``, the work may
    stop once the text is longer than that; its first ``max_chars`` characters are then those of
    the whole text."""
    visible = _HIDDEN.sub(b"", data)
    paragraphs: list[str] = []
    length = 0
    wanted = None if max_chars is None else max_chars + 1
    start = 0
    end = len(visible)
    pending = ""  # a paragraph that may go on in the next chunk
    recheck_at = 0  # the length of ``pending`` at which it is next worth rendering early
    while start < end:
        stop = _chunk_end(visible, start)
        chunk = visible[start:stop].translate(_SOURCE_BREAKS)
        start = stop
        if not _CRUDE_TAGS.sub(b"", chunk).strip():
            # Nothing but tags (a flood of them, past the node budget): no text to keep, so
            # one pass instead of five; the chunk ends any paragraph it interrupts.
            length += _add(paragraphs, pending)
            pending = ""
            continue
        chunk = _BLOCK_TAG.sub(b"\x01", chunk)
        chunk = _ANY_TAG.sub(b"", _BREAK_TAG.sub(b"\x02", chunk))
        # A run of breaks is one break (a paragraph break if it holds one), so a page of
        # nothing but <br> or <p> is a few regex steps, not a Python step per tag.
        chunk = _PARAGRAPH_RUNS.sub(b"\x01", _LINE_RUNS.sub(b"\x02", chunk))
        blocks = (pending + chunk.decode("utf-8", "replace")).split(_PARAGRAPH)
        pending = blocks.pop()
        for block in blocks:
            length += _add(paragraphs, block)
        if wanted is not None:
            if length > wanted:
                return _cut("\n\n".join(paragraphs), wanted)
            if len(pending) > max(recheck_at, wanted - length):
                # One paragraph that goes on and on: its start may already be enough.
                recheck_at = 2 * len(pending)
                if _long_enough(pending, wanted - length):
                    _add(paragraphs, pending)
                    return _cut("\n\n".join(paragraphs), wanted)
    _add(paragraphs, pending)
    text = "\n\n".join(paragraphs)
    return text if wanted is None else _cut(text, wanted)


def _cut(text: str, wanted: int) -> str:
    return text[: wanted + MARGIN]


def _long_enough(block: str, wanted: int) -> bool:
    """Whether the paragraph ``block`` starts shows more than ``wanted`` characters however it
    goes on: longer than that with the margin, and not ending in a line whose escape more text
    would undo."""
    lines: list[str] = []
    if _add(lines, block) <= wanted + MARGIN:
        return False
    last = lines[0].rsplit("\n", 1)[-1]
    return _ESCAPED_RULE.fullmatch(last) is None


def _add(paragraphs: list[str], block: str) -> int:
    """Append ``block`` as a paragraph (if it has any text); return the characters added."""
    lines = []
    for line in block.split(_LINE):
        if "&" in line:
            line = html_module.unescape(line)
        line = _SPACES.sub(" ", line.replace("\x00", "")).strip()
        if line:
            lines.append(escape_line_start(escape_text(line)))
    if not lines:
        return 0
    paragraph = "\n".join(lines)
    paragraphs.append(paragraph)
    return len(paragraph) + 2


def _chunk_end(data: bytes, start: int) -> int:
    """Where the chunk that starts at ``start`` ends: at the first tag after
    :data:`CHUNK_BYTES` (a paragraph split there goes on in the next chunk)."""
    nominal = start + CHUNK_BYTES
    if nominal >= len(data):
        return len(data)
    tag = data.find(b"<", nominal)
    return len(data) if tag < 0 else tag
