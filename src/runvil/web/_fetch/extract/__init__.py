"""HTML to markdown for ``web/fetch``: the page's main content, or the whole page.

``render_html`` is the one entry point the fetch tool calls. It never raises: rendering an HTML
page never fails a fetch (seed 001, "Readability extraction"). The work is split into small
private modules, one stage of the pipeline each (docs/extraction.md, "The pipeline"):
``_sanitise`` rewrites the page so parsing it is linear and bounded, ``_dom`` parses with lexbor
into a compact tree (``_signals`` reads what the page declares), ``_pick`` chooses the main
content (``_page_signals`` gathers the page's text measures, the ``_pick_*`` modules are the
picks), ``_kind`` decides the page's kind, ``_corrections`` leaves the furniture inside the pick
out, ``_region`` picks the main region of a page that is not an article, ``_markdown`` renders
markdown, ``_urls`` makes links absolute, ``_text`` is the linear text rendering used past the
limits, and ``_budget`` holds the limits themselves (docs/reliability.md, "Rendering limits").
Every threshold of the rules is a field of ``_tuning.Tuning``.
"""

from __future__ import annotations

import gc
import logging
import threading

from ._budget import Budget, RenderOverBudget
from ._corrections import Skipper
from ._dom import Document, parse
from ._kind import PICKED, decide, gather
from ._markdown import Renderer, Resolver
from ._page_type import page_type
from ._pick import select
from ._region import REGION_MAX_ELEMENTS, RegionSkipper, leaves_out, main_region
from ._sanitise import encode, prepare
from ._signals import dated_path, thread_path
from ._surroundings import Surroundings
from ._text import render_text
from ._tuning import TUNING
from ._type_chrome import TypeChrome
from ._urls import make_resolver

__all__ = [
    "ARTICLE_CHARS", "CAP_MARGIN", "FALLBACK_BYTES", "RAW_HTML", "READABILITY", "render_html"
]  # fmt: skip

logger = logging.getLogger("runvil.web.fetch")

READABILITY = "readability"
RAW_HTML = "raw-html"

# Under this many UTF-8 bytes of trimmed article markdown, the whole page is rendered instead.
FALLBACK_BYTES = 100
#: Characters past ``max_chars`` a whole-page rendering's output bound leaves room for.
CAP_MARGIN = 256
#: The least an extracted article's markdown is bounded to: the article decision reads the
#: rendered text, so it gets far more than a result shows (the longest article of the 1,608
#: development pages renders to 253,063 characters).
ARTICLE_CHARS = 1024 * 1024


def render_html(
    html: str,
    base_url: str,
    raw: bool,
    *,
    max_chars: int | None = None,
    deadline: float | None = None,
) -> tuple[str, str]:
    """Render ``html`` as markdown; return ``(text, extraction label)``.

    With ``raw`` false the main content is extracted (label ``readability``): the article, or,
    on a page that is not an article, its main region without the page furniture. When that
    yields fewer than 100 bytes after trimming, or the region is the whole page, the whole page
    is rendered instead (label ``raw-html``). With ``raw`` true the whole page is rendered.
    Relative links and images resolve against ``base_url``, the final URL of the fetch.

    ``max_chars`` is for a caller that keeps only that many characters (``web/fetch`` does):
    a whole-page rendering may then stop early, once its text is sure to be longer. The first
    ``max_chars`` characters, and whether there are more, are exactly as without it; an 8 MiB
    page of markup is not turned into megabytes of markdown to keep 40,000 characters of it.
    An extracted article is rendered whole up to its own, far larger bound (below): deciding
    whether it is one needs all of it.

    ``deadline`` (a ``time.monotonic()`` time) bounds the rendering: past it, the page's linear
    text rendering (``_text``) is returned instead, labelled ``raw-html``. Past the pre-parse
    node budget, the rest of the page is appended to a whole-page rendering as that same text.

    With ``max_chars``, the markdown is also bounded by construction: a whole-page rendering
    makes at most about three times ``max_chars + CAP_MARGIN`` characters, an article at most
    about three times ``max(ARTICLE_CHARS, max_chars + CAP_MARGIN)``, however the page
    multiplies its text (a ragged table padded to its widest row, quotes and lists re-prefixing
    every line). An article longer than its bound is judged on its first characters.

    Running out of memory is not a rendering that failed: ``MemoryError`` propagates (the fetch
    then fails as a task that did not finish), after the tree is let go.
    """
    budget = Budget(deadline)
    article = ""
    document: Document | None = None
    _pause_collector()
    try:
        budget.check()
        prepared = prepare(html, budget.check)
        document = parse(prepared.markup, budget.progress)
        resolve = make_resolver(base_url, document.base_href)
        if not raw:
            document.signals.dated_url = dated_path(base_url)
            document.signals.thread_url = thread_path(base_url)
            document.signals.url = base_url
            article = _article(document, resolve, budget, _article_cap(max_chars))
            if _long_enough(article):
                return article, READABILITY
        budget.check()
        cap = None if max_chars is None else max_chars + CAP_MARGIN
        text = Renderer(resolve, check=budget.check, cap=cap).render([document.body], max_chars)
        if prepared.tail and (max_chars is None or len(text) <= max_chars):
            budget.check()
            rest = render_text(prepared.tail, None if max_chars is None else max_chars)
            text = f"{text}\n\n{rest}" if text and rest else text or rest
        return text, RAW_HTML
    except RenderOverBudget as reason:
        logger.warning("rendering %s as plain text: %s", base_url, reason)
        _release(document)
        document = None  # freed before the text rendering needs memory of its own
        return _text_rendering(html, max_chars), RAW_HTML
    except MemoryError:
        raise  # the process is out of memory: not a page that failed to render
    except Exception:  # rendering never fails a fetch; the short article text is the fallback
        return article, RAW_HTML
    finally:
        if document is not None:
            _release(document)
        _resume_collector()


