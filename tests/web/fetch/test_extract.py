"""render_html: the fallback rule, the raw flag and the contract that rendering never fails."""

from __future__ import annotations

import pytest

from runvil.web._fetch import extract
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._dom import Document
from runvil.web._fetch.extract._selection import Selection

BASE = "https://example.com/dir/page.html"

ARTICLE_TEXT = (
    "The committee met on Tuesday, reviewed the budget, and agreed on the plan for the year. " * 4
).strip()


def page(body: str) -> str:
    return f"<!doctype html><html><head><title>T</title></head><body>{body}</body></html>"


def test_short_div_falls_back_to_the_whole_page() -> None:
    assert render_html("<div>short</div>", BASE, False) == ("short", "raw-html")


def test_raw_renders_the_whole_page_furniture_included() -> None:
    html = page(
        "<nav><a href='/'>Home</a></nav><header>Head</header>"
        f"<main><p>{ARTICLE_TEXT}</p></main><aside>Side</aside><footer>Foot</footer>"
    )
    assert render_html(html, BASE, True) == (
        f"[Home](https://example.com/)\n\nHead\n\n{ARTICLE_TEXT}\n\nSide\n\nFoot",
        "raw-html",
    )


def test_article_drops_navigation_header_footer_aside_and_forms() -> None:
    html = page(
        "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        "<header>Site name</header>"
        f"<article><h1>Budget</h1><p>{ARTICLE_TEXT}</p>"
        "<form><label>Subscribe</label><input name=e><button>Go</button></form></article>"
        "<aside>Related stories</aside>"
        "<footer>Copyright 2026</footer>"
    )
    assert render_html(html, BASE, False) == (f"# Budget\n\n{ARTICLE_TEXT}", "readability")


def test_paragraphs_directly_in_body_are_the_article() -> None:
    html = page(f"<p>{ARTICLE_TEXT}</p><p>{ARTICLE_TEXT}</p>")
    assert render_html(html, BASE, False) == (f"{ARTICLE_TEXT}\n\n{ARTICLE_TEXT}", "readability")


# --- the 100-byte fallback, counted in UTF-8 bytes after trimming ------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("x" * 99, "raw-html"),
        ("x" * 100, "readability"),
        ("é" * 49 + "x", "raw-html"),  # 50 characters, 99 bytes
        ("é" * 50, "readability"),  # 50 characters, 100 bytes
        ("€" * 33, "raw-html"),  # 99 bytes
        ("€" * 33 + "x", "readability"),  # 100 bytes
    ],
)
def test_fallback_threshold_counts_utf8_bytes(text: str, label: str) -> None:
    assert render_html(page(f"<p>\n  {text}  \n</p>"), BASE, False) == (text, label)


def test_no_article_at_all_falls_back_to_the_whole_page() -> None:
    html = page("<ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul>")
    assert render_html(html, BASE, False) == (
        "- [A](https://example.com/a)\n- [B](https://example.com/b)",
        "raw-html",
    )


def test_a_listing_page_comes_back_as_its_list() -> None:
    # Not an article: the page's main region, every card of the list, without the menu.
    cards = "".join(
        f"<div class='card'><h3><a href='/item/{n}'>Item {n}</a></h3>"
        f"<p>Short blurb number {n}, with a few words.</p></div>"
        for n in range(8)
    )
    html = page(f"<nav><a href='/'>Home</a></nav><div class='grid'>{cards}</div>")
    text, label = render_html(html, BASE, False)
    assert label == "readability"
    assert text.startswith("### [Item 0](https://example.com/item/0)")
    assert text.endswith(
        "### [Item 7](https://example.com/item/7)\n\nShort blurb number 7, with a few words."
    )


# --- rendering rules --------------------------------------------------------------------------


def raw(body: str) -> str:
    text, label = render_html(page(body), BASE, True)
    assert label == "raw-html"
    return text


def test_atx_headings() -> None:
    assert raw("<h1>A</h1><h2>B</h2><h3>C</h3><h4>D</h4><h5>E</h5><h6>F <b>bold</b></h6>") == (
        "# A\n\n## B\n\n### C\n\n#### D\n\n##### E\n\n###### F bold"
    )


