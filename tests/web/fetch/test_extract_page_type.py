"""The page type (``_page_type``) and its chrome rules (``_type_chrome``): the decision from
declarations, generator and URL, and robustness of what reads them under Hypothesis."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._dom import parse
from runvil.web._fetch.extract._page_type import (
    ARTICLE,
    DOCS,
    LISTING,
    OTHER,
    PRODUCT,
    THREAD,
    page_type,
)
from runvil.web._fetch.extract._signals import Signals, thread_path
from runvil.web._fetch.extract._tuning import TUNING
from runvil.web._fetch.extract._type_chrome import LEAVE_OUT, TypeChrome

LABELS = {"readability", "raw-html"}


def _signals(url: str, **fields: object) -> Signals:
    signals = Signals()
    signals.url = url
    signals.thread_url = thread_path(url)
    for name, value in fields.items():
        setattr(signals, name, value)
    return signals


@pytest.mark.parametrize(
    ("url", "fields", "expected"),
    [
        ("https://example.com/threads/ridge.77/", {}, THREAD),
        ("https://example.com/a/b", {"ld_thread": True}, THREAD),
        ("https://example.com/a/b", {"ld_thread": True, "ld_faq": True}, OTHER),
        ("https://example.com/a/b", {"thread_markup": True, "ld_faq": True}, THREAD),
        ("https://example.com/a/b", {"ld_products": 1}, PRODUCT),
        ("https://example.com/a/b", {"og_type": "product"}, PRODUCT),
        ("https://example.com/a/b", {"ld_products": 2}, OTHER),
        ("https://example.com/a/b", {"ld_docs": True, "ld_article": True}, DOCS),
        ("https://example.com/a/b", {"generator": "docusaurus v3.1.0"}, DOCS),
        ("https://example.com/a/b", {"generator": "mkdocs-1.5.3, mkdocs-material-9"}, DOCS),
        ("https://example.com/a/b", {"generator": "wordpress 6.5"}, OTHER),
        ("https://docs.example.com/a/b", {}, DOCS),
        ("https://example.com/docs/setup", {}, DOCS),
        ("https://example.com/en/latest/config.html", {}, DOCS),
        ("https://example.com/docs/setup", {"og_type": "article"}, DOCS),
        ("https://example.com/docs/setup", {"ld_article": True}, ARTICLE),
        ("https://example.com/a/b", {"ld_listing": True}, LISTING),
        ("https://example.com/category/walks/", {}, LISTING),
        ("https://example.com/tag/walks/page/2/", {}, LISTING),
        ("https://example.com/category/walks/", {"ld_article": True}, ARTICLE),
        ("https://example.com/2024/05/14/ridge", {"dated_url": True}, ARTICLE),
        ("https://example.com/", {}, OTHER),
        ("not a url", {}, OTHER),
        ("", {}, OTHER),
    ],
)
def test_the_page_type_follows_declarations_generator_and_url(
    url: str, fields: dict[str, object], expected: str
) -> None:
    assert page_type(_signals(url, **fields)) == expected


def test_the_generator_and_docs_types_are_read_from_the_page() -> None:
    html = (
        "<html><head><meta name='generator' content='Sphinx 7.2'>"
        "<script type='application/ld+json'>"
        + json.dumps({"@type": "TechArticle", "headline": "Setup"})
        + "</script></head><body><p>x</p></body></html>"
    )
    signals = parse(html).signals
    assert signals.generator == "sphinx 7.2"
    assert signals.ld_docs is True
    assert page_type(signals) == DOCS


def test_chrome_reads_stop_at_their_bound() -> None:
    # Every block starts like a thread's panel: the rule reads at most chrome_reads of them.
    count = TUNING.chrome_reads + 500
    html = "<body>" + "<div>Who is online right now</div>" * count + "</body>"
    document = parse(html)
    chrome = TypeChrome(THREAD)
    left_out = sum(
        chrome(element) == LEAVE_OUT for element in document.elements if element.tag == "div"
    )
    assert left_out == TUNING.chrome_reads
    assert chrome.reads == 0


# --- Hypothesis: declarations and chrome markup never make rendering fail ------------------------

TYPES = ["TechArticle", "APIReference", "Product", "QAPage", "Question", "ItemList",
         "DiscussionForumPosting", "Article", "CollectionPage", 7, None, ["Product"]]  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["@type", "@graph", "mainEntity", "hasPart", "articleBody", "name"]),
            children | st.sampled_from(TYPES),
            max_size=4,
        )
    ),
    max_leaves=30,
)
CHROME_PIECES = [
    "<div class='signature'>sig</div>", "<div data-role='memberSignature'>s</div>",
    "<dl><dt>Joined</dt><dd>Jan 2020</dd></dl>", "<span itemprop='price'>9.99</span>",
    "<div class='price-box'><a>Be the first to review</a></div>",
    "<a class='headerlink' href='#x'>¶</a>", "<a href='#'></a>", "<header><h1>T</h1></header>",
    "<h2>Shipping &amp; Returns</h2>", "<div>Who is online</div>", "<p>Last updated today</p>",
    "<ol class='search-results'><li>r</li></ol>", "<div>Sort by</div>",
    "<p>The ridge path climbs through beech woods, steady but never steep, to the view.</p>",
]  # fmt: skip
URLS = [
    "https://example.com/threads/x.1/", "https://docs.example.com/a", "https://example.com/p",
    "https://example.com/category/x/", "https://example.com/docs/", "https://example.com/",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    json_values,
    st.text(max_size=40),
    st.lists(st.sampled_from(CHROME_PIECES) | st.text(max_size=20), max_size=30),
    st.sampled_from(URLS),
)
def test_declarations_and_chrome_markup_never_raise(
    ld: object, generator: str, pieces: list[str], url: str
) -> None:
    head = (
        f"<meta name='generator' content='{generator.replace(chr(39), '')}'>"
        f"<script type='application/ld+json'>{json.dumps(ld)}</script>"
    )
    html = f"<html><head>{head}</head><body><main>{''.join(pieces)}</main></body></html>"
    for raw in (False, True):
        text, label = render_html(html, url, raw)
        assert isinstance(text, str)
        assert label in LABELS


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_any_url_has_a_page_type(url: str) -> None:
    assert page_type(_signals(url)) in {ARTICLE, THREAD, PRODUCT, DOCS, LISTING, OTHER}
