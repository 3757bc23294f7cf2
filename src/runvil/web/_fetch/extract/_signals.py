"""What a page declares about itself: its Open Graph type and its schema.org JSON-LD.

Publishers mark up their articles for search engines and social networks, so most news and
blog pages say what they are: ``<meta property="og:type" content="article">``, and a JSON-LD
``NewsArticle``, ``BlogPosting`` or ``Article`` object, often with the article's text as
``articleBody``. A collection page says ``CollectionPage``, ``ItemList`` or
``SearchResultsPage`` instead.

These declarations are evidence, not truth. Many sites give every page ``og:type=article``;
an ``articleBody`` can be a teaser, a truncated first paragraph or a stale copy. So
``_pick`` and ``_kind`` weigh them against the page's own structure; nothing here decides
anything.

Reading them costs little: ``og:type`` comes from ``<head>`` only, and JSON-LD is looked for
only when the page's bytes contain ``ld+json``. Scripts over :data:`_SCRIPT_MAX_CHARS`, more
than :data:`_SCRIPTS_MAX` scripts and objects nested past :data:`_NODES_MAX` nodes are skipped,
so a hostile page cannot make this step expensive.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ARTICLE_TYPE = re.compile(r"(?:Article|Posting|Report)$")
_LISTING_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage"})
_THREAD_TYPES = frozenset({"DiscussionForumPosting", "QAPage", "Question"})
# Technical documentation: schema.org's types for it.
_DOCS_TYPES = frozenset({"TechArticle", "APIReference"})
# Microdata: itemtype="https://schema.org/DiscussionForumPosting" (the name ends there).
_THREAD_ITEMTYPE = re.compile(
    rb"schema\.org/(?:" + b"|".join(sorted(name.encode() for name in _THREAD_TYPES)) + rb")[\"'\s]"
)
_SCRIPT_MAX_CHARS = 512 * 1024
_SCRIPTS_MAX = 32
_NODES_MAX = 5000
_BODY_MIN_CHARS = 200  # an articleBody shorter than this says nothing about where the text is


class Signals:
    """The page's declarations: ``og_type`` (lower-cased, ``""`` when absent), whether its
    JSON-LD declares an article (``ld_article``), a collection (``ld_listing``) or a forum
    thread or Q&A page (``ld_thread``, on which comments are the content), the longest
    ``articleBody`` it gives (``""`` when none), and whether the page is dated: a publication
    date in ``article:published_time`` or JSON-LD ``datePublished`` (``published``), or a date
    in its URL's path (``dated_url``, set by the caller, which knows the URL)."""

    __slots__ = (
        "article_body",
        "dated_url",
        "generator",
        "ld_article",
        "ld_docs",
        "ld_faq",
        "ld_listing",
        "ld_products",
        "ld_thread",
        "og_type",
        "published",
        "thread_markup",
        "thread_url",
        "url",
    )

    def __init__(self) -> None:
        self.og_type = ""
        self.ld_article = False
        self.ld_listing = False
        self.ld_thread = False
        self.ld_docs = False  # a TechArticle or APIReference (documentation)
        self.ld_faq = False  # an FAQPage: its Questions are an article's, not a thread's
        self.generator = ""  # <meta name="generator">, lower-cased: the site's engine
        self.url = ""  # the page's URL (set by the caller): its shape is a signal too
        self.ld_products = 0
        self.article_body = ""
        self.published = False
        self.dated_url = False
        self.thread_markup = False  # microdata itemtype of a forum post or a question
        self.thread_url = False  # a forum's or a Q&A site's URL path (set by the caller)

    @property
    def thread(self) -> bool:
        """A forum thread or a Q&A page, whose comments and replies are its content, by its
        JSON-LD or microdata type."""
        return self.ld_thread or self.thread_markup

    @property
    def thread_region(self) -> bool:
        """A page whose main region is a thread's posts: declared so (:attr:`thread`), or with
        a forum's or a Q&A site's URL path (:func:`thread_path`). The URL alone does not turn
        an article pick's comment names into content: a thread's first post often holds the
        page (an article with its readers' comments under it has such URLs too)."""
        return self.thread or self.thread_url

    @property
    def declares_article(self) -> bool:
        """A page about one thing: an article by its JSON-LD, by ``og:type`` without a
        JSON-LD collection, or a page with a publication date of its own (a listing has many
        dates or none); or a product page, by ``og:type`` or by one JSON-LD ``Product``."""
        if self.ld_article:
            return True
        if self.ld_listing:
            return False
        return (
            self.og_type in ("article", "product")
            or self.published
            or self.dated_url
            or self.ld_products == 1
        )


