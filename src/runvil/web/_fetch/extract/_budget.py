"""The limits one rendering runs under: a deadline, and a ceiling on the elements it builds.

Why: threads cannot be stopped from outside, so a rendering has to stop itself. The pre-parse
pass already makes the work linear and bounded (``_sanitise``); this is the second line, for
whatever it did not foresee and for a machine too loaded to finish in time. The steps that loop
over a page (the pre-parse pass, the tree build, the markdown walk) call :meth:`Budget.check`
every few thousand steps; past the deadline, or past :data:`MAX_ELEMENTS` elements, it raises
:class:`RenderOverBudget`, and ``render_html`` returns the page's linear text rendering instead.
"""

from __future__ import annotations

import time

__all__ = ["MAX_ELEMENTS", "Budget", "RenderOverBudget"]

#: Elements the compact tree may hold. The node budget of the pre-parse pass keeps a page under
#: about 400,000; a page that still builds more is cut short here.
MAX_ELEMENTS = 600_000


class RenderOverBudget(Exception):
    """A rendering ran past its deadline or its element ceiling."""


class Budget:
    """A deadline (``time.monotonic()`` seconds, or ``None`` for none) to check against."""

    __slots__ = ("deadline",)

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RenderOverBudget("the rendering ran past its deadline")

    def progress(self, elements: int) -> None:
        """The tree build's progress: ``elements`` built so far."""
        if elements > MAX_ELEMENTS:
            raise RenderOverBudget(f"the page builds more than {MAX_ELEMENTS} elements")
        self.check()
