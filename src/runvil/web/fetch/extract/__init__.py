"""HTML to markdown for ``web/fetch``: the page's main content, or the whole page.

``render_html`` is the one entry point the fetch tool calls. It never raises: rendering an HTML
page never fails a fetch (seed 001, "Readability extraction"). The work is split into small
private modules: ``_dom`` parses with lexbor into a compact tree, ``_content`` chooses the main
content, ``_markdown`` renders markdown, ``_urls`` makes links absolute.
"""

from __future__ import annotations

import gc

from ._content import is_article, is_boilerplate, select
from ._dom import Document, parse
from ._markdown import Renderer, Resolver
from ._urls import make_resolver

__all__ = ["FALLBACK_BYTES", "RAW_HTML", "READABILITY", "render_html"]

READABILITY = "readability"
RAW_HTML = "raw-html"

# Under this many UTF-8 bytes of trimmed article markdown, the whole page is rendered instead.
FALLBACK_BYTES = 100


def render_html(html: str, base_url: str, raw: bool) -> tuple[str, str]:
    """Render ``html`` as markdown; return ``(text, extraction label)``.

    With ``raw`` false the main content is extracted (label ``readability``); when that yields
    fewer than 100 bytes after trimming, or the page is not an article, the whole page is
    rendered instead (label ``raw-html``). With ``raw`` true the whole page is rendered.
    Relative links and images resolve against ``base_url``, the final URL of the fetch.
    """
    article = ""
    # The tree is hundreds of thousands of small objects on a big page; the cyclic collector
    # would rescan them again and again while they are built (4x the parse time on an 8 MiB
    # table). None of them outlives this call, so it stays off until the call ends.
    collecting = gc.isenabled()
    gc.disable()
    try:
        document = parse(html)
        resolve = make_resolver(base_url, document.base_href)
        if not raw:
            article = _article(document, resolve)
            if len(article.encode("utf-8", "surrogatepass")) >= FALLBACK_BYTES:
                return article, READABILITY
        return Renderer(resolve).render([document.body]), RAW_HTML
    except Exception:  # rendering never fails a fetch; the short article text is the fallback
        return article, RAW_HTML
    finally:
        if collecting:
            gc.enable()


def _article(document: Document, resolve: Resolver) -> str:
    """The main content as markdown, or ``""`` when the page is not an article."""
    selection = select(document)
    if not selection.roots:
        return ""
    # Rendering can only shrink the article (skipped boilerplate), and a smaller article is
    # never more of an article: a page that fails the decision with the whole selection counted
    # fails it after rendering too, so a big table or listing is not rendered twice.
    if not is_article(document, selection, selection.chars, selection.chars):
        return ""
    renderer = Renderer(resolve, is_boilerplate)
    text = renderer.render(selection.roots)
    article_chars = selection.chars - renderer.skipped_chars
    if not is_article(document, selection, article_chars, renderer.readable_chars):
        return ""
    return text