def test_paragraphs_whitespace_and_entities() -> None:
    # "<f" could open an HTML tag in markdown, so the decoded "<" comes back escaped.
    assert raw("<p>a &amp; b&nbsp;c\n\n   d</p>   <p>e&lt;f&#x263A; &quot;q&quot;</p>") == (
        'a & b c d\n\ne\\<f☺ "q"'
    )


def test_line_break_inside_a_paragraph() -> None:
    assert raw("<p>line one<br>line two</p>") == "line one\nline two"


def test_text_that_looks_like_markdown_syntax_is_escaped() -> None:
    assert raw("<p># not a heading</p><p>1. not a list</p><p>- not an item</p>") == (
        "\\# not a heading\n\n1\\. not a list\n\n\\- not an item"
    )


def test_nested_lists() -> None:
    html = (
        "<ul><li>one<ul><li>sub<ol start=3><li>deep</li><li>deeper</li></ol></li></ul></li>"
        "<li>two</li></ul>"
    )
    assert raw(html) == "- one\n  - sub\n    3. deep\n    4. deeper\n- two"


def test_ordered_list_numbers_from_one() -> None:
    assert raw("<ol><li>a</li><li>b</li></ol>") == "1. a\n2. b"


def test_list_item_with_two_paragraphs() -> None:
    assert raw("<ul><li><p>first</p><p>second</p></li></ul>") == "- first\n\n  second"


def test_data_table_becomes_a_pipe_table() -> None:
    html = (
        "<table><caption>Prices</caption>"
        "<thead><tr><th>Name</th><th>Price</th></tr></thead>"
        "<tbody><tr><td>A|B</td><td>1</td></tr><tr><td>C</td></tr></tbody></table>"
    )
    assert raw(html) == "Prices\n\n| Name | Price |\n|---|---|\n| A\\|B | 1 |\n| C |  |"


def test_table_heavy_page_keeps_every_row_with_raw() -> None:
    rows = "".join(f"<tr><td>row {n}</td><td>{n * 3}</td></tr>" for n in range(500))
    html = page(f"<nav>Menu</nav><table><tr><th>Item</th><th>Value</th></tr>{rows}</table>")
    text, label = render_html(html, BASE, True)
    assert label == "raw-html"
    lines = text.split("\n")
    assert lines[:4] == ["Menu", "", "| Item | Value |", "|---|---|"]
    assert lines[4:] == [f"| row {n} | {n * 3} |" for n in range(500)]


def test_layout_table_becomes_paragraphs() -> None:
    html = "<table><tr><td><p>Layout one</p></td></tr><tr><td>Layout two</td></tr></table>"
    assert raw(html) == "Layout one\n\nLayout two"


def test_fenced_code_with_declared_language() -> None:
    html = (
        '<pre><code class="language-python">def f():\n    return 1\n</code></pre>'
        '<pre class="lang-js">x()</pre>'
        "<pre>plain ``` ticks</pre>"
        '<pre><code class="hljs">a <span class="kw">&lt;b&gt;</span></code></pre>'
    )
    assert raw(html) == (
        "```python\ndef f():\n    return 1\n```\n\n```js\nx()\n```\n\n"
        "````\nplain ``` ticks\n````\n\n```\na <b>\n```"
    )


def test_inline_code() -> None:
    assert raw("<p>run <code>x = 1</code> and <code>a`b</code></p>") == "run `x = 1` and ``a`b``"


def test_blockquote() -> None:
    assert raw("<blockquote><p>one</p><p>two</p></blockquote><p>after</p>") == (
        "> one\n>\n> two\n\nafter"
    )


def test_links_resolve_against_the_final_url() -> None:
    html = (
        '<p><a href="../up?q=1#f">Up</a> <a href="same.html">Same</a> '
        '<a href="/root">Root</a> <a href="//cdn.example.org/x y">Proto</a> '
        '<a href="https://other.example/(1)">Abs</a> <a href="mailto:a@b.c">Mail</a></p>'
    )
    assert raw(html) == (
        "[Up](https://example.com/up?q=1#f) [Same](https://example.com/dir/same.html) "
        "[Root](https://example.com/root) [Proto](https://cdn.example.org/x%20y) "
        "[Abs](https://other.example/%281%29) [Mail](mailto:a@b.c)"
    )


