"""The thresholds of the main-content rules, in one frozen place.

The rules were tuned on nine tenths of the development set (docs/extraction.md, "How the rules
were tuned"); keeping their numbers together lets a tuning round read and change them without
hunting through the rules. Each field names the rule that reads it. (The older rules still keep
their thresholds beside them; they move here as they are touched.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tuning:
    """The numbers the main-content rules compare with."""

    # A declared article (its located body, or the one <article> of a page declaring an
    # article in JSON-LD) with this much readable text is the article, however large the page.
    short_article_readable: int = 200
    # A page with more <article> elements than this has no one declared article (and looking
    # at each costs a walk of its text: nested ones would make it quadratic).
    articles_most: int = 64
    # How far up a product page's pick looks for the block holding the product's name.
    product_levels: int = 3


TUNING = Tuning()
