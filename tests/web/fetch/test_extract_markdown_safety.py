"""The markdown a page cannot forge: page text is escaped wherever it could be syntax, and links
and images point only at http, https (and, for links, mailto) URLs."""

from __future__ import annotations

import pytest

from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._escape import escape_line_start, escape_text
from runvil.web._fetch.extract._text import render_text

BASE = "https://example.com/dir/page.html"


def raw(body: str) -> str:
    text, label = render_html(f"<html><body>{body}</body></html>", BASE, True)
    assert label == "raw-html"
    return text


# --- links and images the page writes with its text ----------------------------------------------


def test_text_that_spells_a_link_stays_text() -> None:
    assert raw("<p>[x](javascript:alert(1)) and ![y](https://t.example/p.gif)</p>") == (
        "\\[x](javascript:alert(1)) and !\\[y](https://t.example/p.gif)"
    )


def test_link_text_cannot_close_the_link_early() -> None:
    html = '<p><a href="https://ok.example/">a](javascript:alert(1)) [b</a></p>'
    assert raw(html) == "[a\\](javascript:alert(1)) \\[b](https://ok.example/)"


def test_link_text_inside_blocks_of_a_link_is_escaped_too() -> None:
    html = '<a href="https://ok.example/"><h2>x](javascript:alert(1)) [y</h2><p>z</p></a>'
    assert raw(html) == "[x\\](javascript:alert(1)) \\[y z](https://ok.example/)"


def test_alt_text_cannot_close_the_image_early() -> None:
    html = '<p><img src="/i.png" alt="a](javascript:alert(1)) ![b"></p>'
    assert raw(html) == "![a\\](javascript:alert(1)) !\\[b](https://example.com/i.png)"


def test_a_bang_before_a_link_does_not_make_it_an_image() -> None:
    assert raw('<p>Look!<a href="/x">here</a> and Wow!<img src="/i.png" alt="cat"></p>') == (
        "Look\\![here](https://example.com/x) and Wow\\!![cat](https://example.com/i.png)"
    )


def test_reference_definitions_and_footnotes_cannot_be_written() -> None:
    assert raw("<p>[a]: javascript:alert(1)</p><p>[^1]: note</p>") == (
        "\\[a]: javascript:alert(1)\n\n\\[^1]: note"
    )


def test_html_and_autolinks_in_text_stay_text() -> None:
    html = (
        "<p>&lt;img src=x onerror=alert(1)&gt; &lt;/p&gt; &lt;!-- c --&gt; "
        "&lt;https://t.example&gt; &lt;a@b.example&gt; a &lt; b and 1&lt;2</p>"
    )
    assert raw(html) == (
        "\\<img src=x onerror=alert(1)> \\</p> \\<!-- c --> \\<https://t.example> "
        "\\<a@b.example> a < b and 1<2"
    )


# --- link targets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "href",
    [
        "file:///etc/passwd",
        "FILE:///c:/x",
        "ftp://files.example/x",
        "tel:+123",
        "intent://x#Intent;end",
        "data:text/html,<b>x</b>",
        "javascript:alert(1)",
        "  VBScript:x",
        "java\nscript:x",
    ],
)
def test_only_http_https_and_mailto_targets_are_printed(href: str) -> None:
    assert raw(f'<p><a href="{href}">t</a> <img src="{href}" alt="i"></p>') == "t"


def test_http_https_and_mailto_targets_are_printed() -> None:
    html = (
        '<p><a href="HTTPS://A.example/x">a</a> <a href="http://b.example/">b</a> '
        '<a href="MailTo:me@c.example">c</a> <img src="mailto:me@c.example" alt="d"></p>'
    )
    assert raw(html) == "[a](https://A.example/x) [b](http://b.example/) [c](MailTo:me@c.example)"


def test_targets_stay_one_url() -> None:
    html = (
        '<p><a href="/a b(c)<d>">s</a> <a href="/p\\q?x=\\(1)">t</a> '
        '<a href="https://x.example/\x01y">u</a></p>'
    )
    assert raw(html) == (
        "[s](https://example.com/a%20b%28c%29%3Cd%3E) [t](https://example.com/p/q?x=%5C%281%29) "
        "[u](https://x.example/%01y)"
    )