def read_signals(tree: Any, data: bytes) -> Signals:
    """The declarations of a page parsed by lexbor (``tree``) from ``data``."""
    signals = Signals()
    head = tree.head
    if head is not None:
        meta = head.css_first('meta[property="og:type"]')
        if meta is not None:
            signals.og_type = (meta.attributes.get("content") or "").strip().lower()
        signals.published = head.css_first('meta[property="article:published_time"]') is not None
        generator = head.css_first('meta[name="generator"]')
        if generator is not None:
            signals.generator = (generator.attributes.get("content") or "")[:200].lower()
    signals.thread_markup = b"schema.org/" in data and bool(_THREAD_ITEMTYPE.search(data))
    if b"ld+json" in data:
        for script in tree.css('script[type="application/ld+json"]')[:_SCRIPTS_MAX]:
            text = script.text(deep=True)
            if text and len(text) <= _SCRIPT_MAX_CHARS:
                _read_json_ld(text, signals)
    return signals


def _read_json_ld(text: str, signals: Signals) -> None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return
    stack: list[Any] = [data]
    nodes = 0
    while stack and nodes < _NODES_MAX:
        node = stack.pop()
        nodes += 1
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        types = node.get("@type")
        for name in types if isinstance(types, list) else [types]:
            if not isinstance(name, str):
                continue
            if name in _THREAD_TYPES:
                signals.ld_thread = True
            elif name == "Product":
                signals.ld_products += 1
            elif name in _DOCS_TYPES:
                signals.ld_docs = True
            elif name == "FAQPage":
                signals.ld_faq = True
            if _ARTICLE_TYPE.search(name):
                signals.ld_article = True
                body = node.get("articleBody")
                if isinstance(body, str) and len(body) > len(signals.article_body):
                    signals.article_body = body
            elif name in _LISTING_TYPES:
                signals.ld_listing = True
        if node.get("datePublished"):
            signals.published = True
        for key in ("@graph", "mainEntity", "mainEntityOfPage", "hasPart"):
            child = node.get(key)
            if isinstance(child, (dict, list)):
                stack.append(child)


def body_probes(article_body: str) -> list[str]:
    """Short pieces of a declared ``articleBody`` to look for in the page's text: a run of
    words from inside its first sentences and from near its end, whitespace collapsed."""
    words = article_body.split()
    if len(" ".join(words)) < _BODY_MIN_CHARS:
        return []
    probes = []
    for start in (2, 12, max(0, len(words) - 12)):
        piece = " ".join(words[start : start + 5])
        if len(piece) >= 20:
            probes.append(piece)
    return probes


# A date in a URL's path: /2021/05/12/, /2021-05-12-, /2021/05/.
_PATH_DATE = re.compile(
    r"/(?:19|20)\d\d[/-](?:0?[1-9]|1[0-2])(?:[/-](?:0?[1-9]|[12]\d|3[01]))?(?:[/-]|$)"
)


def dated_path(url: str) -> bool:
    """Whether the path of ``url`` holds a date, as news and blog URLs often do."""
    start = url.find("//")
    slash = url.find("/", start + 2 if start >= 0 else 0)
    if slash < 0:
        return False
    return _PATH_DATE.search(url, slash) is not None


# The path of a forum thread or a Q&A page, as forum engines and Q&A sites shape it:
# /forum/..., /threads/123-title, /topic/..., /t/title/123, /r/x/comments/..., /questions/123,
# /discussion/..., showthread.php, viewtopic.php.
_THREAD_PATH = re.compile(
    r"/(?:forums?|threads?|topics?|t|comments|questions|discussions?|showthread|viewtopic)"
    r"(?:[/.?#-]|$)",
    re.IGNORECASE,
)


def thread_path(url: str) -> bool:
    """Whether the path of ``url`` is shaped like a forum thread's or a Q&A page's."""
    start = url.find("//")
    slash = url.find("/", start + 2 if start >= 0 else 0)
    if slash < 0:
        return False
    return _THREAD_PATH.search(url, slash) is not None
