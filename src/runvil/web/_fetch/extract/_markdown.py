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

Output is bounded by what the caller can show (docs/reliability.md, "Rendering limits"): with a
``cap``, no frame keeps more than about ``cap`` characters of markdown, nothing it makes (a pipe
table padded to its widest row, a list's indentation, a quote's ``>`` on every line) is built
past ``cap``, and a frame that is full is not walked any further. Text cut off that way could
never be among the first ``cap`` characters of the result: every later step only inserts
characters before or inside it, or (inside a cell, heading or link) collapses whitespace, which
is why there the cut counts characters that are not whitespace.
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
# What may vanish from text whose whitespace is collapsed: whitespace, and a cell's line breaks.
_NOT_SHOWN = re.compile(r"[\s\x00]+")
_ASCII_NOT_SHOWN = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x00"  # the same, in ASCII (``str.isspace``)
_CUT_CHUNK = 64 * 1024
# Characters ``escape_text`` may escape: most text has none, and then needs no call.
_MAY_NEED_ESCAPES = re.compile(r"[\\`*_~\[\]<&]").search
#: Lists and quotes rendered with their markers nested at most this deep.
MAX_BLOCK_NESTING = 8
#: Steps of the walk between two calls of the renderer's ``check``.
CHECK_EVERY = 4096
#: Rows of a pipe table, or lines of a list or quote, made between two calls of ``check``.
CHECK_LINES = 1024

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
# Frames whose markdown is one line: what they hold has its whitespace collapsed.
_COLLAPSING_KINDS = frozenset({_HEADING, _LINK, _CELL})
# Frames whose markdown is what they hold in order, so once they hold ``cap`` characters the
# rest of their element can never show: the walk leaves it out.
_PREFIX_KINDS = frozenset({_HEADING, _LINK, _ITEM, _QUOTE, _CELL})

Resolver = Callable[[str], "str | None"]


class _Frame:
    """Markdown collected for one wrapping element until it closes."""

    __slots__ = (
        "blocks", "cap", "collapses", "data", "data_full", "data_size", "element", "full",
        "inline", "inline_size", "kind", "nests", "size", "tight", "width"
    )  # fmt: skip

    def __init__(
        self, kind: int, element: Element | None, cap: int | None = None, collapses: bool = False
    ) -> None:
        self.kind = kind
        self.element = element
        self.nests = False  # counts towards MAX_BLOCK_NESTING
        self.blocks: list[str] = []
        self.tight: list[bool] = []  # True for list blocks, which join with a single newline
        self.inline: list[str] = []
        self.data: list[object] = []
        self.width = 0  # a table's widest row, rows left out included
        # The output bound (``None``: none). ``collapses``: whitespace in what this frame holds
        # is collapsed later (by it or a frame it is in), so only other characters count.
        self.cap = cap
        self.collapses = collapses
        self.size = 0  # characters of the blocks kept, each with its separator
        self.full = False  # blocks reached ``cap``: later ones are left out
        self.data_size = 0  # the same for the list items or table rows kept
        self.data_full = False
        self.inline_size = 0  # characters of other frames' markdown in the inline run

    def flush(self) -> None:
        """End the current run of inline text as a paragraph."""
        if not self.inline:
            return
        self.inline_size = 0
        if self.full:  # it could never show
            self.inline.clear()
            return
        text = _paragraph(self.inline)
        self.inline.clear()
        if text:
            self.add_block(text)

    def add_block(self, text: str, tight: bool = False) -> None:
        self.flush()
        if text and self._keeps(text):
            self.blocks.append(_cut(text, self.cap, self.collapses))
            self.tight.append(tight)

    def _keeps(self, text: str) -> bool:
        """Whether a block still goes in: it does until the blocks reach ``cap``."""
        cap = self.cap
        if cap is None:
            return True
        if self.full:
            return False
        # Counted with one separator, the fewest (a tight list block's newline).
        self.size += _measure(text, self.collapses) + (0 if self.collapses else 1)
        if self.size >= cap:
            self.full = True
        return True

    def takes_inline(self, text: str) -> bool:
        """Whether markdown a closed frame made (a link, a heading inside a line) still goes
        into the inline run: until the frame holds ``cap`` characters. Page text itself is
        not counted here: it is never more than the page."""
        cap = self.cap
        if cap is None:
            return True
        if self.saturated():
            return False
        self.inline_size += _measure(text, True)  # the run's whitespace is collapsed
        return True

    def saturated(self) -> bool:
        """Whether everything added from now on would print past ``cap`` characters."""
        cap = self.cap
        return cap is not None and (self.full or self.size + self.inline_size >= cap)

    def add_item(self, text: str) -> None:
        """A list item (they print before the list's stray blocks, so they count apart)."""
        cap = self.cap
        if cap is not None:
            if self.data_full:
                return
            # "- " and the newline, or only "-" where whitespace collapses
            self.data_size += _measure(text, self.collapses) + (1 if self.collapses else 3)
            if self.data_size >= cap:
                self.data_full = True
            text = _cut(text, cap, self.collapses)
        self.data.append(text)

    def add_row(self, cells: list[str]) -> None:
        """A table row; past ``cap`` only its width is kept (it still pads the rows kept)."""
        if len(cells) > self.width:
            self.width = len(cells)
        cap = self.cap
        if cap is not None:
            if self.data_full:
                return
            if self.collapses:
                self.data_size += len(cells) + 1 + sum(_measure(cell, True) for cell in cells)
            else:  # "| a | b |" and its newline
                self.data_size += sum(map(len, cells)) + 3 * len(cells) + 2
            if self.data_size >= cap:
                self.data_full = True
        self.data.append(cells)

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


