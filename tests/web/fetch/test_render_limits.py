"""The rendering limits: no page shape makes parsing or rendering grow faster than the page, the
work stops at a node budget and at a deadline, and what is cut off comes back as plain text.

Each shape here is one an attack used, or one of its class, at a size where the unbounded
version already shows (elements multiplied, depth equal to the page's tag count, attributes by
the thousand on one element). Speed itself is measured by ``bench/render_limits.py``, not here.
"""

from __future__ import annotations

import gc
import re
from typing import AnyStr

import pytest
from selectolax.lexbor import LexborHTMLParser

from runvil.web._fetch import extract
from runvil.web._fetch.extract import _budget, _sanitise, _tokens, render_html
from runvil.web._fetch.extract._alternation import alternation
from runvil.web._fetch.extract._dom import Element, parse
from runvil.web._fetch.extract._nesting import MAX_DEPTH, MIN_TAGS
from runvil.web._fetch.extract._sanitise import (
    MAX_DISTINCT_NAMES,
    MAX_SELECT_CHILDREN,
    prepare,
    split_raw_text,
)
from runvil.web._fetch.extract._text import render_text
from runvil.web._fetch.extract._tokens import MAX_ATTRIBUTES

BASE = "https://example.com/dir/page.html"


def lexbor(html: str) -> LexborHTMLParser:
    """What lexbor builds from the page after the pre-parse pass."""
    return LexborHTMLParser(prepare(html).markup)


def depth(root: Element) -> int:
    deepest = 0
    stack = [(root, 0)]
    while stack:
        element, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in element.children if type(child) is Element)
    return deepest


# --- attributes ----------------------------------------------------------------------------------


def test_one_element_keeps_at_most_the_attribute_cap() -> None:
    html = "<div " + " ".join(f"a{n}=1" for n in range(5_000)) + ">text</div>"
    div = lexbor(html).css_first("div")
    assert div is not None
    assert len(div.attributes) == MAX_ATTRIBUTES
    assert list(div.attributes)[:3] == ["a0", "a1", "a2"]  # the first ones win, as in a browser
    assert render_html(html, BASE, True) == ("text", "raw-html")


def test_a_quoted_greater_than_sign_does_not_hide_attributes() -> None:
    html = '<div x=">" ' + " ".join(f"a{n}='>'" for n in range(2_000)) + ">text</div>"
    div = lexbor(html).css_first("div")
    assert div is not None
    assert len(div.attributes) == MAX_ATTRIBUTES


def test_duplicate_attributes_count_once_and_the_first_wins() -> None:
    html = '<a href="/first" ' + 'href="/x" ' * 200 + " ".join(f"b{n}" for n in range(100)) + ">t"
    link = lexbor(html).css_first("a")
    assert link is not None
    assert link.attributes["href"] == "/first"
    assert len(link.attributes) == MAX_ATTRIBUTES


def test_html_and_body_tags_cannot_pile_attributes_on_one_element() -> None:
    html = "".join(f"<html h{n}=1><body b{n}=1>" for n in range(2_000)) + "text"
    tree = lexbor(html)
    assert tree.body is not None and tree.root is not None
    assert list(tree.body.attributes) == ["b0"]
    assert list(tree.root.attributes) == ["h0"]


def test_end_tags_lose_their_attributes() -> None:
    html = "<p>x</p " + " ".join(f"a{n}=1" for n in range(5_000)) + "><p>y</p>"
    assert prepare(html).markup == b"<p>x</p><p>y</p>"


# --- select ------------------------------------------------------------------------------------


def test_a_select_keeps_at_most_the_child_cap() -> None:
    html = "<select>" + "<option>o<hr>" * 5_000 + "</select><p>after</p>"
    select = lexbor(html).css_first("select")
    assert select is not None
    children = [node for node in select.iter() if node.tag in ("option", "hr")]
    assert len(children) == MAX_SELECT_CHILDREN
    assert render_html(html, BASE, True) == ("after", "raw-html")


def test_a_select_in_a_table_is_capped_too() -> None:
    html = "<table><tr><td><select>" + "<option>o" * 5_000
    options = lexbor(html).css("option")
    assert len(options) == MAX_SELECT_CHILDREN


