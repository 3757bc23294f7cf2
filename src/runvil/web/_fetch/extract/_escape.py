"""Escape text that comes from a page so markdown shows it as text, never as syntax.

Why: the result of ``web/fetch`` is markdown, and a model (or whatever renders the markdown) reads
links, images and HTML in it as such. A page must not be able to write ``[x](javascript:...)``,
``![](https://tracker)``, ``<img src=...>`` or a fake heading into it with its text. Links and
images come only from the page's ``<a href>`` and ``<img src>``, made absolute and limited to
``http``/``https``/``mailto`` by ``_urls``; every character of page text that could start syntax
is escaped with a backslash, and only where it could (so ``snake_case`` and ``2 * 3`` stay as
they are):

- ``\\`` before ASCII punctuation (or at the end of a piece, where what follows is unknown);
- `````` ` `````` always (code spans);
- ``*`` and ``~`` unless spaces surround them (emphasis, strikethrough);
- ``_`` unless letters or digits, or spaces, surround it (``_`` inside a word is never emphasis);
- ``[`` always, and ``]`` inside link text (links, images, footnotes, reference definitions);
- ``<`` before a letter, ``/``, ``!`` or ``?`` (HTML, autolinks, comments);
- ``&`` that starts a character reference (``&amp;``, ``&#60;``).

Text is escaped piece by piece as the renderer collects it, so a piece boundary counts as "what
follows is unknown". :func:`escape_line_start` then handles what is syntax only at the start of a
line: headings, quotes, list markers, ordered-list numbers, setext underlines, thematic breaks and
table delimiter rows.
"""

from __future__ import annotations

import re

__all__ = ["escape_heading_end", "escape_line_start", "escape_text"]

_CANDIDATES = re.compile(r"[\\`*_~\[\]<&]")
_CANDIDATES_OUTSIDE_LINKS = re.compile(r"[\\`*_~\[<&]")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_TAG_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/!?")
_REFERENCE = re.compile(r"&(?:#[0-9xX]|[A-Za-z][A-Za-z0-9]*(?:;|$))")
_ORDERED_START = re.compile(r"(\d{1,9})[.)](?:\s|$)")
# A line of only these, with a dash or an equals sign, or three or more of * or _, is a setext
# underline, a thematic break or a table's delimiter row.
_RULE_LINE = re.compile(r"[-=*_:| ]+")


def escape_text(text: str, in_link: bool = False) -> str:
    """``text`` (one piece of page text) with every character that could be markdown syntax
    escaped; inside link text ``]`` too."""
    candidates = _CANDIDATES if in_link else _CANDIDATES_OUTSIDE_LINKS
    if candidates.search(text) is None:
        return text
    last = len(text) - 1

    def escape(found: re.Match[str]) -> str:
        char = found.group()
        at = found.start()
        after = text[at + 1] if at < last else ""
        if char == "\\":
            return "\\\\" if after == "" or after in _PUNCTUATION else char
        if char in "`[]":
            return "\\" + char
        if char == "<":
            return "\\<" if after == "" or after in _TAG_START else char
        if char == "&":
            return "\\&" if after == "" or _REFERENCE.match(text, at) else char
        before = text[at - 1] if at else ""
        if char == "_" and before.isalnum() and after.isalnum():
            return char  # inside a word: never emphasis
        if before.isspace() and after.isspace():
            return char  # "2 * 3": neither opens nor closes anything
        return "\\" + char

    return candidates.sub(escape, text)


def escape_line_start(line: str) -> str:
    """Keep a line that starts like block syntax (heading, quote, list item, ordered-list
    number, setext underline, thematic break, table delimiter row) from being read as it."""
    if not line:
        return line
    first = line[0]
    if first in "#>" or (first in "-*+" and (len(line) == 1 or line[1] == " ")):
        return "\\" + line
    if first in "-=*_:|" and _RULE_LINE.fullmatch(line):
        return "\\" + line
    if first.isdigit():
        found = _ORDERED_START.match(line)
        if found:
            digits = found.end(1)
            return line[:digits] + "\\" + line[digits:]
    return line


def escape_heading_end(text: str) -> str:
    """A heading's text whose trailing ``#``s would be read as the heading's closing sequence."""
    if not text.endswith("#"):
        return text
    start = len(text.rstrip("#"))
    if start == 0 or text[start - 1] == " ":
        return text[:start] + "\\" + text[start:]
    return text