def _pipe_table(
    rows: list[list[str]],
    width: int = 0,
    cap: int | None = None,
    collapses: bool = False,
    check: Callable[[], None] | None = None,
) -> str:
    """Rows as a pipe table, each padded to the widest row (or to ``width`` when wider: rows
    never rendered or left out still count). With ``cap``, the table is made only until it
    holds more than ``cap`` characters (counted as :func:`_measure` counts): padding every row
    of a ragged table to its widest is width times rows, most of which nobody would see."""
    width = max(width, max(len(row) for row in rows))
    if cap is None:
        lines = []
        for number, row in enumerate(rows):
            cells = row + [""] * (width - len(row))
            lines.append("| " + " | ".join(cells) + " |")
            if number == 0:
                lines.append("|" + "---|" * width)
        return "\n".join(lines)
    parts: list[str] = []
    made = 0
    newline = 0 if collapses else 1  # a line break shows only where it is not collapsed
    for number, row in enumerate(rows):
        if number and check is not None and not number % CHECK_LINES:
            check()
        line = _table_line(row, width, cap - made, collapses)
        parts.append(line)
        made += _measure(line, collapses) + newline
        if number == 0 and made <= cap:
            rule = "|" + "---|" * min(width, (cap - made) // 4 + 1)
            parts.append(rule)
            made += len(rule) + newline
        if made > cap:
            break
    return "\n".join(parts)


def _table_line(row: list[str], width: int, room: int, collapses: bool) -> str:
    """``row`` as one line of a pipe table padded to ``width`` cells, or a prefix of it that
    holds more than ``room`` characters (each cell shows at least its ``|``)."""
    each = 1 if collapses else 3  # what a cell adds besides its text: " | ", or only "|"
    if len(row) * each > room:
        taken: list[str] = []
        used = 0
        for cell in row:
            taken.append(cell)
            used += _measure(cell, collapses) + each
            if used > room:
                return "| " + " | ".join(taken)
        row = taken
    line = "| " + " | ".join(row) + " |"
    padding = width - len(row)
    if padding > 0:
        line += "  |" * min(padding, max(0, room - _measure(line, collapses)) // each + 1)
    return line


def _list_block(
    items: list[str],
    ordered: bool,
    start: int,
    cap: int | None = None,
    collapses: bool = False,
    check: Callable[[], None] | None = None,
) -> str:
    """Items as a list, every line after an item's first indented under its marker; with
    ``cap``, only until the list holds more than ``cap`` characters (the indentation repeats on
    every line of every nested list)."""
    lines: list[str] = []
    number = start
    made = 0
    newline = 0 if collapses else 1  # a line break shows only where it is not collapsed
    for item in items:
        marker = f"{number}. " if ordered else "- "
        number += 1
        pad = " " * len(marker)
        for position, line in enumerate(item.split("\n")):
            if position == 0:
                line = marker + line
            elif line:
                line = pad + line
            lines.append(line)
            if cap is not None:
                made += _measure(line, collapses) + newline
                if made > cap:
                    return "\n".join(lines)
                if check is not None and not len(lines) % CHECK_LINES:
                    check()
    return "\n".join(lines)


def _quoted(text: str, cap: int | None = None, collapses: bool = False) -> str:
    """``text`` as a blockquote, ``>`` before every line; with ``cap``, of ``text``'s first
    ``cap`` characters only (each level of a nested quote adds a ``>`` to every line, and a
    prefix never makes what it prefixes shorter)."""
    text = _cut(text, cap, collapses)
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def _measure(text: str, collapses: bool) -> int:
    """Characters of ``text`` that are sure to show: all of them, or where whitespace will be
    collapsed (and line breaks of a cell dropped), those that are not whitespace."""
    if not collapses:
        return len(text)
    if text.isascii():  # a flag of the string: counting its few spaces is a fast scan each
        return len(text) - sum(map(text.count, _ASCII_NOT_SHOWN))
    return len(_NOT_SHOWN.sub("", text))


def _cut(text: str, cap: int | None, collapses: bool) -> str:
    """``text`` cut after its first ``cap`` characters (counted as :func:`_measure` counts):
    nothing after them could be among the first ``cap`` characters of the result."""
    if cap is None or len(text) <= cap:
        return text
    if not collapses:
        return text[:cap]
    # The shortest prefix that holds ``cap`` of them: counted a chunk at a time up to the chunk
    # that reaches ``cap``, then bisected inside it (a counted regex repeat would instead keep
    # a backtracking record per character counted).
    shown = 0
    for start in range(0, len(text), _CUT_CHUNK):
        chunk = text[start : start + _CUT_CHUNK]
        in_chunk = _measure(chunk, True)
        if shown + in_chunk >= cap:
            low, high = 1, len(chunk)
            while low < high:
                middle = (low + high) // 2
                if shown + _measure(chunk[:middle], True) >= cap:
                    high = middle
                else:
                    low = middle + 1
            return text[: start + low]
        shown += in_chunk
    return text


def _list_start(element: Element) -> int:
    start = element.attrs.get("start")
    if start and start.strip().isdigit() and len(start.strip()) < 10:
        return int(start.strip())
    return 1


class Renderer:
    """Turns chosen subtrees into one markdown string.

    ``resolve`` maps an ``href``/``src`` to the absolute URL to print, or ``None`` to print the
    text alone. ``skip`` says which elements (with their subtrees) to leave out. ``check`` is
    called every few thousand steps and may raise to abandon the rendering. With ``cap``, the
    first ``cap`` characters of the markdown are exactly those of a rendering without it, and it
    is at most about three times ``cap`` long (module notes).
    """

    def __init__(
        self,
        resolve: Resolver,
        skip: Callable[[Element], bool] | None = None,
        check: Callable[[], None] | None = None,
        cap: int | None = None,
    ) -> None:
        self._resolve = resolve
        self._skip = skip
        self._check = check  # called every CHECK_EVERY steps; may raise to abandon the render
        self._cap = cap  # the output bound (module notes); None: render everything
        self._frames: list[_Frame] = [_Frame(_ROOT, None, cap)]
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
        cap = self._cap
        frames = self._frames
        check = self._check
        steps = 0
        walked = 0
        full_checks = 0
        while elements:
            if check is not None:
                walked += 1
                if not walked % CHECK_EVERY:
                    check()
            if cap is not None:
                full_checks += 1
                if not full_checks & 255:
                    if frames[0].full:  # the rest could never show
                        self._stopped = True
                        return
                    self._leave_full_frame(elements, positions)
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

    def _leave_full_frame(self, elements: list[Element], positions: list[int]) -> None:
        """Skip the rest of the outermost open element whose frame is full: nothing more of it
        could show. Its open descendants close as usual (their markdown is left out)."""
        frames = self._frames
        for index in range(1, len(frames)):
            frame = frames[index]
            if not self._is_done(frame, elements, positions):
                continue
            target = frame.element
            while elements[-1] is not target:
                positions.pop()
                self._leave(elements.pop())
            positions[-1] = len(target.children)
            return

    def _is_done(self, frame: _Frame, elements: list[Element], positions: list[int]) -> bool:
        """Whether ``frame`` holds all of its markdown that could show: a frame printed in
        the order it was filled, once full; a list, once its items are (its stray blocks
        print after them); a table, once its rows are and what is left of it is rows alone
        (a caption prints first, and every row counts towards the width)."""
        kind = frame.kind
        if kind in _PREFIX_KINDS:
            return frame.saturated()
        if kind == _LIST:
            return frame.data_full
        if kind != _TABLE or not frame.data_full or self._frames[-1] is not frame:
            return False
        element = frame.element
        if element is None or element.index in self._whole_tables:
            return False
        width = self._rest_of_table_width(element, elements, positions)
        if width is None:
            self._whole_tables.add(element.index)
            return False
        frame.width = max(frame.width, width)
        return True

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
        width = max(width, table.width)
        root.add_block(_pipe_table(finished, width, self._cap, False, self._check))
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
        parent = self._frames[-1]
        frame = _Frame(kind, element, self._cap, parent.collapses or kind in _COLLAPSING_KINDS)
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

    # Opening and closing elements ---------------------------------------------------------
    #
    # Each tag has its opener (:data:`_OPENERS`, after the class) and each kind of frame its
    # closer (:data:`_CLOSERS`): a rule for one tag is changed in one small method. An opener
    # writes what it can at once (a plain-text paragraph, heading, item or link is rendered
    # whole, with no frame and no walk), or pushes a frame that its closer turns into markdown
    # when the element ends; it returns whether to walk the element's children.

    def _enter(self, element: Element) -> bool:
        """Open ``element``; return whether to walk its children."""
        if self._pre_depth:
            return self._open_in_pre(element)
        return _OPENERS.get(element.tag, Renderer._open_block)(self, element, self._frames[-1])

    def _leave(self, element: Element) -> None:
        """Close ``element``: its frame's markdown goes to the frame around it."""
        frame = self._frames[-1]
        if frame.element is not element:
            # A plain-text list item (no frame of its own) leaves the list's stray text alone.
            if element.tag not in INLINE and not self._pre_depth and element.tag != "li":
                frame.flush()
            return
        self._pop()
        _CLOSERS[frame.kind](self, element, frame, self._frames[-1])

    def _open_in_pre(self, element: Element) -> bool:
        """Inside preformatted text only line breaks count: a ``<br>``, and a block that starts
        a new line."""
        tag = element.tag
        inline = self._frames[-1].inline
        if tag == "br":
            inline.append("\n")
        elif tag in INLINE:
            pass
        elif tag in ("p", "div", "li", "tr") and inline and not inline[-1].endswith("\n"):
            inline.append("\n")
        return True

    def _open_inline(self, element: Element, frame: _Frame) -> bool:
        """An inline element with no markdown of its own: its text joins the line."""
        return True

    def _open_link(self, element: Element, frame: _Frame) -> bool:
        text = _only_text(element)
        if text is None:
            self._push(_LINK, element)
            return True
        if text:  # the common case, a link around plain text: no frame needed
            href = element.attrs.get("href")
            url = self._resolve(href) if href else None
            if url is None:
                frame.inline.append(self._escaped(text))
            else:
                _append_link(frame.inline, f"[{escape_text(text, True)}]({url})")
        return False

    def _open_break(self, element: Element, frame: _Frame) -> bool:
        frame.inline.append(_BREAK)
        return False

    def _open_image(self, element: Element, frame: _Frame) -> bool:
        self._image(element, frame)
        return False

    def _open_code(self, element: Element, frame: _Frame) -> bool:
        self._push(_CODE, element)
        self._pre_depth += 1
        return True

    def _open_heading(self, element: Element, frame: _Frame) -> bool:
        text = _only_text(element)
        if text is None:
            if not self._headings:  # a heading inside a heading is part of its line
                self._push(_HEADING, element)
            return True
        if text:
            text = self._escaped(text)
            if frame.kind in _LINE_KINDS:
                frame.inline.append(" " + text + " ")
            else:
                frame.add_block("#" * _HEADINGS[element.tag] + " " + escape_heading_end(text))
        return False

    def _open_list(self, element: Element, frame: _Frame) -> bool:
        frame.flush()
        if self._nesting < MAX_BLOCK_NESTING:
            self._push(_LIST, element)
        return True

    def _open_item(self, element: Element, frame: _Frame) -> bool:
        if frame.kind == _LIST:
            text = _only_text(element)
            if text is not None:  # a plain-text item, the common case: no frame needed
                if text:
                    frame.add_item(escape_line_start(self._escaped(text)))
                return False
        if frame.kind == _LIST or self._nesting < MAX_BLOCK_NESTING:
            self._push(_ITEM, element)
        else:
            frame.flush()
        return True

    def _open_quote(self, element: Element, frame: _Frame) -> bool:
        if self._nesting < MAX_BLOCK_NESTING:
            self._push(_QUOTE, element)
        else:
            frame.flush()
        return True

    def _open_pre(self, element: Element, frame: _Frame) -> bool:
        self._push(_PRE, element)
        self._pre_depth += 1
        return True

    def _open_table(self, element: Element, frame: _Frame) -> bool:
        if _is_data_table(element):
            self._push(_TABLE, element)
            self._tables += 1
        else:
            frame.flush()
        return True

    def _open_row(self, element: Element, frame: _Frame) -> bool:
        if frame.kind != _TABLE:
            return self._open_block(element, frame)  # a row outside a data table
        if self._skip is None:  # the whole page: a row of plain-text cells in one step
            cells = _plain_row(element)
            if cells is not None:
                if cells:
                    frame.add_row(cells)
                return False
        self._push(_ROW, element)
        return True

    def _open_cell(self, element: Element, frame: _Frame) -> bool:
        if frame.kind != _ROW:
            return self._open_block(element, frame)  # a cell outside a data table's row
        text = _only_text(element)
        if text is None:
            self._push(_CELL, element)
            return True
        frame.data.append(_cut(_cell_text(self._escaped(text)), self._cap, frame.collapses))
        return False

    def _open_rule(self, element: Element, frame: _Frame) -> bool:
        frame.add_block("---")
        return False

    def _open_block(self, element: Element, frame: _Frame) -> bool:
        """Any other block: it ends the paragraph before it, and a plain-text one is a
        paragraph of its own, rendered with no walk."""
        frame.flush()
        text = _only_text(element)
        if text is None:
            return True
        if text:
            frame.add_block(escape_line_start(self._escaped(text)))
        return False

    def _close_root(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        raise AssertionError("the root frame never closes")  # pragma: no cover

    def _close_link(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        self._link(frame, parent)

    def _close_code(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        self._pre_depth -= 1
        text = "".join(frame.inline)
        if self._pre_depth:
            parent.inline.append(text)
        else:
            parent.inline.append(_inline_code(_SPACES.sub(" ", text).strip()))

    def _close_heading(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        text = frame.one_line()
        if not text:
            return
        if parent.kind in _LINE_KINDS:
            if parent.takes_inline(text):
                parent.inline.append(" " + text + " ")
        else:
            parent.add_block("#" * _HEADINGS[element.tag] + " " + escape_heading_end(text))

    def _close_item(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        text = frame.joined()
        if parent.kind == _LIST:
            if text:
                parent.add_item(text)
        elif text:
            parent.add_block(
                _list_block([text], False, 1, self._cap, parent.collapses, self._check),
                tight=True,
            )

    def _close_list(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        items = [item for item in frame.data if isinstance(item, str)]
        frame.flush()
        items.extend(frame.blocks)  # stray content directly inside the list
        if items:
            ordered = element.tag == "ol"
            start = _list_start(element)
            parent.add_block(
                _list_block(items, ordered, start, self._cap, parent.collapses, self._check),
                tight=True,
            )

    def _close_quote(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        text = frame.joined()
        if text:
            parent.add_block(_quoted(text, self._cap, parent.collapses))

    def _close_pre(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        self._pre_depth -= 1
        code = "".join(frame.inline).strip("\n")
        if code.strip():
            fence = _fence(code)  # of all of the code: the fence goes first
            parent.add_block(f"{fence}{_language(element)}\n{code}\n{fence}")

    def _close_cell(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        parent.data.append(_cut(_cell_text(frame.one_line()), self._cap, parent.collapses))

    def _close_row(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        frame.flush()
        cells = [cell for cell in frame.data if isinstance(cell, str)]
        if cells:
            parent.add_row(cells)

    def _close_table(self, element: Element, frame: _Frame, parent: _Frame) -> None:
        self._tables -= 1
        rows = [row for row in frame.data if isinstance(row, list)]
        caption = frame.joined()
        if caption:
            parent.add_block(caption)
        if rows:
            parent.add_block(
                _pipe_table(rows, frame.width, self._cap, parent.collapses, self._check)
            )

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
        elif not parent.takes_inline(markdown):
            return
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


_Opener = Callable[[Renderer, Element, _Frame], bool]
_Closer = Callable[[Renderer, Element, _Frame, _Frame], None]

#: The opener of each tag with markdown of its own; every other tag is a block
#: (:meth:`Renderer._open_block`), or, when inline, part of the line.
_OPENERS: dict[str, _Opener] = {
    **dict.fromkeys(INLINE, Renderer._open_inline),
    "a": Renderer._open_link,
    "br": Renderer._open_break,
    "img": Renderer._open_image,
    **dict.fromkeys(("code", "kbd", "samp", "tt"), Renderer._open_code),
    **dict.fromkeys(_HEADINGS, Renderer._open_heading),
    **dict.fromkeys(_LIST_TAGS, Renderer._open_list),
    "li": Renderer._open_item,
    "blockquote": Renderer._open_quote,
    **dict.fromkeys(("pre", "xmp", "listing", "plaintext"), Renderer._open_pre),
    "table": Renderer._open_table,
    "tr": Renderer._open_row,
    **dict.fromkeys(_CELL_TAGS, Renderer._open_cell),
    "hr": Renderer._open_rule,
}

#: The closer of each kind of frame, indexed by the kind.
_CLOSERS: list[_Closer] = [
    Renderer._close_root,
    Renderer._close_heading,
    Renderer._close_link,
    Renderer._close_item,
    Renderer._close_list,
    Renderer._close_quote,
    Renderer._close_pre,
    Renderer._close_code,
    Renderer._close_table,
    Renderer._close_row,
    Renderer._close_cell,
]
_KINDS_IN_ORDER = (_ROOT, _HEADING, _LINK, _ITEM, _LIST, _QUOTE, _PRE, _CODE, _TABLE, _ROW, _CELL)
assert list(_KINDS_IN_ORDER) == list(range(len(_CLOSERS)))  # each closer at its kind's index


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