def test_a_select_ends_where_the_tokenizer_ends_it() -> None:
    html = "<select><option>a<input name=q><p>shown</p>"
    assert prepare(html).markup == b"<select><option>a</select><input name=q><p>shown</p>"
    assert render_html(html, BASE, True) == ("shown", "raw-html")


def test_options_hidden_in_an_attribute_or_comment_are_not_a_select() -> None:
    html = "<p title='<select>'>a</p><!-- <select> -->" + "<p>p</p>" * 300
    assert prepare(html).markup.count(b"<p") == 301


# --- names -------------------------------------------------------------------------------------


def test_distinct_tag_and_attribute_names_are_capped() -> None:
    html = "".join(f"<x{n} a{n}=1>t</x{n}>" for n in range(MAX_DISTINCT_NAMES + 3_000))
    markup = prepare(html).markup
    tree = LexborHTMLParser(markup)
    assert tree.body is not None
    names = {node.tag for node in tree.body.iter()}
    attributes = {name for node in tree.body.iter() for name in node.attributes}
    assert len(names) <= MAX_DISTINCT_NAMES + 1
    assert len(attributes) <= MAX_DISTINCT_NAMES
    assert render_html(html, BASE, True)[0] == "\n\n".join(["t"] * (MAX_DISTINCT_NAMES + 3_000))


def test_attribute_names_behind_a_quoted_greater_than_sign_are_counted() -> None:
    # Text holding '="' and values holding '>' once hid every later attribute name from the
    # count, which cut text runs at each '>' and quoted values at each '="'.
    html = '<p>a="</p>' + "".join(
        f'<a x=">" n{n}>t</a>' for n in range(MAX_DISTINCT_NAMES + 4_000)
    )
    markup = prepare(html).markup
    tree = LexborHTMLParser(markup)
    assert tree.body is not None
    attributes = {name for node in tree.body.iter() for name in node.attributes}
    assert len(attributes) == MAX_DISTINCT_NAMES
    assert len(markup) > 192 * 1024


@pytest.mark.parametrize(
    "unit",
    ['<a x=v><a/n{n}>', '<a x><a =n{n}>'],
    ids=["after an unquoted value", "after a name without a value"],
)
def test_attribute_names_of_consecutive_tags_are_counted_apart(unit: str) -> None:
    html = "".join(unit.format(n=n) for n in range(MAX_DISTINCT_NAMES + 12_000))
    tree = LexborHTMLParser(prepare(html).markup)
    assert tree.body is not None
    attributes = {name for node in tree.body.iter() for name in node.attributes}
    assert len(attributes) == MAX_DISTINCT_NAMES


# --- formatting elements -----------------------------------------------------------------------

FORMATTING = "<b><i><u><s><em><strong><big><small><tt><font><nobr><code>"


@pytest.mark.parametrize(
    "opening",
    [
        FORMATTING * 3,  # the most the tree builder keeps of identical ones
        "".join(f"<b id={n}>" for n in range(200)),  # distinct ones: no limit at all
    ],
    ids=["identical", "distinct"],
)
def test_unclosed_formatting_is_not_recreated_in_every_block(opening: str) -> None:
    blocks = 2_000
    html = "<p>" + opening + "</p>" + "<p>x</p>" * blocks
    document = parse(prepare(html).markup)
    # each block is a <p> and its text; before, each re-created every formatting element
    assert len(document.elements) < 3 * blocks
    assert render_html(html, BASE, True)[0] == "\n\n".join(["x"] * blocks)


def test_formatting_kept_across_markers_is_not_recreated_either() -> None:
    html = "".join(f"<p><b id={n}><marquee></b></marquee></p>" for n in range(3_000)) + "x"
    document = parse(prepare(html).markup)
    assert len(document.elements) < 4 * 3_000
    assert depth(document.body) < 10


def test_formatting_elements_keep_their_names_for_extraction() -> None:
    document = parse(prepare('<p><b>bold</b> <code class="language-py">x</code></p>').markup)
    assert [element.tag for element in document.elements] == ["body", "p", "b", "code"]
    assert prepare("<p><B>x</B></p>").markup == b"<p><rv-B>x</rv-B></p>"


def test_alt_text_that_writes_formatting_tags_is_unchanged() -> None:
    html = '<p><img src="/i.png" alt="<b>bold</b> & <i>"></p>'
    assert render_html(html, BASE, True)[0] == (
        "![\\<b>bold\\</b> & \\<i>](https://example.com/i.png)"
    )


