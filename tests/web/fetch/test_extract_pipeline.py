"""The extractor's shape: every threshold of its rules in the one frozen ``Tuning``, frozen
records between the stages, and a page-kind decision that is a function of its signals."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect

import pytest

from runvil.web._fetch.extract._dom import Document, parse
from runvil.web._fetch.extract._kind import PICKED, PageKind, decide, gather
from runvil.web._fetch.extract._pick import select
from runvil.web._fetch.extract._selection import Selection
from runvil.web._fetch.extract._surroundings import Surroundings
from runvil.web._fetch.extract._tuning import TUNING, Tuning

RULE_MODULES = [
    "_cards", "_corrections", "_cues", "_kind", "_page_signals", "_pick", "_pick_declared",
    "_pick_densest", "_pick_product", "_pick_readability", "_pick_series", "_pick_siblings",
    "_region", "_rendered", "_selection", "_surroundings", "_tree",
]  # fmt: skip
# Module-level numbers that are not thresholds of a rule: memo bounds, a rendering limit (in
# docs/reliability.md) and the corrections' verdict codes.
NOT_THRESHOLDS = {"_CACHE_LIMIT", "REGION_MAX_ELEMENTS", "KEEP", "NAMED", "DENSE"}

PARAGRAPH = (
    "The committee met on Tuesday, reviewed the budget, and agreed on the plan for the year, "
    "after a long debate about the roads, the schools and the new library on the hill."
)


@pytest.mark.parametrize("name", RULE_MODULES)
def test_the_rules_keep_no_threshold_of_their_own(name: str) -> None:
    # The module's own top-level assignments of a number (imported flags do not count).
    module = importlib.import_module(f"runvil.web._fetch.extract.{name}")
    tree = ast.parse(inspect.getsource(module))
    numbers = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and type(vars(module)[target.id]) in (int, float):
                numbers.add(target.id)
    assert numbers <= NOT_THRESHOLDS


def test_the_tuning_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TUNING.paragraph_min_chars = 1  # type: ignore[misc]
    assert Tuning() == TUNING


def _document(body: str) -> Document:
    return parse(f"<!doctype html><html><head><title>T</title></head><body>{body}</body></html>")


def _kind(document: Document) -> tuple[PageKind, Selection]:
    selection = select(document)
    around = Surroundings(document, selection)
    signals = gather(document, selection, around, selection.chars, selection.readable_most)
    kinds = {decide(signals) for _ in range(3)}  # asked again, the same answer
    assert len(kinds) == 1
    return kinds.pop(), selection


def test_the_page_kind_is_a_function_of_the_signals() -> None:
    document = _document(
        "<nav><a href='/a'>Home</a> <a href='/b'>News</a></nav>"
        + f"<article><h1>Budget</h1><p>{PARAGRAPH}</p><p>{PARAGRAPH}</p></article>"
    )
    kind, selection = _kind(document)
    assert kind is PageKind.ARTICLE
    assert kind in PICKED
    with pytest.raises(dataclasses.FrozenInstanceError):
        selection.series = True  # type: ignore[misc]


def test_a_listing_of_cards_is_a_listing() -> None:
    card = (
        "<div class='card'><a href='/story/{n}'>A headline long enough, number {n}</a>"
        "<p>A short blurb under the headline, number {n}.</p></div>"
    )
    cards = "".join(card.format(n=n) for n in range(8))
    kind, _ = _kind(_document(f"<div class='grid'>{cards}</div>"))
    assert kind is PageKind.LISTING
