"""render_html: the fallback rule, the raw flag and the contract that rendering never fails."""

from __future__ import annotations

from runvil.web.fetch.extract import render_html

BASE = "https://example.com/dir/page.html"

ARTICLE_TEXT = (
    "The committee met on Tuesday, reviewed the budget, and agreed on the plan for the year. " * 4
).strip()


def page(body: str) -> str:
    return f"<!doctype html><html><head><title>T</title></head><body>{body}</body></html>"


def test_short_div_falls_back_to_the_whole_page() -> None:
    assert render_html("<div>short</div>", BASE, False) == ("short", "raw-html")


def test_raw_renders_the_whole_page() -> None:
    html = page(f"<nav><a href='/'>Home</a></nav><article><p>{ARTICLE_TEXT}</p></article>")
    assert render_html(html, BASE, True) == (
        f"[Home](https://example.com/)\n\n{ARTICLE_TEXT}",
        "raw-html",
    )


def test_article_drops_navigation_and_footer() -> None:
    html = page(
        "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        f"<article><h1>Budget</h1><p>{ARTICLE_TEXT}</p></article>"
        "<footer>Copyright 2026</footer>"
    )
    assert render_html(html, BASE, False) == (f"# Budget\n\n{ARTICLE_TEXT}", "readability")


def test_empty_and_garbage_input_render_to_empty_raw_text() -> None:
    assert render_html("", BASE, False) == ("", "raw-html")
    assert render_html("\x00\ud800<", BASE, False) == ("\ufffd<", "raw-html")
