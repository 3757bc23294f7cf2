"""The page-kind decision: is the pick the page's article (or thread, or declared body), or
is the page something else, which comes back as its main region or whole?

Why a pure function of gathered signals: every threshold it compares with is a
:class:`~._tuning.Tuning` field, and everything it compares them to is in one
:class:`KindSignals`, so a rule can be read, tested and changed alone. The measures that cost a
walk of the tree (cards, teaser rails, a second copy, dates) are read from
:class:`~._surroundings.Surroundings`, which takes each on first use; none of them changes
what the decision returns, only when it is paid for.

Not an article (the page comes back as its main region, or whole):

- a listing: the pick is a run of cards that start with a link, or one of them, or
  look-alike items averaging under ``TUNING.series_post_chars``;
- the article is a small part of the page: its text is under ``TUNING.declared_share`` of the
  page's text outside furniture (link blocks skipped inside the pick count as the page's), or
  its readable text under ``TUNING.declared_readable`` of the page's, both counted without the
  teaser rails that follow the article and without a second copy of the article (and, beside
  an article of ``TUNING.menu_article_chars``, without a page-sized navigation block);
- for a page that does not declare itself an article (``og:type``, JSON-LD, microdata), the
  same with the stricter ``TUNING.article_min_share`` and
  ``TUNING.article_min_readable_share`` (or ``TUNING.dated_share`` and
  ``TUNING.dated_readable`` with one to ``TUNING.dated_most`` dates around it), and an article
  that reads like a list of links: under ``TUNING.kept_share`` of the pick kept, or rendered
  text with many headings, title links or link text (``_rendered.reads_like_links``), or a
  long undated text that is not prose (a landing page).

A declared body (``_pick_declared``) with ``TUNING.short_article_readable`` of readable text is
the article however large the page (*news portals whose short article sits among teasers*).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ._dom import Document
from ._page_type import OTHER, THREAD, page_type
from ._rendered import prose_share, reads_like_links
from ._selection import Selection
from ._surroundings import Surroundings
from ._tuning import TUNING


class PageKind(Enum):
    """What the page is, as far as choosing its main content goes."""

    ARTICLE = "article"  # one body of prose that outweighs the page's other text
    THREAD = "thread"  # a series of look-alike posts: a forum thread, a Q&A page, sections
    PRODUCT = "product"  # an article-like pick on a page that declares one product
    DECLARED = "declared"  # the body the page declares, however short beside the page
    LISTING = "listing"  # a run of cards, or of short look-alike items
    OTHER = "other"  # not one article: its main region comes back, or the whole page


#: The kinds whose pick is returned as the main content.
PICKED = frozenset({PageKind.ARTICLE, PageKind.THREAD, PageKind.PRODUCT, PageKind.DECLARED})


@dataclass(frozen=True, slots=True)
class KindSignals:
    """Everything the decision reads: the page's declarations, the selection with its text
    measures and surroundings, and the article as counted so far (``text`` is the rendered
    article, ``None`` before rendering)."""

    declares_article: bool  # og:type, JSON-LD, a publication date, a dated URL, a product
    ld_article: bool  # JSON-LD declares an article
    og_type: str  # lower-cased, "" when absent
    product: bool  # one JSON-LD Product, or og:type product
    selection: Selection
    around: Surroundings
    article_chars: int
    article_readable: int
    dense_chars: int = 0
    text: str | None = None
    # What the page says it is before any pick (``_page_type.page_type``): thread, product,
    # docs, listing, article or other.
    page_type: str = OTHER


def gather(
    document: Document,
    selection: Selection,
    around: Surroundings,
    article_chars: int,
    article_readable: int,
    dense_chars: int = 0,
    text: str | None = None,
) -> KindSignals:
    """The signals of ``document`` and its selection, for :func:`decide`."""
    signals = document.signals
    # A publication date in microdata counts as the page's own date, unless the page declares
    # a collection in JSON-LD (and an article declared in JSON-LD needs no date).
    microdata_dated = selection.page is not None and selection.page.published
    return KindSignals(
        declares_article=signals.declares_article or (microdata_dated and not signals.ld_listing),
        ld_article=signals.ld_article,
        og_type=signals.og_type,
        product=signals.ld_products == 1 or signals.og_type == "product",
        selection=selection,
        around=around,
        article_chars=article_chars,
        article_readable=article_readable,
        dense_chars=dense_chars,
        text=text,
        page_type=page_type(signals),
    )


def decide(signals: KindSignals) -> PageKind:
    """The page's kind (see the module's docstring for the rules).

    The verdict never turns from not picked to picked as ``article_chars`` or
    ``article_readable`` shrink, or when ``text`` is given, so ``render_html`` asks first with
    the selection's own size, before rendering anything."""
    tuning = TUNING
    selection = signals.selection
    around = signals.around
    article_chars = signals.article_chars
    article_readable = signals.article_readable
    dense_chars = signals.dense_chars
    if not article_chars or not article_readable:
        return PageKind.OTHER
    if selection.series and selection.chars < tuning.series_post_chars * len(selection.roots):
        return PageKind.LISTING  # short look-alike items are cards, not posts of a thread
    if around.cards:
        return PageKind.LISTING
    outside = selection.outside_chars
    outside_readable = selection.outside_readable
    share = article_chars / (article_chars + outside + dense_chars)
    readable = article_readable / (article_readable + outside_readable)
    declared = selection.declared or signals.declares_article
    if (
        declared
        and article_readable >= tuning.short_article_readable
        and declared_body(selection, signals.ld_article)
    ):
        return PageKind.DECLARED  # a short article on a large portal page is still the article
    least_share, least_readable = (
        (tuning.declared_share, tuning.declared_readable)
        if declared
        else (tuning.article_min_share, tuning.article_min_readable_share)
    )
    if share < least_share or readable < least_readable:
        teaser_chars, teaser_readable = around.teasers
        outside = max(0, outside - teaser_chars)
        outside_readable = max(0, outside_readable - teaser_readable)
        share = article_chars / (article_chars + outside + dense_chars)
        readable = article_readable / (article_readable + outside_readable)
    # The page holds the article twice: one copy is not other text.
    if (share < least_share or readable < least_readable) and around.copied:
        outside = max(0, outside - selection.inside_chars)
        outside_readable = max(0, outside_readable - selection.inside_readable)
        share = article_chars / (article_chars + outside + dense_chars)
        readable = article_readable / (article_readable + outside_readable)
    picked = _picked(signals)
    if declared:
        if share >= tuning.declared_share and readable >= tuning.declared_readable:
            return picked
        return PageKind.OTHER
    if article_chars < tuning.kept_share * (article_chars + dense_chars):
        return PageKind.LISTING  # the pick is mostly blocks of links
    if share < tuning.article_min_share or readable < tuning.article_min_readable_share:
        # An article shows its date once or twice around its text, and a listing one per
        # item (or none): the lower thresholds of a dated article.
        if share < tuning.dated_share or readable < tuning.dated_readable:
            return PageKind.OTHER
        if signals.og_type:  # it says what it is, and that is not an article
            return PageKind.OTHER
        return picked if 1 <= around.dates <= tuning.dated_most else PageKind.OTHER
    text = signals.text
    if text is None:
        return picked
    if reads_like_links(text):
        return PageKind.LISTING
    # A page that declares nothing, shows no date and whose text is not prose is a landing
    # page or a catalogue (headings, blurbs, feature lists): it comes back whole. (A short
    # page is too short to tell.)
    if (
        article_chars < tuning.landing_min_chars
        or prose_share(text) >= tuning.landing_prose
        or around.page_dated
    ):
        return picked
    return PageKind.OTHER


def _picked(signals: KindSignals) -> PageKind:
    """The kind of a pick that is returned: a thread's posts (look-alike posts, or one post
    of a page that says it is a thread), a product or an article."""
    if signals.selection.series or signals.page_type == THREAD:
        return PageKind.THREAD
    return PageKind.PRODUCT if signals.product else PageKind.ARTICLE


def declared_body(selection: Selection, ld_article: bool) -> bool:
    """Whether the pick is the body a page declares as its article (*news portals and blogs
    whose short article sits among many teaser blocks*): the element microdata or JSON-LD's
    ``articleBody`` locates, or, on a page that declares an article in JSON-LD, its one
    ``<article>`` element (``_pick_declared.one_article``)."""
    if selection.declared:
        return True
    return ld_article and len(selection.roots) == 1 and selection.roots[0].tag == "article"