def test_javascript_links_keep_only_their_text() -> None:
    html = (
        '<p><a href="javascript:alert(1)">Run</a> <a href=" JaVaScRiPt:x()">Also</a> '
        '<a href="java\tscript:x">Tab</a> <a href="vbscript:x">VB</a> <a>Bare</a></p>'
    )
    assert raw(html) == "Run Also Tab VB Bare"


def test_base_href_is_honoured() -> None:
    html = '<html><head><base href="/other/"></head><body><a href="x">X</a></body></html>'
    assert render_html(html, BASE, True) == ("[X](https://example.com/other/x)", "raw-html")


def test_images_only_with_alt_text() -> None:
    html = (
        '<p><img src="/i.png" alt="A cat"> <img src="/n.png"> <img src="/e.png" alt="  ">'
        ' <img src="data:image/png;base64,AAAA" alt="inline">'
        ' <img data-src="lazy.png" src="data:," alt="Lazy"></p>'
    )
    assert (
        raw(html) == "![A cat](https://example.com/i.png) ![Lazy](https://example.com/dir/lazy.png)"
    )


def test_linked_card_stays_one_link() -> None:
    assert raw('<a href="/p"><div>Title</div><div>Blurb</div></a>') == (
        "[Title Blurb](https://example.com/p)"
    )


def test_adjacent_inline_elements_do_not_glue_words() -> None:
    assert raw(
        '<p><a href="/a">One</a><a href="/b">Two</a><span>Three</span><span>Four</span></p>'
    ) == ("[One](https://example.com/a) [Two](https://example.com/b) Three Four")


def test_no_raw_html_scripts_styles_or_hidden_content() -> None:
    html = (
        "<script>alert(1)</script><style>p{color:red}</style><noscript>Enable JS</noscript>"
        "<template><p>tpl</p></template><p hidden>hidden</p><p style='display: none'>gone</p>"
        "<svg><text>vector</text></svg><iframe src='/f'></iframe>"
        "<select><option>opt</option></select>"
        "<p>Visible <b>bold</b> <i>it</i> <span class='x'>span</span> <!-- comment --></p>"
    )
    assert raw(html) == "Visible bold it span"


def test_cookie_banners_are_dropped_everywhere() -> None:
    html = (
        '<div id="cookie-banner">We use cookies. <button>Accept all</button></div>'
        f'<div class="consent-overlay">Your privacy choices</div><p>{ARTICLE_TEXT}</p>'
    )
    assert render_html(page(html), BASE, True) == (ARTICLE_TEXT, "raw-html")
    assert render_html(page(html), BASE, False) == (ARTICLE_TEXT, "readability")


def test_large_element_with_a_consent_class_is_kept() -> None:
    text = ARTICLE_TEXT * 10
    html = f'<div class="has-cookie-consent"><p>{text}</p></div>'
    assert render_html(page(html), BASE, False) == (text, "readability")


# --- robustness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("opening", "expected"),
    [
        ("<div>", "deep"),
        ("<span>", "deep"),
        ("<b><i>", "deep"),
        ("<table><tr><td>", "deep"),
        ("<a href=x>", "[deep](https://example.com/dir/x)"),
    ],
)
@pytest.mark.parametrize("raw_flag", [False, True])
def test_ten_thousand_deep_nesting(opening: str, expected: str, raw_flag: bool) -> None:
    html = opening * 10_000 + "deep"
    assert render_html(html, BASE, raw_flag) == (expected, "raw-html")


@pytest.mark.parametrize("opening", ["<ul><li>", "<blockquote>", "<ol><li><p>", "<h2><div>"])
def test_ten_thousand_deep_block_nesting_renders(opening: str) -> None:
    text, label = render_html(opening * 10_000 + "deep", BASE, False)
    assert label == "raw-html"
    assert text.endswith("deep")


@pytest.mark.parametrize("unit", ["<div>", "<div></b>", "<x-a></x-b>", "<span><i>"])
def test_hundreds_of_thousands_deep_nesting_is_flattened_not_quadratic(unit: str) -> None:
    # Parsing is quadratic in depth; start tags past the depth limit are dropped, text stays.
    assert render_html(unit * 200_000 + "deep", BASE, False) == ("deep", "raw-html")


