"""The two bounds on big pages: the nesting cap before parsing, and the whole-page rendering that
stops once it has more than ``max_chars`` characters. Both must leave every ordinary page's
text exactly as it was."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil.web._fetch.extract import CAP_MARGIN, render_html
from runvil.web._fetch.extract._nesting import MAX_DEPTH, MIN_TAGS, limit_nesting
from tests.web.fetch.test_extract_fuzz import html_soup

BASE = "https://example.com/dir/page.html"


def assert_the_stop_changes_nothing(html: str, raw: bool, limit: int) -> None:
    """Stopping at ``max_chars=limit`` keeps the label, the first ``limit + 1`` characters and
    whether the text is longer than ``limit`` exactly as the whole rendering has them: all the
    fetch reads of it."""
    whole, label = render_html(html, BASE, raw)
    cut, cut_label = render_html(html, BASE, raw, max_chars=limit)
    assert cut_label == label
    assert cut[: limit + 1] == whole[: limit + 1]
    assert (len(cut) > limit) == (len(whole) > limit)


# --- the nesting cap -----------------------------------------------------------------------------


def test_a_page_with_few_tags_is_never_touched() -> None:
    html = "<div>" * (MIN_TAGS - 1)
    assert limit_nesting(html) is html


def test_a_page_that_cannot_be_deep_is_never_touched() -> None:
    html = "<p>para</p>" * (2 * MIN_TAGS)
    assert limit_nesting(html) is html


def test_a_big_well_formed_page_is_unchanged() -> None:
    row = "<tr><td>a</td><td><a href='/x'>b</a></td></tr>"
    section = "<section><div><ul>" + "<li>item<li>item" * 20 + "</ul></div></section>"
    html = (
        "<html><body><table>" + row * 10_000 + "</table>" + section * 500
        # unclosed <p>, <li>, <dd> and cells close themselves and must not count as depth
        + "<div>" + "<p>text" * 5_000 + "</div>" + "<dl>" + "<dt>t<dd>d" * 3_000 + "</dl>"
        + "<table>" + "<tr><td>x<td>y" * 3_000 + "</table></body></html>"
    )  # fmt: skip
    assert limit_nesting(html) is html


def test_tag_like_text_in_scripts_and_comments_is_not_markup() -> None:
    script = "<script>var s = '" + "<div>" * 30_000 + "';</script>"
    comment = "<!-- " + "<section>" * 30_000 + " -->"
    style = "<style>/* " + "<ul>" * 30_000 + " */</style>"
    html = script + comment + style + "<p>after</p>" * MIN_TAGS
    assert limit_nesting(html) is html


def test_deep_start_tags_are_removed_and_every_end_tag_and_text_stays() -> None:
    depth = MAX_DEPTH + 3_000
    html = "<div>x" * depth + "<p>filler text</p>" * MIN_TAGS + "</div>" * depth
    capped = limit_nesting(html)
    assert capped.count("<div>") == MAX_DEPTH
    assert capped.count("</div>") == depth
    assert capped.count("</p>") == MIN_TAGS
    assert re.sub(r"<[^>]*>", "", capped) == re.sub(r"<[^>]*>", "", html)


def test_start_tags_that_change_parsing_are_never_removed() -> None:
    deep = "<div>" * (MAX_DEPTH + 10)
    kept = "<select><option>o</option></select><svg><title>t</title></svg><table><tr><td>c"
    html = deep + kept + "<p>p</p>" * MIN_TAGS
    capped = limit_nesting(html)
    for tag in ("<select>", "<svg>", "<table>", "<title>"):
        assert tag in capped
    assert "<option>" not in capped.split("<select>")[0]


def test_a_script_past_the_cap_keeps_its_content_out_of_the_text() -> None:
    html = "<div>" * (MAX_DEPTH + 100) + "<script>secret()</script>" + "<p>p</p>" * MIN_TAGS
    text, _ = render_html(html, BASE, True)
    assert "secret" not in text


def test_a_deeply_nested_big_page_keeps_all_its_paragraphs() -> None:
    html = "<div>x" * 11_000 + "<p>filler text here.</p>" * 30_000
    text, label = render_html(html, BASE, True)
    assert label == "raw-html"
    assert text.count("filler text here.") == 30_000
    # every level's "x" is there ("text" holds one x per paragraph): the levels within the
    # cap as blocks of their own, those past it run together
    assert text.count("x") - 30_000 == 11_000
    assert re.findall(r"^x$", text, re.MULTILINE) == ["x"] * (MAX_DEPTH - 1)


# --- the max_chars stop --------------------------------------------------------------------------

# Pages shaped to reach the stop: many top-level blocks, long inline runs (with whitespace that
# collapses), headings, code, lists, tables, links and line breaks, so the cut lands in each.
SHAPES = {
    "paragraphs": "<p>A paragraph of text, number {n}.</p>",
    "links": '<a href="/p/{n}">link {n}</a> ',
    "spaced inline": "<span>word{n}</span>" + " " * 40 + "\n\t ",
    "breaks": "line {n}<br>",
    "headings": "<h2>Heading {n}</h2><p>text {n}</p>",
    "escapes": "<p>1. not a list {n}</p><div># not a heading</div><p>- not an item</p>",
    "code": "<pre>code {n}\n  indented</pre>",
    "lists": "<ul><li>item {n}</li><li>other</li></ul>",
    "table": "<table><tr><th>h</th></tr><tr><td>cell {n}</td></tr></table>",
    "in a wrapper": "<div><section><p>nested {n}</p></section></div>",
}


def _page(shape: str, count: int) -> str:
    return "<html><body>" + "".join(shape.format(n=n) for n in range(count)) + "</body></html>"


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("limit", [1, 99, 1_000, 7_777, 40_000])
@pytest.mark.parametrize("raw", [False, True])
def test_the_stop_keeps_the_first_max_chars_exactly(shape: str, limit: int, raw: bool) -> None:
    html = _page(SHAPES[shape], 3_000)
    assert_the_stop_changes_nothing(html, raw, limit)


def test_the_stop_really_stops() -> None:
    html = _page(SHAPES["paragraphs"], 50_000)
    whole, _ = render_html(html, BASE, True)
    cut, _ = render_html(html, BASE, True, max_chars=1_000)
    assert len(whole) > 1_500_000
    assert 1_000 < len(cut) < 60_000


def test_a_whitespace_run_never_stops_short() -> None:
    # 2 MB of spaces between words collapse to almost nothing: the stop must see that.
    html = "<body>" + "".join(f"w{n}" + " " * 2_000 for n in range(1_000)) + "</body>"
    whole, _ = render_html(html, BASE, True)
    cut, _ = render_html(html, BASE, True, max_chars=3_000)
    assert cut[:3_001] == whole[:3_001]
    assert len(whole) > 3_000 and len(cut) > 3_000


_BLOCK = st.sampled_from([*SHAPES.values(), "<b>bold {n}</b>", "  {n}  ", "<hr>", ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(_BLOCK, min_size=1, max_size=6),
    count=st.integers(300, 1_500),
    limit=st.integers(1, 20_000),
    raw=st.booleans(),
)
def test_any_mix_keeps_the_first_max_chars_exactly(
    blocks: list[str], count: int, limit: int, raw: bool
) -> None:
    html = "<body>" + "".join(blocks[n % len(blocks)].format(n=n) for n in range(count))
    assert_the_stop_changes_nothing(html, raw, limit)


@pytest.mark.parametrize(
    "html",
    [
        "<div></x>w" * 100_000,  # stray end tags between the starts
        "<div><table></div></table>w" * 50_000,  # end tags the parser ignores inside a table
        "<div>" * 11_000 + "<li>w</li>" * 100_000,
        "<ul><li>w" * 30_000,  # nested lists, each item opening the next list
    ],
    ids=["stray-ends", "ignored-ends", "items-deep", "lists"],
)
def test_nesting_that_hides_behind_end_tags_is_still_capped(html: str) -> None:
    capped = limit_nesting(html)
    assert capped is not html
    assert capped.count("</") == html.count("</")  # end tags all kept
    text, label = render_html(html, BASE, True)
    assert label == "raw-html"
    assert text.count("w") == html.count("w")  # every word of the page, none added


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(soup=html_soup(), repeat=st.integers(20, 120), limit=st.integers(1, 5_000))
def test_tag_soup_keeps_the_first_max_chars_exactly(soup: str, repeat: int, limit: int) -> None:
    # Unclosed, misnested and stray tags, repeated until the walk passes the stop's checks.
    html = soup * repeat
    assert_the_stop_changes_nothing(html, True, limit)


def _table(rows: int, row: str, before: str = "", after: str = "") -> str:
    return "<body>" + before + "<table>" + "".join(row.format(n=n) for n in range(rows)) + after


TABLES = {
    "plain": _table(20_000, "<tr><td>cell {n}</td><td>two</td><td>3</td></tr>"),
    "wider later": _table(20_000, "<tr><td>a {n}</td></tr>")
    + "<tr><td>x</td><td>y</td><td>z</td><td>w</td></tr></table>",
    "sections": _table(
        20_000, "<tbody><tr><th>h {n}</th><td>v</td></tr></tbody>", after="<tfoot><tr><td>f"
    ),
    "caption at the end": _table(
        20_000, "<tr><td>c {n}</td><td>d</td></tr>", after="<caption>late"
    ),
    "text between rows": _table(20_000, "<tr><td>c {n}</td></tr> stray {n} "),
    "rich cells": _table(20_000, '<tr><td><a href="/r/{n}">r {n}</a> <b>b</b></td><td>|</td></tr>'),
    "non-cell in a row": _table(20_000, "<tr><td>c {n}</td><div>d</div></tr>"),
    "text before": _table(20_000, "<tr><td>c {n}</td></tr>", before="<p>intro</p> loose text "),
}


@pytest.mark.parametrize("name", sorted(TABLES))
@pytest.mark.parametrize("limit", [1, 500, 40_000])
def test_a_big_table_keeps_the_first_max_chars_exactly(name: str, limit: int) -> None:
    html = TABLES[name]
    assert_the_stop_changes_nothing(html, True, limit)


def test_a_big_table_of_rows_alone_stops_early() -> None:
    whole, _ = render_html(TABLES["plain"], BASE, True)
    cut, _ = render_html(TABLES["plain"], BASE, True, max_chars=1_000)
    assert len(whole) > 400_000
    assert 1_000 < len(cut) < 20_000
    # a caption anywhere in the table prints before it, so that table is walked whole; what
    # it makes of it is still bounded (every row past the bound only counts for the width)
    whole, _ = render_html(TABLES["caption at the end"], BASE, True)
    cut, _ = render_html(TABLES["caption at the end"], BASE, True, max_chars=1_000)
    assert len(whole) > 300_000
    assert 1_000 < len(cut) <= 1_000 + CAP_MARGIN + 64
    assert whole.startswith(cut)
