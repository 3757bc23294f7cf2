"""Render the compact element tree as markdown a model can read.

Why our own renderer: markdownify and html-to-markdown both render from their own parse of the
HTML, so using them would parse each page twice, and markdownify recurses per element (a page
nested 10,000 deep breaks it). This renderer walks the tree we already built, with an explicit
stack, and opens a *frame* only for elements whose markdown wraps their content (headings,
links, list items, blockquotes, code, table cells). Everything else just separates blocks.

Rules (docs/extraction.md lists them with examples): ATX headings; paragraphs split by one blank
line; ``-`` and ``1.`` lists, nested by indentation; pipe tables for data tables; fenced code
with the declared language; ``>`` blockquotes; ``[text](absolute URL)`` links, only to
``http``/``https``/``mailto`` (others are reduced to their text); ``![alt](absolute URL)`` images
only with alt text; whitespace collapsed outside code; nothing else of the HTML survives. Text
from the page is escaped (``_escape``) so it can never read as markdown syntax.

The work is linear in the tree: a heading inside a heading is rendered as part of the outer one,
and lists and quotes nested deeper than :data:`MAX_BLOCK_NESTING` are rendered as plain blocks,
because each level of a list or quote re-indents everything inside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._dom import HOLDS_TABLE, INLINE, Element, is_readable
from ._escape import escape_heading_end, escape_line_start, escape_text

_SPACES = re.compile(r"[ \t\n\r\f\v\u00a0\u2028\u2029]+")
_BREAK = "\x00"  # a <br> inside a paragraph; the parser strips NUL from the page's text
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]+)")
_BACKTICKS = re.compile(r"`+")
# Characters ``escape_text`` may escape: most text has none, and then needs no call.
_MAY_NEED_ESCAPES = re.compile(r"[\\`*_~\[\]<&]").search
#: Lists and quotes rendered with their markers nested at most this deep.
MAX_BLOCK_NESTING = 8
#: Steps of the walk between two calls of the renderer's ``check``.
CHECK_EVERY = 4096

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LIST_TAGS = frozenset({"ul", "ol", "menu"})
_CELL_TAGS = frozenset({"td", "th"})
# Inline elements that sites lay out as separate items (menus, flex rows) with no space between.
_SEPARATED = frozenset({"a", "span", "button", "label", "time"})

# Frame kinds.
_ROOT = 0
_HEADING = 1
_LINK = 2
_ITEM = 3
_LIST = 4
_QUOTE = 5
_PRE = 6
_CODE = 7
_TABLE = 8
_ROW = 9
_CELL = 10
_LINE_KINDS = frozenset({_HEADING, _LINK, _CODE, _CELL})
_NESTING_KINDS = frozenset({_LIST, _ITEM, _QUOTE})

Resolver = Callable[[str], "str | None"]


class _Frame:
    """Markdown collected for one wrapping element until it closes."""

    __slots__ = ("blocks", "data", "element", "inline", "kind", "nests", "tight")

    def __init__(self, kind: int, element: Element | None) -> None:
        self.kind = kind
        self.element = element
        self.nests = False  # counts towards MAX_BLOCK_NESTING
        self.blocks: list[str] = []
        self.tight: list[bool] = []  # True for list blocks, which join with a single newline
        self.inline: list[str] = []
        self.data: list[object] = []

    def flush(self) -> None:
        """End the current run of inline text as a paragraph."""
        if not self.inline:
            return
        text = _paragraph(self.inline)
        self.inline.clear()
        if text:
            self.blocks.append(text)
            self.tight.append(False)

    def add_block(self, text: str, tight: bool = False) -> None:
        self.flush()
        if text:
            self.blocks.append(text)
            self.tight.append(tight)

    def joined(self) -> str:
        """The blocks, one blank line apart; inside a list item a nested list follows its
        text on the next line, so the item stays one tight list entry."""
        self.flush()
        if self.kind != _ITEM:
            return "\n\n".join(self.blocks)
        parts: list[str] = []
        for text, tight in zip(self.blocks, self.tight, strict=True):
            if parts:
                parts.append("\n" if tight else "\n\n")
            parts.append(text)
        return "".join(parts)

    def one_line(self) -> str:
        self.flush()
        return _SPACES.sub(" ", " ".join(self.blocks)).strip()


def _paragraph(inline: list[str]) -> str:
    """A run of inline text as the paragraph it prints as (``""`` when it is only spaces)."""
    lines = []
    for line in _SPACES.sub(" ", "".join(inline)).split(_BREAK):
        line = line.strip()
        if line:
            lines.append(escape_line_start(line))
    return "\n".join(lines)


def _only_text(element: Element) -> str | None:
    """The whitespace-collapsed text of an element that holds nothing but text, else ``None``.

    Most links, table cells and headings are plain text; rendering them without a frame is
    what keeps a page of 100,000 table rows or links fast."""
    children = element.children
    if len(children) == 1:
        child = children[0]
        if type(child) is str:
            return _SPACES.sub(" ", child).strip()
        return None
    for child in children:
        if type(child) is not str:
            return None
    return _SPACES.sub(" ", "".join(children)).strip()  # type: ignore[arg-type]


def _fence(code: str) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
    return "`" * max(3, longest + 1)


def _inline_code(text: str) -> str:
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`"):
        return f"{ticks} {text} {ticks}"
    return f"{ticks}{text}{ticks}"


def _language(element: Element) -> str:
    """The language a ``<pre>`` declares on itself or on its ``<code>`` child."""
    candidates = [element]
    for child in element.children:
        if type(child) is Element and child.tag == "code":
            candidates.append(child)
    for candidate in candidates:
        classes = candidate.attrs.get("class")
        if classes:
            found = _LANGUAGE.search(classes)
            if found:
                return found.group(1)
    return ""


def _is_data_table(table: Element) -> bool:
    """A table of rows and columns (rendered as a pipe table), not one used for layout: no
    table inside it, and a row of two or more cells."""
    if table.flags & HOLDS_TABLE or table.attrs.get("role") in ("presentation", "none"):
        return False
    # The first row of two cells decides, so a table of 250,000 rows costs one row's scan.
    stack: list[Element] = [table]
    while stack:
        element = stack.pop()
        for child in element.children:
            if type(child) is not Element:
                continue
            if child.tag == "tr":
                cells = 0
                for cell in child.children:
                    if type(cell) is Element and cell.tag in _CELL_TAGS:
                        cells += 1
                        if cells == 2:
                            return True
            stack.append(child)
    return False


def _plain_row(row: Element) -> list[str] | None:
    """The cells of a row that holds only plain-text cells, else ``None``. Text directly in a
    row is not a cell and is dropped, as the row frame drops it."""
    cells: list[str] = []
    for child in row.children:
        if type(child) is str:
            continue
        assert isinstance(child, Element)
        if child.tag not in _CELL_TAGS:
            return None
        text = _only_text(child)
        if text is None:
            return None
        cells.append(_cell_text(escape_text(text)))
    return cells


def _cell_text(text: str) -> str:
    return text.replace("|", "\\|")


def _pipe_table(rows: list[list[str]], width: int = 0) -> str:
    """Rows as a pipe table, each padded to the widest row (or to ``width`` when wider: the
    width of rows that were never rendered, when a rendering stops inside a table)."""
    width = max(width, max(len(row) for row in rows))
    lines = []
    for number, row in enumerate(rows):
        cells = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if number == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)


def _list_block(items: list[str], ordered: bool, start: int) -> str:
    lines: list[str] = []
    number = start
    for item in items:
        marker = f"{number}. " if ordered else "- "
        number += 1
        pad = " " * len(marker)
        for position, line in enumerate(item.split("\n")):
            if position == 0:
                lines.append(marker + line)
            else:
                lines.append(pad + line if line else "")
    return "\n".join(lines)


def _list_start(element: Element) -> int:
    start = element.attrs.get("start")
    if start and start.strip().isdigit() and len(start.strip()) < 10:
        return int(start.strip())
    return 1


class Renderer:
    """Turns chosen subtrees into one markdown string.

    ``resolve`` maps an ``href``/``src`` to the absolute URL to print, or ``None`` to print the
    text alone. ``skip`` says which elements (with their subtrees) to leave out.
    """

    def __init__(
        self,
        resolve: Resolver,
        skip: Callable[[Element], bool] | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        self._resolve = resolve
        self._skip = skip
        self._check = check  # called every CHECK_EVERY steps; may raise to abandon the render
        self._frames: list[_Frame] = [_Frame(_ROOT, None)]
        self._pre_depth = 0
        self._links = 0  # link frames open: text inside escapes "]" as well
        self._headings = 0  # heading frames open: a heading inside one is part of its line
        self._nesting = 0  # list, item and quote frames open
        self._tables = 0  # data tables open, so cells know where to go
        self.skipped_chars = 0  # text left out by ``skip``, for the page-kind decision
        self.readable_chars = 0  # text rendered from readable blocks, for the same decision
        self._count_readable = skip is not None
        self._limit: int | None = None
        self._summed_blocks = 0  # root blocks already counted in _blocks_chars
        self._blocks_chars = 0
        self._summed_inline = 0  # root inline pieces already counted in _inline_chars
        self._inline_chars = 0
        self._recheck_at = 0  # _inline_chars at which the exact check is next worth running
        self._stopped = False
        self._counted_table = -1  # the table whose rows _rows_chars counts
        self._summed_rows = 0  # rows of that table already counted in _rows_chars
        self._rows_chars = 0
        self._whole_tables: set[int] = set()  # tables whose rest is not rows alone

    def render(self, roots: list[Element], limit: int | None = None) -> str:
        """The markdown of ``roots``. With ``limit``, the walk may stop once the text is sure
        to be longer than ``limit`` characters: the first ``limit + 1`` characters are then
        exactly those of the whole rendering, and the text is cut shortly after them. Only for
        a rendering without ``skip``, whose counts nothing reads."""
        assert limit is None or self._skip is None
        self._limit = limit
        for root in roots:
            self._walk(root)
            if self._stopped:
                break
        while len(self._frames) > 1:  # unbalanced only if a walk stopped early; be safe
            self._frames.pop()
        text = self._frames[0].joined()
        return text.strip()

    # The walk -------------------------------------------------------------------------------

    def _walk(self, root: Element) -> None:
        skip = self._skip
        if skip is not None and skip(root):
            self.skipped_chars += root.chars
            return
        elements: list[Element] = [root]
        positions: list[int] = [0]
        count_readable = self._count_readable
        if count_readable and is_readable(root):
            self.readable_chars += root.own_chars
        if not self._enter(root):  # a root of plain text is rendered whole by ``_enter``
            self._leave(root)
            return
        limit = self._limit
        frames = self._frames
        check = self._check
        steps = 0
        walked = 0
        while elements:
            if check is not None:
                walked += 1
                if not walked % CHECK_EVERY:
                    check()
            if limit is not None and len(frames) <= 2:
                steps += 1
                if not steps & 255:
                    if len(frames) == 1:
                        if self._enough(limit):
                            self._stopped = True
                            return
                    elif self._enough_in_table(limit, elements, positions):
                        self._stopped = True
                        return
            element = elements[-1]
            position = positions[-1]
            children = element.children
            if position < len(children):
                positions[-1] = position + 1
                child = children[position]
                if type(child) is str:
                    self._text(child)
                    continue
                assert isinstance(child, Element)
                if skip is not None and skip(child):
                    self.skipped_chars += child.chars
                    continue
                if position and child.tag in _SEPARATED and not self._pre_depth:
                    before = children[position - 1]
                    if type(before) is Element and before.tag in _SEPARATED:
                        self._separate()
                if count_readable and is_readable(child):
                    self.readable_chars += child.own_chars
                if self._enter(child):
                    elements.append(child)
                    positions.append(0)
                else:
                    self._leave(child)
            else:
                elements.pop()
                positions.pop()
                self._leave(element)

    # Past the limit ------------------------------------------------------------------------

    #: Characters beyond ``limit`` the stop waits for: the end of a paragraph cut mid-run may
    #: differ from the whole run's (a trailing space, an escape at a line start), never more.
    _MARGIN = 64

    def _enough(self, limit: int) -> bool:
        """Whether the text so far already runs past ``limit``. Only called with the root frame
        alone open: everything rendered since is then appended after it, so its prefix is the
        final text's prefix. When the pending inline run is needed to get there, it is ended
        as a paragraph here (the walk stops right after)."""
        root = self._frames[0]
        self._count_root_blocks()
        inline = root.inline
        if len(inline) < self._summed_inline:  # the run was ended: start counting the next one
            self._summed_inline = self._inline_chars = self._recheck_at = 0
        for piece in inline[self._summed_inline :]:
            self._inline_chars += len(piece)
        self._summed_inline = len(inline)
        # The separator after the last block counts only once the paragraph below is added.
        wanted = self._wanted(limit)
        if self._blocks_chars - 2 >= wanted:
            return True
        if not inline or self._blocks_chars + 2 * len(inline) + self._inline_chars < wanted:
            return False  # even with nothing collapsed, the text is not long enough yet
        if self._inline_chars < self._recheck_at:
            return False  # checked at half this size: wait until the run doubles
        self._recheck_at = 2 * self._inline_chars
        if self._blocks_chars + len(_paragraph(inline)) < wanted:
            return False
        root.flush()
        return True

    def _enough_in_table(self, limit: int, elements: list[Element], positions: list[int]) -> bool:
        """:meth:`_enough` for a walk inside one big data table, the root frame's only open
        frame, between two rows. The rows so far are a prefix of the table's text when what is
        left of the table is rows alone (no caption or other text, which prints before the
        table) and the table's width is known, so both are checked over the rest of the table
        before stopping; a table that fails the check is never checked again."""
        table = self._frames[1]
        element = table.element
        if table.kind != _TABLE or element is None or element.index in self._whole_tables:
            return False
        if element.index != self._counted_table:
            self._counted_table = element.index
            self._summed_rows = self._rows_chars = 0
        rows = table.data
        for row in rows[self._summed_rows :]:
            if isinstance(row, list):  # "| a | b |" and its newline
                self._rows_chars += sum(map(len, row)) + 3 * len(row) + 2
        self._summed_rows = len(rows)
        root = self._frames[0]
        self._count_root_blocks()
        # Lower bounds on both sides of the table's start: no separator line, no padding, no
        # pending paragraph counted. Not enough even so: keep rendering.
        if self._blocks_chars + self._rows_chars < self._wanted(limit):
            return False
        width = self._rest_of_table_width(element, elements, positions)
        if width is None or table.blocks or _paragraph(table.inline):
            self._whole_tables.add(element.index)
            return False
        finished = [row for row in rows if isinstance(row, list)]
        if not finished:
            return False
        self._frames.pop()
        self._tables -= 1
        root.add_block(_pipe_table(finished, width))
        return True

    def _wanted(self, limit: int) -> int:
        """Characters the root's blocks must reach, counted as ``_blocks_chars`` counts them,
        before the walk may stop: the final text is the blocks two newlines apart and stripped,
        so the first block's leading spaces do not count."""
        blocks = self._frames[0].blocks
        lead = len(blocks[0]) - len(blocks[0].lstrip()) if blocks else 0
        return limit + self._MARGIN + lead

    def _count_root_blocks(self) -> None:
        """Bring ``_blocks_chars`` up to date: the root's blocks with a separator after each."""
        blocks = self._frames[0].blocks
        for block in blocks[self._summed_blocks :]:
            self._blocks_chars += len(block) + 2
        self._summed_blocks = len(blocks)

    @staticmethod
    def _rest_of_table_width(
        table: Element, elements: list[Element], positions: list[int]
    ) -> int | None:
        """The widest row of what the walk has not reached in ``table``, or ``None`` when
        anything other than rows of cells (and spaces between them) is left."""
        start = len(elements) - 1
        while start >= 0 and elements[start] is not table:
            start -= 1
        if start < 0:
            return None
        widest = 0
        pending: list[Element | str] = []
        for depth in range(start, len(elements)):
            pending.extend(elements[depth].children[positions[depth] :])
        while pending:
            child = pending.pop()
            if type(child) is str:
                if child.strip():
                    return None
                continue
            assert isinstance(child, Element)
            if child.tag in ("tbody", "thead", "tfoot"):
                pending.extend(child.children)
            elif child.tag == "tr":
                cells = 0
                for cell in child.children:
                    if type(cell) is Element:
                        if cell.tag not in _CELL_TAGS:
                            return None
                        cells += 1
                widest = max(widest, cells)
            else:
                return None
        return widest

    def _separate(self) -> None:
        """Keep two adjacent inline elements (menu links, flex items) from gluing words."""
        inline = self._frames[-1].inline
        if inline and inline[-1] and not inline[-1][-1].isspace():
            inline.append(" ")

    def _text(self, text: str) -> None:
        if not self._pre_depth and _MAY_NEED_ESCAPES(text) is not None:
            text = escape_text(text, self._links > 0)
        self._frames[-1].inline.append(text)  # whitespace is collapsed per paragraph

    def _escaped(self, text: str) -> str:
        """Collapsed page text (from :func:`_only_text`) escaped for where it goes."""
        return escape_text(text, self._links > 0)

    def _push(self, kind: int, element: Element) -> None:
        frame = _Frame(kind, element)
        if kind == _LINK:
            self._links += 1
        elif kind == _HEADING:
            self._headings += 1
        elif kind in _NESTING_KINDS and (kind != _ITEM or self._frames[-1].kind != _LIST):
            # a list or quote indents what it holds; an item only when it is not in a list
            frame.nests = True
            self._nesting += 1
        self._frames.append(frame)

    def _pop(self) -> _Frame:
        frame = self._frames.pop()
        kind = frame.kind
        if kind == _LINK:
            self._links -= 1
        elif kind == _HEADING:
            self._headings -= 1
        elif frame.nests:
            self._nesting -= 1
        return frame

    def _enter(self, element: Element) -> bool:
        """Open ``element``; return whether to walk its children."""
        tag = element.tag
        frame = self._frames[-1]
        if self._pre_depth:
            if tag == "br":
                frame.inline.append("\n")
            elif tag in INLINE:
                pass
            elif (
                tag in ("p", "div", "li", "tr")
                and frame.inline
                and not frame.inline[-1].endswith("\n")
            ):
                frame.inline.append("\n")
            return True
        if tag in INLINE:
            if tag == "a":
                text = _only_text(element)
                if text is None:
                    self._push(_LINK, element)
                else:  # the common case, a link around plain text: no frame needed
                    if text:
                        href = element.attrs.get("href")
                        url = self._resolve(href) if href else None
                        if url is None:
                            frame.inline.append(self._escaped(text))
                        else:
                            _append_link(
                                frame.inline, f"[{escape_text(text, True)}]({url})"
                            )
                    return False
            elif tag == "br":
                frame.inline.append(_BREAK)
                return False
            elif tag == "img":
                self._image(element, frame)
                return False
            elif tag in ("code", "kbd", "samp", "tt"):
                self._push(_CODE, element)
                self._pre_depth += 1
            return True
        if tag in _HEADINGS:
            text = _only_text(element)
            if text is None:
                if self._headings:  # a heading inside a heading is part of its line
                    return True
                self._push(_HEADING, element)
            else:
                if text:
                    text = self._escaped(text)
                    if frame.kind in _LINE_KINDS:
                        frame.inline.append(" " + text + " ")
                    else:
                        frame.add_block("#" * _HEADINGS[tag] + " " + escape_heading_end(text))
                return False
        elif tag in _LIST_TAGS:
            frame.flush()
            if self._nesting < MAX_BLOCK_NESTING:
                self._push(_LIST, element)
        elif tag == "li":
            if frame.kind == _LIST:
                text = _only_text(element)
                if text is not None:  # a plain-text item, the common case: no frame needed
                    if text:
                        frame.data.append(escape_line_start(self._escaped(text)))
                    return False
            if frame.kind == _LIST or self._nesting < MAX_BLOCK_NESTING:
                self._push(_ITEM, element)
            else:
                frame.flush()
        elif tag == "blockquote":
            if self._nesting < MAX_BLOCK_NESTING:
                self._push(_QUOTE, element)
            else:
                frame.flush()
        elif tag in ("pre", "xmp", "listing", "plaintext"):
            self._push(_PRE, element)
            self._pre_depth += 1
        elif tag == "table":
            if _is_data_table(element):
                self._push(_TABLE, element)
                self._tables += 1
            else:
                frame.flush()
        elif tag == "tr" and frame.kind == _TABLE:
            if self._skip is None:  # the whole page: a row of plain-text cells in one step
                cells = _plain_row(element)
                if cells is not None:
                    if cells:
                        frame.data.append(cells)
                    return False
            self._push(_ROW, element)
        elif tag in _CELL_TAGS and frame.kind == _ROW:
            text = _only_text(element)
            if text is None:
                self._push(_CELL, element)
            else:
                frame.data.append(_cell_text(self._escaped(text)))
                return False
        elif tag == "hr":
            frame.add_block("---")
            return False
        else:
            frame.flush()
            text = _only_text(element)
            if text is not None:  # a plain-text paragraph or cell: one block, no walk
                if text:
                    frame.blocks.append(escape_line_start(self._escaped(text)))
                    frame.tight.append(False)
                return False
        return True

    def _leave(self, element: Element) -> None:
        frame = self._frames[-1]
        if frame.element is not element:
            # A plain-text list item (no frame of its own) leaves the list's stray text alone.
            if element.tag not in INLINE and not self._pre_depth and element.tag != "li":
                frame.flush()
            return
        self._pop()
        parent = self._frames[-1]
        kind = frame.kind
        if kind == _LINK:
            self._link(frame, parent)
        elif kind == _CODE:
            self._pre_depth -= 1
            text = "".join(frame.inline)
            if self._pre_depth:
                parent.inline.append(text)
            else:
                parent.inline.append(_inline_code(_SPACES.sub(" ", text).strip()))
        elif kind == _HEADING:
            text = frame.one_line()
            if text:
                if parent.kind in _LINE_KINDS:
                    parent.inline.append(" " + text + " ")
                else:
                    parent.add_block("#" * _HEADINGS[element.tag] + " " + escape_heading_end(text))
        elif kind == _ITEM:
            text = frame.joined()
            if parent.kind == _LIST:
                if text:
                    parent.data.append(text)
            elif text:
                parent.add_block(_list_block([text], False, 1), tight=True)
        elif kind == _LIST:
            items = [item for item in frame.data if isinstance(item, str)]
            frame.flush()
            items.extend(frame.blocks)  # stray content directly inside the list
            if items:
                ordered = element.tag == "ol"
                parent.add_block(_list_block(items, ordered, _list_start(element)), tight=True)
        elif kind == _QUOTE:
            text = frame.joined()
            if text:
                parent.add_block(
                    "\n".join("> " + line if line else ">" for line in text.split("\n"))
                )
        elif kind == _PRE:
            self._pre_depth -= 1
            code = "".join(frame.inline).strip("\n")
            if code.strip():
                fence = _fence(code)
                parent.add_block(f"{fence}{_language(element)}\n{code}\n{fence}")
        elif kind == _CELL:
            parent.data.append(_cell_text(frame.one_line()))
        elif kind == _ROW:
            frame.flush()
            cells = [cell for cell in frame.data if isinstance(cell, str)]
            if cells:
                parent.data.append(cells)
        elif kind == _TABLE:
            self._tables -= 1
            rows = [row for row in frame.data if isinstance(row, list)]
            caption = frame.joined()
            if caption:
                parent.add_block(caption)
            if rows:
                parent.add_block(_pipe_table(rows))

    def _link(self, frame: _Frame, parent: _Frame) -> None:
        wraps_blocks = bool(frame.blocks)
        text = frame.one_line()
        if not text:
            return
        href = frame.element.attrs.get("href") if frame.element is not None else None
        url = self._resolve(href) if href else None
        markdown = text if url is None else f"[{text}]({url})"
        if wraps_blocks and parent.kind not in _LINE_KINDS:
            parent.add_block(markdown)  # a link wrapping blocks (a card) stands on its own
        elif url is None:
            parent.inline.append(markdown)
        else:
            _append_link(parent.inline, markdown)

    def _image(self, element: Element, frame: _Frame) -> None:
        alt = element.attrs.get("alt")
        if not alt:
            return
        alt = _SPACES.sub(" ", alt).strip()
        if not alt:
            return
        src = element.attrs.get("src")
        if not src or src.startswith("data:"):
            src = element.attrs.get("data-src") or src
        url = self._resolve(src) if src and not src.startswith("data:") else None
        if url is None or url[:7].lower() == "mailto:":
            return
        _append_link(frame.inline, f"![{escape_text(alt, True)}]({url})")


def _append_link(inline: list[str], markdown: str) -> None:
    """Append a link or image, escaping a ``!`` of page text right before it, which would turn a
    link into an image (or an image into ``!!``)."""
    for index in range(len(inline) - 1, -1, -1):
        piece = inline[index]
        if piece:
            if piece[-1] == "!" and (len(piece) < 2 or piece[-2] != "\\"):
                inline[index] = piece[:-1] + "\\!"
            break
    inline.append(markdown)