# --- depth -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    [
        "<span><div>x</span>",  # </span> stops at the open <div>: the tree builder ignores it
        "<a><div>x</a>",  # the adoption agency keeps the <div> open
        "<form><div></form>",  # </form> removes the form and nothing else
        "<li><ul></li>",  # </li> never closes past a list
        "<li><section>x",  # a new item does not close one past a <section>
        "<option><div>x",  # nor does a new option, unless it is the current node
        "<div></body>",  # </body> closes nothing
    ],
)
def test_depth_hidden_behind_end_tags_is_capped(unit: str) -> None:
    html = "<body>" + unit * (MIN_TAGS + 5_000)
    document = parse(prepare(html).markup)
    # The cap is on the open elements; a form that </form> closed stays an ancestor in the tree.
    assert depth(document.body) <= 2 * MAX_DEPTH + 2
    assert render_html(html, BASE, True)[1] == "raw-html"


def test_depth_hidden_inside_an_svg_script_is_capped() -> None:
    # Inside SVG a <script> is not raw text, so what looks like its text is markup.
    html = "<svg><script>" + "<div>x" * (MIN_TAGS + 5_000) + "</script></svg><p>after</p>"
    markup = prepare(html).markup
    assert b"<div>" not in markup  # the script's "<" is text in every context now
    document = parse(markup)
    assert depth(document.body) < 10
    assert render_html(html, BASE, True) == ("after", "raw-html")


def test_raw_text_after_svg_means_the_same_in_every_context() -> None:
    html = (
        '<svg><path d="M0"/></svg><script type="application/ld+json">{"a": "<b>x</b>"}</script>'
        "<title>a<b</title><xmp>\n<b> & c</xmp>"
    )
    markup = prepare(html).markup.decode()
    assert '{"a": "\\u003cb>x\\u003c/b>"}' in markup  # the same JSON
    assert "<title>a&lt;b</title>" in markup  # the same title
    without_svg = html.replace('<svg><path d="M0"/></svg>', "")
    assert render_html(html, BASE, True) == render_html(without_svg, BASE, True)
    assert render_html(html, BASE, True) == ("```\n<b> & c\n```", "raw-html")


def test_an_xmp_without_markup_after_svg_is_closed_like_one_with_it() -> None:
    # Its start tag becomes <pre> as its end tag does, or the rest of the page is its text.
    html = '<svg><path d="M0"/></svg><xmp>a: "b"</xmp><p>after</p>'
    assert render_html(html, BASE, True) == ('```\na: "b"\n```\n\nafter', "raw-html")


def test_the_split_of_raw_text_follows_the_tokenizer() -> None:
    html = b"<script>a</scripts></script ><!--> <style x='</style>'>s</style><title>t"
    assert split_raw_text(html) == [
        (True, b"<script>"),
        (False, b"a</scripts>"),  # not its end tag
        (True, b"</script ><!--> <style x='</style>'>"),  # <!--> is a whole comment
        (False, b"s"),
        (True, b"</style><title>"),
        (False, b"t"),  # to the end of the input
    ]


# --- the markdown walk -------------------------------------------------------------------------


def test_lists_and_quotes_nest_at_most_eight_deep() -> None:
    html = "<blockquote>" * 12 + "deep" + "</blockquote>" * 12 + "<ul><li>" * 12 + "item"
    assert render_html(html, BASE, True) == ("> " * 8 + "deep\n\n" + "- " * 8 + "item", "raw-html")
    # items nested without lists are held to the same depth
    assert render_html("<li><section>" * 20 + "x", BASE, True) == ("- " * 8 + "x", "raw-html")


def test_a_heading_inside_a_heading_is_part_of_its_line() -> None:
    html = "<h1>outer <div><h2>inner <b>x</b></h2></div> end</h1>"
    assert render_html(html, BASE, True) == ("# outer inner x end", "raw-html")


# --- the node budget ---------------------------------------------------------------------------


def test_past_the_node_budget_the_rest_is_plain_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sanitise, "MARKUP_BUDGET", 160 * 2_000)
    html = "<h1>Title</h1>" + "<p>para</p>" * 1_000 + "<h2>Later *x*</h2><p>last<br>line</p>"
    prepared = prepare(html)
    assert prepared.tail.startswith(b"<p>para</p>")
    assert len(prepared.markup) < 2_000 + 256 * 11  # the budget, and the last step's tags
    assert len(prepared.markup) + len(prepared.tail) == len(html)
    text, label = render_html(html, BASE, True)
    assert label == "raw-html"
    parts = text.split("\n\n")
    assert parts[0] == "# Title"
    assert parts[1:-2] == ["para"] * 1_000
    assert parts[-2:] == ["Later \\*x\\*", "last\nline"]  # a heading, past the budget, is text


