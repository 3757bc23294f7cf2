"""What the pick stage hands on: the chosen subtrees, and the text measures around them.

Why two frozen records: each pick (Readability's, the densest prose, the declared body, the
product's name block) takes a :class:`Pick` and returns the same one or a new one, so a rule
can be read, changed or reordered without tracing who changed which field when. The finished
:class:`Selection` adds what the page-kind decision compares the pick with; nothing writes
to either afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._dom import Element
from ._page_signals import PageSignals


@dataclass(frozen=True, slots=True)
class Pick:
    """The subtrees to render (siblings, in document order), the element that scored best
    (``top``) and its score; ``series`` when the roots are look-alike siblings (posts, or
    cards), ``declared`` when the page marks the article's container (microdata, JSON-LD)."""

    roots: list[Element]
    top: Element | None
    score: float
    series: bool = False
    declared: bool = False
    chars: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chars", sum(root.chars for root in self.roots))


def single(root: Element, score: float) -> Pick:
    """A pick of one subtree (which then is its own best element)."""
    return Pick([root], root, score)


@dataclass(frozen=True, slots=True)
class Selection:
    """The chosen article and the page's text measures the page-kind decision compares it
    with (all counted outside furniture, as :func:`_page_signals.read_page` counts)."""

    roots: list[Element]
    top: Element | None
    score: float
    series: bool
    declared: bool
    chars: int
    page: PageSignals | None = None  # None when no block holds a paragraph
    content_chars: int = 0  # page text outside furniture and unlikely blocks
    readable_chars: int = 0  # of that, text in blocks that are not mostly links
    inside_chars: int = 0  # content_chars inside the roots
    inside_readable: int = 0  # readable_chars inside the roots
    outside_chars: int = 0  # content_chars outside the roots (without a mega-menu)
    outside_readable: int = 0  # readable_chars outside the roots (the same)
    readable_most: int = 0  # the most readable text a rendering of the roots can count


def unmeasured(pick: Pick) -> Selection:
    """The pick as a selection with nothing measured around it."""
    return Selection(pick.roots, pick.top, pick.score, pick.series, pick.declared, pick.chars)