def test_ten_thousand_deep_pre_is_one_code_block() -> None:
    assert render_html("<pre>" * 10_000 + "deep", BASE, False) == ("```\ndeep\n```", "raw-html")


def test_deeply_nested_article_is_extracted() -> None:
    html = "<div>" * 10_000 + f"<p>{ARTICLE_TEXT}</p>"
    assert render_html(html, BASE, False) == (ARTICLE_TEXT, "readability")


def test_huge_attributes_and_nul_bytes() -> None:
    html = (
        f'<p title="{"t" * 1_000_000}">a\x00b</p>'
        f'<a href="/{"h" * 100_000}">long</a><img src="/i.png" alt="x\x00y">'
    )
    text, label = render_html(html, BASE, False)
    assert label == "raw-html"
    assert (
        text
        == f"ab\n\n[long](https://example.com/{'h' * 100_000})![x\ufffdy](https://example.com/i.png)"
    )


def test_unclosed_and_misnested_tags() -> None:
    html = "<p>one<p>two<b>bold<i>both</b>italic</i><ul><li>a<li>b</ul><table><td>cell"
    assert render_html(html, BASE, True) == (
        "one\n\ntwoboldbothitalic\n\n- a\n- b\n\ncell",
        "raw-html",
    )


def test_lone_surrogates_and_control_characters() -> None:
    # a "<" at the very end is escaped: what would follow it is unknown
    assert render_html("\x00\ud800<", BASE, False) == ("\ufffd\\<", "raw-html")
    assert render_html("", BASE, False) == ("", "raw-html")
    assert render_html("a\x01b", BASE, True) == ("a\x01b", "raw-html")


def test_bad_base_url_never_raises() -> None:
    assert render_html('<a href="x">X</a>', "http://[::1", True) == ("X", "raw-html")
    assert render_html('<a href="http://[::1">X</a>', BASE, True) == (
        "[X](http://[::1)",
        "raw-html",
    )
    assert render_html('<a href="//[::1">X</a>', BASE, True) == ("X", "raw-html")


def test_a_failing_renderer_returns_the_short_article_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(extract, "parse", broken)
    assert render_html("<p>x</p>", BASE, False) == ("", "raw-html")
    assert render_html("<p>x</p>", BASE, True) == ("", "raw-html")


def test_collector_paused_while_renders_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector stays off until the last of overlapping renders ends, then comes back on."""
    import gc
    import threading

    both_inside = threading.Barrier(2)
    first_done = threading.Event()
    seen: list[bool] = []
    real_parse = extract.parse

    def parse_together(markup: bytes, progress: object = None) -> object:
        both_inside.wait(timeout=5)
        if markup == b"<p>second</p>":
            first_done.wait(timeout=5)  # the other render has returned by now
            seen.append(gc.isenabled())
        return real_parse(markup)

    def first() -> None:
        render_html("<p>first</p>", BASE, True)
        first_done.set()

    monkeypatch.setattr(extract, "parse", parse_together)
    assert gc.isenabled()
    threads = [
        threading.Thread(target=first),
        threading.Thread(target=render_html, args=("<p>second</p>", BASE, True)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert seen == [False]
    assert gc.isenabled()


def test_collector_left_off_when_it_was_off() -> None:
    import gc

    gc.disable()
    try:
        assert render_html("<p>x</p>", BASE, True) == ("x", "raw-html")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_page_without_a_paragraph_is_not_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    # No block holds 25 characters of its own: the scorer has nothing to find and is skipped.
    scored: list[object] = []
    real_select = extract.select

    def recording_select(document: Document) -> Selection:
        scored.append(document)
        return real_select(document)

    monkeypatch.setattr(extract, "select", recording_select)
    html = page("<table>" + "<tr><td>cell one</td><td>cell two</td></tr>" * 50 + "</table>")
    text, label = render_html(html, BASE, False)
    assert (label, scored) == ("raw-html", [])
    assert text.startswith("| cell one | cell two |\n|---|---|\n| cell one | cell two |")
    assert render_html(page(f"<p>{ARTICLE_TEXT}</p>"), BASE, False) == (ARTICLE_TEXT, "readability")
    assert len(scored) == 1
