"""What every family page test shares: the prose, the page shell and the one check.

Each page in this package is written for the test after what a common template family
(a forum engine, a shop platform, a documentation generator, a blog or news index, a landing
page builder) generally emits: its usual class names, landmarks and structured data, with
text of our own. None is copied from a site, and no rule of the extractor is keyed on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from runvil.web._fetch.extract import render_html

# Sentences of our own, long enough to be paragraphs, each one findable in the output.
PROSE = [
    "The ridge path leaves the village behind the church and climbs through beech woods, "
    "steady but never steep, to the first viewpoint over the valley.",
    "After heavy rain the lower section turns to mud, so boots with a deep tread are worth "
    "more than any walking pole, and gaiters keep the worst of it off.",
    "From the saddle the path splits: the left branch follows the old drovers' wall, the "
    "right one drops to the lake, where the water is cold even in August.",
    "We camped by the second stream, which runs all year, and found the ground soft enough "
    "for pegs, though the wind picked up sharply after midnight.",
    "Allow five hours for the full loop at an easy pace, more with children, and carry water "
    "for the whole day since the farm tap is often switched off.",
    "The bus back from the lake runs every two hours on weekdays and twice a day on Sundays, "
    "and the driver takes cash only, so bring coins for the fare.",
    "In winter the upper path ices over early in the morning, and the shaded gully below the "
    "summit keeps its snow long after the fields have cleared.",
    "The café at the car park opens at nine, serves soup until three, and lets walkers fill "
    "their bottles for free, which is more than most places do.",
    "Maps printed before the new bridge was built still show the ford, which is impassable "
    "after rain; follow the signs to the bridge a little upstream instead.",
    "Dogs are welcome on the lower paths but must be on a lead through the sheep fields "
    "between March and June, when the ewes are lambing on the slopes.",
    "The tent pitches in four minutes with its single hubbed pole, and the fly can go up "
    "first in the rain so that the inner stays dry while you clip it in.",
    "Its floor is a thirty denier nylon with a hydrostatic head of three thousand "
    "millimetres, enough for wet ground without a separate footprint.",
    "Two doors and two porches mean nobody climbs over anybody at night, and each porch "
    "holds a pack and a pair of boots out of the weather.",
    "This page explains how the configuration file is found, which keys it may hold, and how "
    "a value given on the command line overrides the one in the file.",
    "Every key has a default, so an empty file is valid, and an unknown key is refused with "
    "a message naming the closest known key, which catches most typos.",
    "When the same key is set in the environment and in the file, the environment wins, and "
    "the command line wins over both; nothing else changes the order.",
    "Run the build once before deploying, so that the static files are generated with the "
    "base path of the site rather than the path of your machine.",
    "Our bookkeeping service reconciles your bank feeds every night and flags anything it "
    "cannot match, so month end takes an afternoon instead of a week.",
    "Invoices go out in your own branding, reminders follow on the schedule you set, and "
    "paid invoices are matched to their payments without a click.",
    "Payroll runs on the same ledger, so wages, taxes and pension contributions land in the "
    "right accounts the moment you approve the run.",
]

NAV = (
    "<header class='site-header'><a class='logo' href='/'>Valley</a><nav class='main-nav'>"
    "<ul><li><a href='/walks'>Walks</a></li><li><a href='/gear'>Gear and kit shop</a></li>"
    "<li><a href='/about'>About us</a></li><li><a href='/contact'>Contact</a></li></ul></nav>"
    "<form class='search-form' role='search'><input name='q' placeholder='Search'>"
    "<button>Search</button></form></header>"
)
FOOTER = (
    "<footer class='site-footer'><div class='footer-links'><a href='/privacy'>Privacy "
    "policy</a> <a href='/terms'>Terms of use</a> <a href='/cookies'>Cookie settings</a>"
    "</div><p>© 2024 Valley Media Ltd. All rights reserved.</p></footer>"
)


def page(body: str, head: str = "", title: str = "Page") -> str:
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"{head}</head><body>{body}</body></html>"
    )


def json_ld(data: object) -> str:
    return f"<script type='application/ld+json'>{json.dumps(data)}</script>"


@dataclass
class Family:
    """One page of a template family: what must come back, in this order, and what not."""

    name: str
    html: str
    url: str
    must: list[str]
    must_not: list[str] = field(default_factory=list)
    unordered: list[str] = field(default_factory=list)  # must be there, in any order


def check(family: Family) -> None:
    text, label = render_html(family.html, family.url, False)
    problems = []
    if label != "readability":
        problems.append(f"label {label}")
    position = -1
    for wanted in family.must:
        found = text.find(wanted, position + 1)
        if found < 0:
            where = "missing" if wanted not in text else "out of order"
            problems.append(f"{where}: {wanted[:60]!r}")
        else:
            position = found
    for wanted in family.unordered:
        if wanted not in text:
            problems.append(f"missing: {wanted[:60]!r}")
    for unwanted in family.must_not:
        if unwanted in text:
            problems.append(f"kept: {unwanted[:60]!r}")
    assert not problems, "\n".join(problems) + "\n--- output ---\n" + text


def params(families: list[Family], failing: frozenset[str] = frozenset()) -> list[object]:
    """The families as pytest parameters; those in ``failing`` are expected to fail (strictly:
    one that starts passing fails the run until its mark is removed)."""
    import pytest

    return [
        pytest.param(
            family,
            id=family.name,
            marks=[pytest.mark.xfail(strict=True, reason="not picked right yet")]
            if family.name in failing
            else [],
        )
        for family in families
    ]
