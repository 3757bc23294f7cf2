"""Rewrite a page before lexbor parses it, so that parsing it is linear in its size.

Why: an HTML tree builder does work that is not linear in its input on some shapes, and lexbor
(through selectolax) has no way to stop a parse half-way. Measured on lexbor as shipped:

- **many attributes on one element**: each new attribute is checked against all the element's
  earlier ones (40,000 attributes: 6 s); ``<html>`` and ``<body>`` tags repeated with new
  attributes add them all to one element; end tags carrying attributes cost the same;
- **many children of one ``<select>``** (``<option>``, ``<hr>``...): 40,000 options take 15 s;
- **many distinct tag or attribute names**: lexbor interns every new name, and past about
  50,000 distinct names each new one costs more (200,000 distinct tag names: 28 s);
- **the list of active formatting elements**: ``<b>``, ``<i>``, ``<font>``, ``<code>``... left
  open when their block closes are re-created in every later block ("reconstruct the active
  formatting elements"), so 39 unclosed formatting tags followed by ``<p>x</p>`` repeated make
  40 elements per 8 bytes of input (1 MB of it: 2.1 GB), and with distinct attributes there is
  no limit at all; the adoption agency algorithm also keeps blocks open that the markup closed;
- **nesting depth** (scope checks walk the stack of open elements), handled by ``_nesting``.

So before lexbor sees the page, this pass (linear, mostly inside the regex engine):

1. keeps at most :data:`~._tokens.MAX_ATTRIBUTES` distinct attributes per start tag, strips the
   attributes of end tags and of every ``<html>``/``<body>`` tag after the first;
2. keeps at most :data:`MAX_SELECT_CHILDREN` start tags inside one ``<select>`` (everything in a
   select is dropped from the text anyway) and closes a select explicitly where the tokenizer
   would leave it for ``<input>``, ``<keygen>``, ``<textarea>`` or another ``<select>``;
3. renames the formatting elements other than ``<a>`` (``b``, ``big``, ``code``, ``em``, ``font``,
   ``i``, ``nobr``, ``s``, ``small``, ``strike``, ``strong``, ``tt``, ``u``) to ordinary custom
   elements (``rv-b``...), which the tree builder nests like ``<span>``, so there is no list of
   them to reconstruct; ``_dom`` reads the names back, so extraction sees the real tags. Only
   how misnested formatting markup is repaired changes (``<p><b>x</p>y``: ``y`` is not bold).
   Only real tags are renamed, never text in attribute values, comments or scripts;
4. caps the distinct tag names and attribute names of a big page at :data:`MAX_DISTINCT_NAMES`;
5. caps the nesting depth (``_nesting``);
6. on a page with ``<svg>`` or ``<math>``, replaces ``<`` inside raw-text elements (``<script>``,
   ``<style>``, ``<title>``...) by an equivalent that is text in every context (``\\u003c`` in a
   script, ``&lt;`` elsewhere; ``<xmp>``/``<plaintext>`` become ``<pre>`` with their text
   escaped): inside SVG or MathML these elements are not raw text, so markup hidden in a script
   would otherwise reach the tree builder unchecked;
7. stops at a **node budget**: past :data:`MARKUP_BUDGET` bytes-equivalent (markup counts
   :data:`MARKUP_COST` per byte, the most any shape measured costs in memory; script and style
   content counts :data:`OPAQUE_COST`), the rest of the page is not parsed but handed back as
   ``tail``, which the caller renders as plain text. Memory and work then stay bounded for any
   page the byte cap lets through.

Every rewrite keeps the text a reader sees; none touches a page that has none of these shapes, apart
from the formatting-element names. The tokenizer's view (``_tokens``) is exact where an error
could hide markup from this pass, and errs only towards looking at too much.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from . import _nesting
from ._tokens import (
    ATTRIBUTE,
    ATTRIBUTE_SECTIONS,
    END_TAG,
    FORMATTING,
    MARKUP,
    MAX_ATTRIBUTES,
    RAW_TEXT,
    START_TAG,
    raw_text_end,
)

__all__ = [
    "FORMATTING",
    "MARKUP_BUDGET",
    "MAX_DISTINCT_NAMES",
    "MAX_SELECT_CHILDREN",
    "Prepared",
    "prepare",
    "split_raw_text",
]

#: Start tags kept inside one ``<select>``. The tree builder runs the select's option
#: bookkeeping over all its children for each new one; 256 keeps that under a millisecond.
MAX_SELECT_CHILDREN = 256
#: Distinct tag names, and distinct attribute names, a page may use before the excess is
#: renamed (tags) or dropped (attributes). Real pages use a few hundred of each.
MAX_DISTINCT_NAMES = 8192
#: Estimated peak memory, in bytes, per byte of markup handed to the parser: the worst shapes
#: measured (8 MiB of ``<p>``, ``<br>``, or tags full of attributes) peak at 100-135 bytes per
#: byte in lexbor's tree and ours together.
MARKUP_COST = 160
#: The same for the content of raw-text elements (``<script>``, ``<style>``...), one text node.
OPAQUE_COST = 3
#: Each tag the pass decides on in Python costs this much of the budget as well, so a page of
#: nothing but such tags cannot make the pass itself slow.
STOP_COST = 2_000
#: The node budget: the estimated memory of the part of the page that is parsed.
MARKUP_BUDGET = 192 * 1024 * 1024
#: Pages with less markup than this skip the distinct-name count, which costs about 1.5 ms on
#: a page of this size and would be paid by most big ordinary pages. Their size bounds them
#: instead: an attribute name takes at least three bytes (`` ab``), so they hold at most about
#: 65,000, and the worst such page measured (distinct three-letter attribute names, 60 to a
#: tag, 192 KiB) renders in 0.13 s against 0.05 s with the cap (tag names: 0.05 s either way).
_NAMES_MIN_BYTES = 192 * 1024

_SURROGATE = re.compile("[\ud800-\udfff]")
_SELECT_CLOSERS = frozenset([b"select", b"input", b"keygen", b"textarea"])
_ONCE = frozenset([b"html", b"body"])
_FOREIGN = frozenset([b"svg", b"math"])
_NEEDS_NAME_CHECK = re.compile(rb"[\t\n\f\r /]")

# Inside a select, stop at every start tag (to count it) and at ``</select>``.
_IN_SELECT = re.compile(
    rb"(?:"
    rb"[^<]++"
    rb"|</(?!(?i:select)(?:[\t\n\f\r />]|\Z))[A-Za-z][^\t\n\f\r />]*+[\t\n\f\r /]*+(?:>|\Z)"
    rb"|<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)"
    rb"|<[!?][^>]*+(?:>|\Z)"
    rb"|</(?![A-Za-z])[^>]*+(?:>|\Z)"
    rb"|<(?![A-Za-z/!?])"
    rb"){0,256}+"
)
# Past the cap inside a select: everything up to the select's end, a start tag that ends it, or
# a raw-text element is dropped in one step.
_SELECT_REST = re.compile(
    rb"(?:"
    rb"[^<]++"
    rb"|<(?!(?i:select|input|keygen|textarea|" + b"|".join(sorted(RAW_TEXT)) + rb")"
    rb"(?:[\t\n\f\r />]|\Z))[A-Za-z]"
    rb"[^\t\n\f\r />]*+(?:[\t\n\f\r /]*+[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+"
    rb"[\t\n\f\r /]*+(?:>|\Z)"
    rb"|</(?!(?i:select)(?:[\t\n\f\r />]|\Z))[A-Za-z][^\t\n\f\r />]*+"
    rb"(?:[\t\n\f\r /]*+[^\t\n\f\r />][^\t\n\f\r />=]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"?|'[^']*+'?|[^\t\n\f\r >]*+))?)*+"
    rb"[\t\n\f\r /]*+(?:>|\Z)"
    rb"|<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)"
    rb"|<[!?][^>]*+(?:>|\Z)"
    rb"|</(?![A-Za-z])[^>]*+(?:>|\Z)"
    rb"|<(?![A-Za-z/!?])"
    rb")*+"
)
# Everything but tags, for the renamer.
_PLAIN = re.compile(
    rb"(?:[^<]++|<!--(?:>|->|(?:[^-]++|-(?!-!?>))*+(?:--!?>)?)|<[!?][^>]*+(?:>|\Z)"
    rb"|<(?![A-Za-z/!?]))*+"
)
# Every "<" and a letter in the markup: all tag names, and some text that only looks like one
# (in attribute values and comments), so the count errs towards too many.
_TAG_NAMES = re.compile(rb"</?([A-Za-z][^\t\n\f\r />]*)")


@dataclass(frozen=True)
class Prepared:
    """The page as lexbor should parse it, and the part left over past the node budget."""

    markup: bytes
    tail: bytes
    """The rest of the page past the node budget (empty when the whole page fits)."""


def prepare(
    html: str,
    check: Callable[[], None] | None = None,
    budget: int | None = None,
    depth: int = _nesting.MAX_DEPTH,
) -> Prepared:
    """Rewrite ``html`` as described in the module notes. ``check`` is called now and then and
    may raise to abandon the work (the render's deadline); ``budget`` is the node budget
    (:data:`MARKUP_BUDGET` when not given)."""
    data = encode(html)
    budget = MARKUP_BUDGET if budget is None else budget
    segments, cut = _Pass(data, check, budget).run()
    # A page with fewer start tags than MIN_TAGS cannot nest deep. Counting "<" alone (one fast
    # byte count) settles that for nearly every page; "</" is counted only when it might not.
    tags = data.count(b"<")
    if tags >= _nesting.MIN_TAGS and tags - data.count(b"</") >= _nesting.MIN_TAGS:
        segments = _nesting.limit_segments(segments, depth)
    if check is not None:
        check()
    if sum(len(text) for _, text in segments) >= _NAMES_MIN_BYTES:
        segments = _cap_names(segments)
    return Prepared(b"".join(text for _, text in segments), data[cut:])


def split_raw_text(data: bytes) -> list[tuple[bool, bytes]]:
    """``data`` cut into markup and raw-text content the way the pass sees it, unchanged."""
    segments, _ = _Pass(data, None, sys.maxsize, rewrite=False).run()
    return segments


def encode(html: str) -> bytes:
    """UTF-8 for the parser; a lone surrogate (never valid text) becomes U+FFFD."""
    try:
        return html.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", html).encode("utf-8")


class _Pass:
    """One left-to-right walk over the page (see the module notes)."""

    def __init__(
        self, data: bytes, check: Callable[[], None] | None, budget: int, rewrite: bool = True
    ) -> None:
        self.data = data
        self.rewrite = rewrite
        self.check = check
        self.budget = budget
        self.cost = 0
        self.stops = 0
        self.segments: list[tuple[bool, bytes]] = []
        self.markup: list[bytes] = []  # markup since the last raw-text content
        self.seen: set[bytes] = set()  # of ``html`` and ``body``
        self.foreign = False  # an <svg> or <math> start tag has been seen

    def run(self) -> tuple[list[tuple[bool, bytes]], int]:
        data = self.data
        end = len(data)
        pos = 0
        while pos < end:
            if self.cost > self.budget:
                break
            stop = _consumed(MARKUP, data, pos)
            if stop > pos:  # (it may have stopped after its token count, not at a tag)
                self.markup.append(data[pos:stop])
                self.cost += MARKUP_COST * (stop - pos)
                pos = stop
                continue
            self.stops += 1
            self.cost += STOP_COST
            if self.check is not None and not self.stops & 255:
                self.check()
            pos = self._decide(pos)
        self._flush()
        return self.segments, min(pos, end)

    def _flush(self) -> None:
        if self.markup:
            self.segments.append((True, b"".join(self.markup)))
            self.markup = []

    def _decide(self, pos: int) -> int:
        """Handle the tag at ``pos`` that :data:`MARKUP` stopped in front of; return where to go
        on from."""
        data = self.data
        if data[pos + 1] == 47:  # "</": a formatting element's, or one carrying attributes
            end_tag = END_TAG.match(data, pos)
            assert end_tag is not None
            if self.rewrite:
                name = end_tag.group(1)
                prefix = b"</rv-" if name.lower() in FORMATTING else b"</"
                self.markup.append(prefix + name + b">")
            else:
                self.markup.append(end_tag.group(0))
            self.cost += MARKUP_COST * (end_tag.end() - pos)
            return end_tag.end()
        tag = START_TAG.match(data, pos)
        assert tag is not None
        self.cost += MARKUP_COST * (tag.end() - pos)
        name = tag.group(1).lower()
        if not self.rewrite:
            self.markup.append(tag.group(0))
            return self._raw_text(name, tag) if name in RAW_TEXT else tag.end()
        if name in FORMATTING:
            self.markup.append(b"<rv-" + _capped(tag)[1:])
            return tag.end()
        if name in _ONCE:
            if name in self.seen:
                self.markup.append(b"<" + tag.group(1) + b">")
                return tag.end()
            self.seen.add(name)
        elif name in _FOREIGN:
            self.foreign = True
        self.markup.append(_capped(tag))
        if name == b"select":
            return self._select(tag.end())
        if name in RAW_TEXT:
            return self._raw_text(name, tag)
        return tag.end()

    def _raw_text(self, name: bytes, tag: re.Match[bytes]) -> int:
        data = self.data
        start = tag.end()
        stop = raw_text_end(data, name, start)
        content = data[start:stop]
        self.cost += OPAQUE_COST * len(content)
        # An <xmp> becomes a <pre> whatever its text: its end tag is rewritten to </pre> below.
        if self.foreign and (b"<" in content or name in (b"xmp", b"plaintext")):
            content = self._neutralise(name, content)
        self._flush()
        if content:
            self.segments.append((False, content))
        if name in (b"xmp", b"plaintext") and self.foreign and stop < len(data):
            end_tag = END_TAG.match(data, stop)
            assert end_tag is not None
            self.markup.append(b"</pre>")
            return end_tag.end()
        return stop

    def _neutralise(self, name: bytes, content: bytes) -> bytes:
        """Raw-text content that is text in HTML and in SVG/MathML alike (module notes, 6)."""
        if name == b"script":
            return content.replace(b"<", b"\\u003c")
        if name in (b"xmp", b"plaintext"):
            # <pre> shows the same text, and is a <pre> in foreign content too (it breaks out).
            self.markup[-1] = b"<pre>"
            text = content.replace(b"&", b"&amp;").replace(b"<", b"&lt;")
            return b"\n" + text if text.startswith(b"\n") else text
        return content.replace(b"<", b"&lt;")

    def _select(self, pos: int) -> int:
        """Walk the inside of a ``<select>``, keeping at most :data:`MAX_SELECT_CHILDREN` start
        tags; return the position of the tag that ends it (or the end of the input)."""
        data = self.data
        end = len(data)
        children = 0
        while pos < end:
            stop = _consumed(_IN_SELECT, data, pos)
            if stop > pos:
                self.markup.append(data[pos:stop])
                self.cost += MARKUP_COST * (stop - pos)
                pos = stop
                continue
            self.stops += 1
            self.cost += STOP_COST
            if self.cost > self.budget:
                return pos
            if data[pos + 1] == 47:  # </select>, possibly with attributes
                end_tag = END_TAG.match(data, pos)
                assert end_tag is not None
                self.markup.append(b"</select>")
                self.cost += MARKUP_COST * 9
                return end_tag.end()
            tag = START_TAG.match(data, pos)
            assert tag is not None
            self.cost += MARKUP_COST * (tag.end() - pos)
            name = tag.group(1).lower()
            if name in _SELECT_CLOSERS:
                # The tokenizer ends the select here; say so, so no parser can read it otherwise.
                self.markup.append(b"</select>")
                return tag.end() if name == b"select" else pos
            if name in RAW_TEXT:
                self.markup.append(_capped(tag))
                pos = self._raw_text(name, tag)
                continue
            if name in _FOREIGN:
                self.foreign = True
            children += 1
            if children <= MAX_SELECT_CHILDREN:
                if name in _ONCE:
                    self.markup.append(b"<" + tag.group(1) + b">")
                elif name in FORMATTING:
                    self.markup.append(b"<rv-" + _capped(tag)[1:])
                else:
                    self.markup.append(_capped(tag))
                pos = tag.end()
                continue
            pos = _consumed(_SELECT_REST, data, pos)  # the rest of the select, dropped
            self.cost += MARKUP_COST  # (dropped bytes cost nothing but the step)
        return pos


def _consumed(pattern: re.Pattern[bytes], data: bytes, pos: int) -> int:
    """Where ``pattern`` (one that always matches, possibly empty) stops consuming ``data``."""
    found = pattern.match(data, pos)
    assert found is not None
    return found.end()


def _capped(tag: re.Match[bytes]) -> bytes:
    """A start tag with at most :data:`MAX_ATTRIBUTES` distinct attributes (the first of each
    name wins, as in the tokenizer)."""
    attributes = tag.group(2)
    if not attributes or len(attributes) < 2 * MAX_ATTRIBUTES:
        return tag.group(0)
    kept: list[bytes] = []
    names: set[bytes] = set()
    for found in ATTRIBUTE.finditer(attributes):
        name = found.group(1).lower()
        if name in names:
            continue
        names.add(name)
        kept.append(found.group(0).lstrip(b"\t\n\f\r /"))
        if len(kept) == MAX_ATTRIBUTES:
            break
    else:
        return tag.group(0)
    closing = b"/>" if tag.group(3).endswith(b"/>") else b">"
    return b"<" + tag.group(1) + b" " + b" ".join(kept) + closing


def _cap_names(segments: list[tuple[bool, bytes]]) -> list[tuple[bool, bytes]]:
    """Keep a big page under :data:`MAX_DISTINCT_NAMES` tag names and attribute names (counted
    in its markup: the attribute names exactly, the tag names with some text that looks like
    one)."""
    markup = b"".join(text for is_markup, text in segments if is_markup)
    # The sections joined by ">", which ends a tag's last attribute (an unquoted value runs on
    # over "/" and a name without a value would take the next tag's "=name" for its value)
    # and which no attribute starts with. Not by a separator such as " ": a long run of them
    # with no name after it would make each of ATTRIBUTE's attempts rescan the run.
    sections = b">".join(filter(None, ATTRIBUTE_SECTIONS.findall(markup)))
    if not _too_many(_TAG_NAMES.findall(markup)) and not _too_many(ATTRIBUTE.findall(sections)):
        return segments
    renamer = _Renamer()
    return [(is_markup, renamer.rewrite(text) if is_markup else text)
            for is_markup, text in segments]  # fmt: skip


def _too_many(names: list[bytes]) -> bool:
    """Whether ``names`` hold more than :data:`MAX_DISTINCT_NAMES` distinct names, ignoring
    case (the set is built in C; names are lower-cased only when there are that many)."""
    distinct = set(names)
    return len(distinct) > MAX_DISTINCT_NAMES and (
        len({name.lower() for name in distinct}) > MAX_DISTINCT_NAMES
    )


class _Renamer:
    """Rename tags and drop attributes whose names come after the first
    :data:`MAX_DISTINCT_NAMES` distinct ones (only ever run on a hostile page)."""

    def __init__(self) -> None:
        self.tags: set[bytes] = set()
        self.attributes: set[bytes] = set()

    def rewrite(self, markup: bytes) -> bytes:
        out: list[bytes] = []
        pos = 0
        end = len(markup)
        while pos < end:
            stop = _consumed(_PLAIN, markup, pos)
            if stop > pos:
                out.append(markup[pos:stop])
                pos = stop
                continue
            tag = START_TAG.match(markup, pos)
            if tag is None:
                end_tag = END_TAG.match(markup, pos)
                if end_tag is None:  # "</" and something else: a bogus comment
                    close = markup.find(b">", pos)
                    close = end if close < 0 else close + 1
                    out.append(markup[pos:close])
                    pos = close
                    continue
                out.append(b"</" + self._tag(end_tag.group(1)) + b">")
                pos = end_tag.end()
                continue
            kept = [
                attribute.group(0)
                for attribute in ATTRIBUTE.finditer(tag.group(2))
                if self._attribute(attribute.group(1))
            ]
            out.append(b"<" + self._tag(tag.group(1)) + b"".join(kept) + tag.group(3))
            pos = tag.end()
        return b"".join(out)

    def _tag(self, name: bytes) -> bytes:
        return name if _admitted(self.tags, name) else b"rv-x"

    def _attribute(self, name: bytes) -> bool:
        return _admitted(self.attributes, name)


def _admitted(seen: set[bytes], name: bytes) -> bool:
    """Whether ``name`` is among the first :data:`MAX_DISTINCT_NAMES` distinct names (ignoring
    case) met so far, ``seen`` being those; a new name is added while there is room."""
    lowered = name.lower()
    if lowered in seen:
        return True
    if len(seen) < MAX_DISTINCT_NAMES:
        seen.add(lowered)
        return True
    return False