def _article_cap(max_chars: int | None) -> int | None:
    return None if max_chars is None else max(ARTICLE_CHARS, max_chars + CAP_MARGIN)


def _long_enough(text: str) -> bool:
    """At least :data:`FALLBACK_BYTES` UTF-8 bytes (``text`` is already trimmed)."""
    # Every character is at least one byte: only a short text needs encoding.
    return len(text) >= FALLBACK_BYTES or (
        len(text.encode("utf-8", "surrogatepass")) >= FALLBACK_BYTES
    )


def _text_rendering(html: str, max_chars: int | None) -> str:
    try:
        return render_text(encode(html), max_chars)
    except MemoryError:
        raise
    except Exception:  # pragma: no cover - the text rendering is a few regex passes
        return ""


def _release(document: Document | None) -> None:
    """Break the tree's parent links, so it is freed as soon as the rendering drops it.

    Every element points at its parent and its parent at it: a cycle, which only the cyclic
    collector frees, and the collector is paused while any rendering runs. With renderings
    overlapping back to back it would never run, and every tree would stay in memory.
    """
    if document is None:
        return
    for element in document.elements:
        element.parent = None


# The tree is hundreds of thousands of small objects on a big page; the cyclic collector would
# rescan them again and again while they are built. Measured (time.process_time, one run):
# 8 MiB of table rows 1.9 s with it paused against 3.5 s without; the 427 development pages
# 2.0-2.2 s against 2.6-2.7 s. None of the objects outlives the call, so the collector is paused
# while any render runs. Renders run concurrently in worker threads and the switch is
# process-wide, so the pause is counted: the first render in pauses it (if it was on), the last
# one out switches it back on. Without the count, the first render to finish switched it back
# on under the others still running, which then paid the full cost.
_collector_lock = threading.Lock()
_collector_users = 0
_collector_was_on = False


def _pause_collector() -> None:
    global _collector_users, _collector_was_on
    with _collector_lock:
        if _collector_users == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _collector_users += 1


def _resume_collector() -> None:
    global _collector_users
    with _collector_lock:
        _collector_users -= 1
        if _collector_users == 0 and _collector_was_on:
            gc.enable()


def _article(document: Document, resolve: Resolver, budget: Budget, cap: int | None) -> str:
    """The main content as markdown: the article, or the page's main region when the page is
    not an article; ``""`` when neither can be picked (the whole page comes back)."""
    text = _single_article(document, resolve, budget, cap)
    if _long_enough(text) or len(document.elements) > REGION_MAX_ELEMENTS:
        return text  # (a pick too short to keep gives way to the region, then the page)
    budget.check()
    root = main_region(document)
    skip = RegionSkipper(
        root, document.signals.thread_region, TypeChrome(page_type(document.signals))
    )
    if not leaves_out(root, skip):
        return ""  # the region is the whole page: it comes back as such
    return Renderer(resolve, skip, budget.check, cap).render([root])


def _single_article(
    document: Document, resolve: Resolver, budget: Budget, cap: int | None
) -> str:
    """The article as markdown, or ``""`` when the page is not an article."""
    if document.longest_own_text < TUNING.paragraph_min_chars:
        return ""  # not one block with a paragraph's worth of text: nothing for select to score
    budget.check()
    selection = select(document)
    budget.check()
    if not selection.roots:
        return ""
    around = Surroundings(document, selection)
    # Rendering can only shrink the article (skipped boilerplate), and a smaller article is
    # never more of an article: a page that fails the decision with the whole selection counted
    # fails it after rendering too, so a big table or listing is not rendered twice.
    if (
        decide(gather(document, selection, around, selection.chars, selection.readable_most))
        not in PICKED
    ):
        return ""
    skipper = Skipper(selection, document.signals.thread, TypeChrome(page_type(document.signals)))
    renderer = Renderer(resolve, skipper, budget.check, cap)
    text = renderer.render(selection.roots)
    article_chars = selection.chars - renderer.skipped_chars
    rendered = gather(
        document,
        selection,
        around,
        article_chars,
        renderer.readable_chars,
        skipper.dense_chars,
        text,
    )
    if decide(rendered) not in PICKED:
        return ""
    return text
