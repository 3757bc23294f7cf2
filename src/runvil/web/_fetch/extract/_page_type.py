"""What kind of page this is, decided from what the page says about itself and its URL.

Why: each kind of page holds its main content differently, and what is furniture on one is
content on another. A forum thread's replies are its content; an article's comments are not.
A product page's specification table is content; its "shipping and returns" panel is not.
A documentation page's title sits in a ``<header>`` that on a news page holds the byline and
the share bar. So the rules that leave furniture out (``_type_chrome``) ask the kind first.

The decision is a pure function of the page's signals (``_signals.Signals``): its schema.org
types in JSON-LD and microdata, ``og:type``, the engine it names in ``<meta name="generator">``,
and the shape of its URL. It reads no element and changes nothing. In order:

- ``thread``: a ``DiscussionForumPosting``, ``QAPage`` or ``Question`` (JSON-LD or microdata;
  in JSON-LD not beside an ``FAQPage``, whose questions are an article's), or a forum's or Q&A
  site's URL path (``/threads/``, ``/t/``, ``/questions/``, ``viewtopic.php``...);
- ``product``: one JSON-LD ``Product`` or ``og:type=product``;
- ``docs``: a ``TechArticle`` or ``APIReference``, a documentation generator named in
  ``<meta name="generator">`` (Sphinx, MkDocs, Docusaurus, VitePress...), or a URL shaped like
  documentation (a ``docs.`` host; a ``/docs/``, ``/reference/``, ``/en/latest/`` path on a
  page that declares no article in JSON-LD: documentation sites give every page
  ``og:type=article``);
- ``listing``: a JSON-LD ``CollectionPage``, ``ItemList`` or ``SearchResultsPage``, or a URL
  shaped like an index (``/category/``, ``/tag/``, ``/search``, ``/page/2/``);
- ``article``: an article by its declarations (``Signals.declares_article``);
- ``other``: nothing said (a landing page, a service page, or an article that says nothing).

An article that also declares itself a product or a collection keeps those precedences: a
shop's product page often carries ``og:type=article`` from a blog theme.
"""

from __future__ import annotations

import re

from ._signals import Signals

ARTICLE = "article"
THREAD = "thread"
PRODUCT = "product"
DOCS = "docs"
LISTING = "listing"
OTHER = "other"

# Documentation generators, as they name themselves in <meta name="generator">.
_DOCS_GENERATORS = re.compile(
    r"\b(?:sphinx|mkdocs|docusaurus|vitepress|vuepress|docsify|gitbook|nextra|starlight|"
    r"mintlify|antora|mdbook|jsdoc|javadoc|doxygen|docfx|hugo-book|docsy|readthedocs)\b"
)
# A documentation URL: a docs.* or developer.* host, or a path segment documentation uses.
_DOCS_HOST = re.compile(r"^(?:docs?|developers?|devdocs|wiki|manual|api|learn|help)\.")
_DOCS_PATH = re.compile(
    r"/(?:docs?|documentation|manual|reference|api-?reference|api|guides?|handbook|"
    r"tutorials?|howto|library|latest|stable|wiki)(?:/|\.html?$|$)",
    re.IGNORECASE,
)
# An index URL: categories, tags, archives, search, paging, authors' pages.
_LISTING_PATH = re.compile(
    r"/(?:category|categories|tag|tags|topics?/[^/]+/?$|archives?|search|page/\d+|author|"
    r"authors|collections?|shop|products/?$|blog/?$|news/?$|results?)(?:[/?#]|$)",
    re.IGNORECASE,
)


def page_type(signals: Signals) -> str:
    """The kind of page ``signals`` describe (see the module's docstring for the order)."""
    if signals.thread_url or signals.thread_markup or (signals.ld_thread and not signals.ld_faq):
        return THREAD
    if signals.ld_products == 1 or signals.og_type == "product":
        return PRODUCT
    host, path = _split(signals.url)
    if (
        signals.ld_docs
        or _DOCS_GENERATORS.search(signals.generator) is not None
        or (_DOCS_HOST.match(host) is not None and not signals.ld_listing)
        or (_DOCS_PATH.search(path) is not None and not signals.ld_article)
    ):
        return DOCS
    if signals.ld_listing or (
        _LISTING_PATH.search(path) is not None and not signals.declares_article
    ):
        return LISTING
    if signals.declares_article:
        return ARTICLE
    return OTHER


def _split(url: str) -> tuple[str, str]:
    """The lower-cased host and the path (with its query) of ``url``; ``("", "")`` when it
    has none."""
    start = url.find("//")
    if start < 0:
        return "", ""
    rest = url[start + 2 :]
    slash = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0),
                default=len(rest))  # fmt: skip
    host = rest[:slash].rsplit("@", 1)[-1].split(":", 1)[0].lower()
    return host, rest[slash:]
