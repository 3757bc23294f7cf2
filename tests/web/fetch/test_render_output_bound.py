"""The markdown a rendering makes is bounded by what the result can show, whatever the page.

The class (docs/reliability.md, "Rendering limits"): a page that makes the renderer multiply its
text. A table whose first row has n cells and then n rows of one cell is padded to n x n
cells; every level of a quote or list prefixes every line inside it again. With ``max_chars``,
a whole-page rendering now makes at most ``3 * (max_chars + CAP_MARGIN)`` characters and an
article at most ``3 * max(ARTICLE_CHARS, max_chars + CAP_MARGIN)``, and the first ``max_chars``
characters (and whether there are more) are exactly those of the unbounded rendering.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil.web import FetchPolicy, WebFetch
from runvil.web._fetch import extract
from runvil.web._fetch.extract import ARTICLE_CHARS, CAP_MARGIN, render_html
from runvil.web._fetch.extract._dom import parse
from runvil.web._fetch.extract._markdown import (
    CHECK_EVERY,
    CHECK_LINES,
    Renderer,
    _list_block,
    _pipe_table,
)
from runvil.web._fetch.failures import TASK_DID_NOT_FINISH
from tests.web.fetch.conftest import SiteFactory
from tests.web.fetch.test_fetch_pages import serving

BASE = "https://example.com/page"


def wide_table(rows: int, width: int | None = None) -> str:
    """A first row of ``width`` cells (``rows`` by default), then ``rows`` rows of one cell."""
    width = rows if width is None else width
    return "<table><tr>" + "<td>c" * width + "</tr>" + "<tr><td>r" * rows + "</table>"


def nested(open_tags: str, close_tags: str, depth: int, inner: str) -> str:
    return open_tags * depth + inner + close_tags * depth


# Every shape multiplies its text: quadratic (tables padded to a wide first row, wherever the
# table is) or by nesting (prefixes and indentation repeated on every line, level after level).
def shapes(n: int) -> dict[str, str]:
    table = wide_table(n)
    lines = "x<br>" * n
    return {
        "table": table,
        "table in a quote": f"<blockquote>{table}</blockquote>",
        "table in a list item": f"<ul><li>{table}</li></ul>",
        "table in nested lists": nested("<ul><li>", "</li></ul>", 7, table),
        "table in nested quotes": nested("<blockquote>", "</blockquote>", 8, table),
        "table in an ordered list starting at 999999999": (
            f"<ol start=999999999><li>{table}</li></ol>"
        ),
        "table in a table cell": f"<table><tr><td>{table}</td><td>b</td></tr></table>",
        "table in a heading": f"<h2><span>h</span>{table}</h2>",
        "table in a link": f'<a href="/x"><span>a</span>{table}</a>',
        "table in a quote in a cell": (
            f"<table><tr><td><blockquote>{table}</blockquote></td><td>b</td></tr></table>"
        ),
        "tables in every item": "<ul>" + f"<li>{wide_table(n // 20)}" * 20 + "</ul>",
        "linked tables in a heading": (
            "<h2>" + f'<a href="/x"><span>a</span>{wide_table(n // 10)}</a>' * 10 + "</h2>"
        ),
        "headings holding tables in a cell": (
            "<table><tr><td>"
            + f"<h3><span>h</span>{wide_table(n // 10)}</h3> " * 10
            + "<td>b</table>"
        ),
        "lines in nested quotes": nested("<blockquote>", "</blockquote>", 8, lines),
        "lines in nested lists": nested("<ol start=999999999><li>", "</li></ol>", 8, lines),
        "many nested items": (
            "<ul>" + "<li><ul><li><ul><li>x</li></ul></li></ul></li>" * n + "</ul>"
        ),
        "code in nested lists": nested("<ul><li>", "</li></ul>", 8, "<pre>" + "x\n" * n + "</pre>"),
    }


def bound(limit: int, label: str) -> int:
    """The most a rendering with ``max_chars=limit`` makes (an article gets more, to be judged
    on)."""
    if label == "readability":
        return 3 * max(ARTICLE_CHARS, limit + CAP_MARGIN)
    return 3 * (limit + CAP_MARGIN)


def page(body: str) -> str:
    return f"<html><body>{body}</body></html>"


@pytest.mark.parametrize("name", sorted(shapes(1)))
@pytest.mark.parametrize("limit", [1, 1_000, 40_000])
def test_a_multiplying_page_keeps_its_first_max_chars_exactly(name: str, limit: int) -> None:
    html = page(shapes(500)[name])  # small enough to render unbounded for the comparison
    for raw in (True, False):
        whole, label = render_html(html, BASE, raw)
        cut, cut_label = render_html(html, BASE, raw, max_chars=limit)
        assert cut_label == label
        assert cut[: limit + 1] == whole[: limit + 1]
        assert (len(cut) > limit) == (len(whole) > limit)
        assert len(cut) <= bound(limit, label)


@pytest.mark.parametrize("name", sorted(shapes(1)))
def test_a_multiplying_page_makes_no_more_than_the_bound(name: str) -> None:
    # 16,000 rows under a first row of 16,000 cells: the attack's biggest page (768 million
    # characters of markdown unbounded).
    html = page(shapes(16_000)[name])
    for raw in (True, False):
        text, label = render_html(html, BASE, raw, max_chars=40_000)
        assert label == "raw-html"
        assert 40_000 < len(text) <= 3 * (40_000 + CAP_MARGIN)


def test_the_attacks_page_comes_back_exactly() -> None:
    html = page(f"<blockquote>{wide_table(16_000)}</blockquote>")
    text, label = render_html(html, BASE, False, max_chars=40_000)
    assert label == "raw-html"
    head = "> | " + " | ".join(["c"] * 16_000) + " |"
    assert text == head[: 40_000 + CAP_MARGIN].rstrip()


def test_a_ragged_table_is_padded_as_before_up_to_the_bound() -> None:
    html = page(f"<ul><li>{wide_table(300)}</li></ul>")
    text, _ = render_html(html, BASE, True, max_chars=5_000)
    lines = text.split("\n")
    assert lines[0] == "- | " + " | ".join(["c"] * 300) + " |"
    assert lines[1] == "  |" + "---|" * 300
    assert lines[2].startswith("  | r |" + "  |" * 299)


def test_an_article_is_bounded_by_the_article_cap() -> None:
    prose = (
        "<p>The committee met on Tuesday, reviewed the budget, and agreed on the plan, "
        "which the members then signed after a long discussion of its details.</p>"
    )
    html = page(f"<article><h1>Title</h1>{prose * 20}{wide_table(2_000)}{prose * 20}</article>")
    whole, _ = render_html(html, BASE, False)
    text, _ = render_html(html, BASE, False, max_chars=40_000)
    assert len(whole) > 8_000_000
    assert text[:40_001] == whole[:40_001]
    assert len(text) <= 3 * ARTICLE_CHARS


# --- where the bound is enforced ----------------------------------------------------------------


def test_the_table_writer_makes_only_what_the_cap_asks_for() -> None:
    rows = [["c"] * 100_000] + [["r"]] * 100_000
    table = _pipe_table(rows, cap=1_000)
    assert 1_000 < len(table) <= 2_000
    unbounded_start = "| " + " | ".join(["c"] * 100_000) + " |"
    assert table == unbounded_start[: len(table)]
    # where whitespace is collapsed later, characters that are not whitespace are counted
    table = _pipe_table([["a"], ["b"]], width=100_000, cap=1_000, collapses=True)
    assert table == "| a |" + "  |" * 998  # 1,001 characters that are not spaces


def test_the_table_and_list_writers_check_the_deadline_as_they_go() -> None:
    calls: list[int] = []
    rows = [["r"]] * (3 * CHECK_LINES + 1)
    _pipe_table(rows, cap=10**9, check=lambda: calls.append(1))
    assert len(calls) == 3
    calls.clear()
    _list_block(["x"] * (3 * CHECK_LINES + 1), False, 1, cap=10**9, check=lambda: calls.append(1))
    assert len(calls) == 3


def test_the_walk_stops_early_at_any_depth() -> None:
    # 200,000 paragraphs eight quotes deep: once the innermost quote holds more than the
    # bound, the rest of it is never walked.
    document = parse(page(nested("<blockquote>", "</blockquote>", 8, "<p>para</p>" * 200_000)))
    checks: list[int] = []
    renderer = Renderer(lambda href: href, check=lambda: checks.append(1), cap=1_000)
    text = renderer.render([document.body], 1_000)
    assert text.startswith("> > > > > > > > para\n> > > > > > > >\n")
    assert len(text) <= 3 * 1_000
    assert len(checks) * CHECK_EVERY < 4_096  # not one check: under 4,096 steps walked


# --- running out of memory ----------------------------------------------------------------------


def test_running_out_of_memory_is_not_an_empty_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(markup: bytes, progress: object = None) -> object:
        raise MemoryError

    monkeypatch.setattr(extract, "parse", no_memory)
    with pytest.raises(MemoryError):
        render_html(page("<p>text</p>"), BASE, False, max_chars=40_000)


async def test_a_fetch_that_runs_out_of_memory_did_not_finish(
    fetch: WebFetch, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runvil._errors import ToolError, ToolErrorKind

    def no_memory(markup: bytes, progress: object = None) -> object:
        raise MemoryError

    monkeypatch.setattr(extract, "parse", no_memory)
    await site({"/": serving(page("<p>text</p>"), "text/html")})
    with pytest.raises(ToolError) as failure:
        await fetch.call({"url": "https://example.com/"})
    assert failure.value.kind is ToolErrorKind.Other
    assert str(failure.value) == TASK_DID_NOT_FINISH
    assert isinstance(FetchPolicy(), FetchPolicy)


# --- the text rendering (past a deadline, or past the node budget) -------------------------------

TEXT_PAGES = {
    "one long paragraph": b"<p>" + b"word <b>x</b> &amp; " * 200_000 + b"</p>",
    "one long line of dashes, then text": b"<p>" + b"-<i></i>" * 200_000 + b"x</p>",
    "long lines": b"<div>" + b"line of text<br>" * 100_000 + b"</div>",
    "paragraphs": b"<p>a paragraph</p>" * 100_000,
    "spaces": b"<p>w" + b" " * 2_000_000 + b"<b>w</b></p>",
}


@pytest.mark.parametrize("name", sorted(TEXT_PAGES))
@pytest.mark.parametrize("limit", [1, 5_000, 40_000])
def test_the_text_rendering_keeps_its_first_max_chars_and_no_more(name: str, limit: int) -> None:
    from runvil.web._fetch.extract._text import MARGIN, render_text

    data = TEXT_PAGES[name]
    whole = render_text(data)
    cut = render_text(data, limit)
    assert cut[: limit + 1] == whole[: limit + 1]
    assert (len(cut) > limit) == (len(whole) > limit)
    assert len(cut) <= limit + 1 + MARGIN


# --- any mix of the shapes ----------------------------------------------------------------------

_LEAVES = st.sampled_from(
    [
        "word {n} ",
        "x<br>y<br>",
        "<pre>code {n}\n  indented\n\n</pre>",
        "<pre>```{n}\n" + "\n" * 30 + "</pre>",
        "<code>`tick`</code>",
        "----- ",
        "\u3000\u3000 {n} \u3000",
        "<p>a paragraph {n}</p>",
        "<img alt=pic src=/p.png>",
        '<a href="/l/{n}">link</a>',
        "<table><tr><td>a</td><td>b</td></tr><tr><td>{n}</td></tr></table>",
        "<table><tr>" + "<td>c" * 40 + "</tr>" + "<tr><td>r {n}" * 40 + "</table>",
        "<h3>heading ####</h3>",
    ]
)


def _wrap(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    wrappers = st.sampled_from(
        [
            "<blockquote>{}</blockquote>",
            "<ul><li>{}</li><li>second</li></ul>",
            "<ol start=99999999><li>{}</li></ol>",
            "<table><tr><td>{}</td><td>cell</td></tr><tr><td>r</td></tr></table>",
            "<table><tr><td>one</td></tr><tr><td>{}</td><td>b</td><td>c</td></tr></table>",
            "<h2><span>h</span>{}</h2>",
            '<a href="/card"><span>card</span>{}</a>',
            "<div>{}</div>",
            "<li>{}</li>",
        ]
    )
    return st.builds(lambda wrapper, parts: wrapper.format("".join(parts)), wrappers,
                     st.lists(inner, min_size=1, max_size=4))  # fmt: skip


_MIX = st.recursive(_LEAVES, _wrap, max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(_MIX, min_size=1, max_size=4),
    repeat=st.integers(1, 30),
    limit=st.integers(1, 4_000),
    raw=st.booleans(),
)
def test_any_mix_keeps_its_first_max_chars_within_the_bound(
    parts: list[str], repeat: int, limit: int, raw: bool
) -> None:
    html = page("".join(parts[n % len(parts)].replace("{n}", str(n)) for n in range(repeat * 4)))
    whole, label = render_html(html, BASE, raw)
    cut, cut_label = render_html(html, BASE, raw, max_chars=limit)
    assert cut_label == label
    assert cut[: limit + 1] == whole[: limit + 1]
    assert (len(cut) > limit) == (len(whole) > limit)
    assert len(cut) <= bound(limit, label)


def test_a_cut_where_whitespace_collapses_counts_only_what_shows() -> None:
    from runvil.web._fetch.extract._markdown import _cut

    text = "a \n\x00  b" * 1_000  # two characters that show in every seven
    assert _cut(text, 10, False) == text[:10]
    cut = _cut(text, 10, True)
    assert cut == text[: 5 * 7]  # the shortest prefix showing ten: "a" and "b" five times
    assert _cut("a b", 10, True) == "a b"