def test_past_the_node_budget_a_short_result_stops_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sanitise, "MARKUP_BUDGET", 160 * 2_000)
    html = "<p>para</p>" * 100_000
    text, _ = render_html(html, BASE, True, max_chars=100)
    assert text.startswith("para\n\npara")
    assert 100 < len(text) < 2_000


@pytest.mark.parametrize(
    ("unit", "count"),
    [
        ("<p>x", 2_000_000),  # 8 MB of paragraphs: without the budget, 4 million nodes
        ("<i " + " ".join(f"a{n}" for n in range(70)) + ">x</i>", 20_000),  # tags the pass caps
        ("<svg>", 1_000_000),  # tags the pass decides on one by one
    ],
    ids=["paragraphs", "capped tags", "decided tags"],
)
def test_a_huge_page_is_parsed_only_up_to_the_budget(unit: str, count: int) -> None:
    html = unit * count
    prepared = prepare(html)
    assert len(prepared.markup) <= _sanitise.MARKUP_BUDGET // _sanitise.MARKUP_COST + 16_384
    assert len(prepared.tail) > len(html) // 2


# --- the deadline and the element ceiling ------------------------------------------------------


def test_a_rendering_past_its_deadline_is_the_text_rendering() -> None:
    html = "<h1>T</h1><p>a <b>b</b></p><script>x()</script><ul><li>[i]</li></ul>"
    assert render_html(html, BASE, False, deadline=0.0) == ("T\n\na b\n\n\\[i]", "raw-html")
    assert render_text(html.encode()) == "T\n\na b\n\n\\[i]"


def test_a_deadline_that_passes_mid_way_stops_the_rendering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(range(10_000_000))
    monkeypatch.setattr(_budget.time, "monotonic", lambda: next(clock))  # one second per look
    html = "<div><p>para</p></div>" * 20_000
    text, label = render_html(html, BASE, True, deadline=3.0)
    assert (text, label) == (render_text(html.encode()), "raw-html")


def test_the_element_ceiling_stops_the_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_budget, "MAX_ELEMENTS", 5_000)
    html = "<div><p>para</p></div>" * 5_000
    assert render_html(html, BASE, True) == (render_text(html.encode()), "raw-html")


def test_a_text_rendering_of_only_tags_is_empty() -> None:
    assert render_text(b"<br>" * 100_000 + b"<p>" * 100_000) == ""
    assert render_text(b"x<br>" * 3 + b"<p>y</p>\n\n<p>z") == "x\nx\nx\n\ny\n\nz"


# --- memory ------------------------------------------------------------------------------------


def test_the_tree_is_freed_with_the_collector_off() -> None:
    # Renderings keep the collector paused, so a tree held together by parent links would stay
    # in memory for as long as renderings overlap.
    gc.collect()
    gc.disable()
    try:
        render_html("<div><p>para</p></div>" * 2_000, BASE, True)
        left = sum(1 for item in gc.get_objects() if type(item) is Element)
    finally:
        gc.enable()
    assert left == 0


def test_render_html_still_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(extract, "prepare", broken)
    assert render_html("<p>x</p>", BASE, True) == ("", "raw-html")


# --- the name alternations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        _tokens.FORMATTING,
        _tokens.RAW_TEXT | _tokens.FORMATTING,
        frozenset({"cookie", "cookiebot", "consent", "cmp-", "-ad-", "a", "ab", "abc"}),
    ],
)
def test_the_alternation_trie_matches_exactly_its_words(names: frozenset[AnyStr]) -> None:
    pattern = re.compile(alternation(names))
    candidates = {name[:cut] for name in names for cut in range(len(name) + 1)}
    for name in names:
        extras = ("a", "s", "-x") if isinstance(name, str) else (b"a", b"s", b"-x")
        candidates |= {name + extra for extra in extras}  # type: ignore[operator]
    for candidate in candidates:
        assert (pattern.fullmatch(candidate) is not None) is (candidate in names), candidate