# --- emphasis, code, entities, backslashes -------------------------------------------------------


def test_emphasis_code_and_strikethrough_stay_text() -> None:
    assert raw("<p>*bold* _it_ `code` ~~gone~~ **x**</p>") == (
        "\\*bold\\* \\_it\\_ \\`code\\` \\~\\~gone\\~\\~ \\*\\*x\\*\\*"
    )


def test_characters_that_cannot_be_syntax_are_left_alone() -> None:
    assert raw("<p>snake_case_name 2 * 3 a ~ b x_1 C:\\Users\\me AT&amp;T rocks</p>") == (
        "snake_case_name 2 * 3 a ~ b x_1 C:\\Users\\me AT&T rocks"
    )


def test_entity_references_and_backslash_escapes_stay_text() -> None:
    assert raw("<p>&amp;amp; &amp;#60; \\* \\[ end\\</p>") == (
        "\\&amp; \\&#60; \\\\\\* \\\\\\[ end\\\\"
    )


def test_code_keeps_its_text_unescaped() -> None:
    html = "<p><code>a_b *c* [d](e)</code></p><pre>x = [1](2) * 3\n# no heading</pre>"
    assert raw(html) == "`a_b *c* [d](e)`\n\n```\nx = [1](2) * 3\n# no heading\n```"


# --- block syntax at line starts ------------------------------------------------------------------


def test_setext_underlines_breaks_and_table_rows_stay_text() -> None:
    html = (
        "<p>Title<br>===<br>Sub<br>---<br>a | b<br>--- | ---<br>:-- |<br>***<br>___</p>"
        "<p>- - -</p><p>+ plus</p><p>&gt; quote</p>"
    )
    assert raw(html) == (
        "Title\n\\===\nSub\n\\---\na | b\n\\--- | ---\n\\:-- |\n\\*\\*\\*\n\\_\\_\\_"
        "\n\n\\- - -\n\n\\+ plus\n\n\\> quote"
    )


def test_headings_list_items_and_cells_are_escaped_too() -> None:
    html = (
        "<h2>[x](javascript:1) C #</h2><ul><li>1. no</li><li>*star*</li></ul>"
        "<table><tr><th>a|b</th><th>[c](d)</th></tr><tr><td>1</td><td>2</td></tr></table>"
    )
    assert raw(html) == (
        "## \\[x](javascript:1) C \\#\n\n- 1\\. no\n- \\*star\\*\n\n"
        "| a\\|b | \\[c](d) |\n|---|---|\n| 1 | 2 |"
    )


def test_the_text_rendering_escapes_like_the_markdown() -> None:
    page = b"<p>[x](javascript:alert(1))</p><p># h</p><script>[y](z)</script><p>a<br>---</p>"
    assert render_text(page) == "\\[x](javascript:alert(1))\n\n\\# h\n\na\n\\---"


# --- the escaping functions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "in_link", "expected"),
    [
        ("plain words", False, "plain words"),
        ("a]b", False, "a]b"),
        ("a]b", True, "a\\]b"),
        ("<", False, "\\<"),  # the end of a piece: what follows is unknown
        ("x*", False, "x\\*"),
        ("a_", False, "a\\_"),
        ("&", False, "\\&"),
        ("\\", False, "\\\\"),
        ("\\a", False, "\\a"),
        ("&copy", False, "\\&copy"),
        ("&copy here", False, "&copy here"),
    ],
)
def test_escape_text(text: str, in_link: bool, expected: str) -> None:
    assert escape_text(text, in_link) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# h", "\\# h"),
        ("-", "\\-"),
        ("--", "\\--"),
        ("=", "\\="),
        ("-1", "-1"),
        ("a = b", "a = b"),
        ("12) x", "12\\) x"),
        ("2024 was", "2024 was"),
    ],
)
def test_escape_line_start(line: str, expected: str) -> None:
    assert escape_line_start(line) == expected
