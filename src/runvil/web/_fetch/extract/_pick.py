"""The pick stage: which subtrees of the page are its main content, and the text measures
the page-kind decision compares them with.

The picks run in this order, each taking the pick before it (docs/extraction.md, "The
pipeline"):

1. **Readability's pick** (``_pick_readability``), grown to a series of look-alike posts
   (``_pick_series``) or to its sibling paragraphs (``_pick_siblings``);
2. **the densest prose and the declared body** (``_pick_densest.choose``,
   ``_pick_declared.declared``): a fragment of the densest region, a block of an article spread
   over siblings or a piece of the declared body gives way to the whole;
3. **the product's name** (``_pick_product``) on a page that declares a product;
4. **a short declared article among teasers** (``_pick_declared.among_teasers``) on a page
   that declares an article in JSON-LD;
5. **the page's type** (``_pick_type``): a documentation page's sibling blocks give way to
   their parent, a product page's description grows to the product's name and price.

Three passes over the elements (the page signals, the scores, the prose sums); the rest looks
only at the pick.
"""

from __future__ import annotations

from dataclasses import replace

from ._dom import Document, Element
from ._page_signals import menus_beside, read_page, text_in
from ._page_type import page_type
from ._pick_declared import among_teasers, declared, one_article
from ._pick_densest import choose, densest
from ._pick_product import with_product_name
from ._pick_readability import readability_pick
from ._pick_type import adjusted_roots
from ._selection import Pick, Selection, single, unmeasured
from ._tuning import TUNING


def select(document: Document) -> Selection:
    """Choose the article's subtrees and measure the page's text around them."""
    page = read_page(document)
    excluded = page.excluded
    linked = page.linked
    pick = readability_pick(document, excluded)
    if not pick.roots:
        return unmeasured(pick)  # no block holds a paragraph: the only text is <body>'s own
    if pick.roots[0] is not document.body:  # <body> holds every denser region
        pick = _corrected(document, pick, page.itemprops, excluded, linked)
    inside_chars, inside_readable, readable_most = text_in(pick.roots, excluded, linked)
    outside_chars = page.content_chars - inside_chars
    outside_readable = page.readable_chars - inside_readable
    menus = page.menus if inside_chars >= TUNING.menu_article_chars else []
    for menu in menus_beside(pick.roots, menus):
        # A navigation block that holds most of the page but not an article of its own
        # length is a mega-menu (a site map in an off-canvas menu), not the page's content.
        # (Beside a short block, a big menu is all a listing loaded by scripts shows.)
        menu_chars, menu_readable, _ = text_in([menu], excluded, linked)
        outside_chars -= menu_chars
        outside_readable -= menu_readable
    return Selection(
        roots=pick.roots,
        top=pick.top,
        score=pick.score,
        series=pick.series,
        declared=pick.declared,
        chars=pick.chars,
        page=page,
        content_chars=page.content_chars,
        readable_chars=page.readable_chars,
        inside_chars=inside_chars,
        inside_readable=inside_readable,
        outside_chars=max(0, outside_chars),
        outside_readable=max(0, outside_readable),
        readable_most=readable_most,
    )


def _corrected(
    document: Document,
    pick: Pick,
    itemprops: list[Element],
    excluded: list[bool],
    linked: list[bool],
) -> Pick:
    """Readability's pick after the densest prose, the declared body, the product's name and
    a short declared article among teasers have had their say (steps 2 to 4 above)."""
    prose, region = densest(document, excluded, linked)
    body = declared(document, itemprops, prose)
    pick = replace(choose(pick, region, body, prose), declared=body is not None)
    signals = document.signals
    if signals.ld_products == 1 or signals.og_type == "product":
        pick = with_product_name(pick)
    if body is None and signals.ld_article and not signals.thread_region:
        article = one_article(document, excluded, linked)
        if article is not None and among_teasers(pick, article, prose):
            pick = single(article, pick.score)  # a short article among teasers
    roots = adjusted_roots(page_type(signals), pick.roots, pick.series, excluded)
    if roots is not None:  # what this type of page picks instead (_pick_type)
        pick = replace(pick, roots=roots, top=pick.top)
    return pick
