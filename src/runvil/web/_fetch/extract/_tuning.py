"""The thresholds of the main-content rules, in one frozen place.

The rules were tuned on nine tenths of the development set (docs/extraction.md, "How the rules
were tuned"); keeping their numbers together lets a tuning round read and change them without
hunting through the rules. The fields are grouped by the pipeline stage that reads them, and
each names the rule (module and function) that compares with it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tuning:
    """The numbers the main-content rules compare with."""

    # --- the page's text (_page_signals.read_page) --------------------------------------------
    # Furniture holding more than this share of the page's text (or of its text outside
    # links) is a page wrapper, whatever its tag or class says.
    wrapper_share: float = 0.5
    # A page-sized navigation block beside an article of at least this many characters is a
    # mega-menu, not counted as the page's text (_pick.select).
    menu_article_chars: int = 1000

    # --- Readability's pick (_pick_readability) -----------------------------------------------
    # A block with this much text of its own is a paragraph, which scores (score_paragraphs);
    # a page whose longest own text is shorter has nothing to score (render_html).
    paragraph_min_chars: int = 25
    # How many ancestors a paragraph's score reaches (score_paragraphs).
    score_levels: int = 5
    # A paragraph scores one point per this many characters (score_paragraphs) ...
    chars_per_point: int = 100
    # ... and at most this many such points.
    length_points_most: int = 3
    # Class/id words that name content add this to a candidate's score, words that name
    # boilerplate take it away (class_weight).
    name_weight: int = 25
    # Candidates scoring at least this share of the best are strong (_climb) ...
    strong_share: float = 0.75
    # ... and this many of them under one ancestor make that ancestor the article.
    strong_most: int = 3

    # --- the pick's siblings (_pick_siblings.with_siblings) -----------------------------------
    # A sibling scoring at least this, or sibling_score_share of the best, joins the pick.
    sibling_least_score: float = 10.0
    sibling_score_share: float = 0.2
    # A sibling of the pick's class gets this share of the best score as a bonus.
    sibling_class_bonus: float = 0.2
    # A paragraph sibling longer than this, with link density under sibling_link_density,
    # joins the pick; a shorter one joins when it has no links and ends like a sentence.
    sibling_prose_chars: int = 80
    sibling_link_density: float = 0.25

    # --- a series of posts (_pick_series.series) ----------------------------------------------
    # How many ancestors of the pick are looked at for look-alike siblings (also how far up
    # _surroundings.cards looks for the card holding the pick).
    series_levels: int = 5
    # At least this many look-alike siblings of at least series_min_chars each are a series.
    series_min_items: int = 3
    series_min_chars: int = 100
    # Look-alike items averaging under this many characters are cards, not posts (_kind).
    series_post_chars: int = 300

    # --- the densest prose and the corrections to the pick (_pick_densest) --------------------
    # Link text and fragments count against a subtree at this weight (densest).
    junk_weight: float = 0.5
    # A pick holding under this share of the densest region's prose is a fragment of it; a
    # declared body under this share of the pick's prose is a teaser's (choose); an
    # <article> under this share of the pick's prose is a short article among teasers
    # (_pick_declared.among_teasers).
    fragment_share: float = 0.25
    # A pick holding under this share of the declared body's prose is a piece of it (choose).
    piece_share: float = 0.6
    # A pick that names itself nothing and holds under this share of the densest prose
    # around it is one part of an article spread over sibling blocks (choose).
    spread_share: float = 0.65
    # A sibling of joined blocks with this much prose of its own is one more section (choose).
    joined_prose: int = 200

    # --- what the page declares (_pick_declared, _pick_product, _kind) ------------------------
    # A declared article (its located body, or the one <article> of a page declaring an
    # article in JSON-LD) with this much readable text is the article, however large the page.
    short_article_readable: int = 200
    # A page with more <article> elements than this has no one declared article (and looking
    # at each costs a walk of its text: nested ones would make it quadratic).
    articles_most: int = 64
    # How far up a product page's pick looks for the block holding the product's name.
    product_levels: int = 3
    # The product's name block, and the region whose dates are counted (_surroundings), hold
    # at most this many times the pick's text.
    around_ratio: int = 3

    # --- cards and teasers (_cards, _surroundings.teasers) ------------------------------------
    # At least this many look-alike siblings averaging under card_max_chars may be cards.
    repeated_min: int = 5
    card_max_chars: int = 1500
    # Cards holding this share of the pick's text make it a listing.
    cards_share: float = 0.5
    # This share of the cards start with a link of at least title_chars (a title).
    leading_links: float = 0.6
    title_chars: int = 12
    # Cards hold at least this share of their text in links, and this much other text each.
    card_link_density: float = 0.1
    card_blurb_chars: int = 20
    # A one-block pick is one of the cards when it is at most this many times the mean card.
    card_size_ratio: int = 3
    # At least this many look-alike siblings holding links after the pick are a teaser rail.
    teaser_min_items: int = 3

    # --- the page-kind decision (_kind.decide) ------------------------------------------------
    # A declared article's text and readable text are at least these shares of the page's.
    declared_share: float = 0.1
    declared_readable: float = 0.2
    # An undeclared article's, at least these.
    article_min_share: float = 0.3
    article_min_readable_share: float = 0.7
    # A dated article's (one to dated_most dates around it), at least these.
    dated_share: float = 0.2
    dated_readable: float = 0.4
    dated_most: int = 3
    # A string this long at least may hold a full date (_surroundings).
    date_min_chars: int = 8
    # An undeclared, undated article of at least landing_min_chars characters has at least
    # landing_prose of its text in prose blocks of prose_block_chars (_rendered.prose_share).
    landing_prose: float = 0.25
    landing_min_chars: int = 1000
    prose_block_chars: int = 25
    # At least this share of the pick is kept after its blocks of links are left out.
    kept_share: float = 0.5
    # Rendered text with more headings or title links per 1,000 characters, or more of its
    # text in links, reads like a listing (_rendered.reads_like_links).
    headings_per_1000: int = 4
    title_links_per_1000: int = 6
    link_text_share: float = 0.25
    # A second copy of an article this long is not other text (_surroundings.copied).
    copy_min_chars: int = 500

    # --- corrections inside the pick (_corrections) -------------------------------------------
    # A block named furniture when short is left out under this many characters.
    short_chars: int = 400
    # A block named furniture when mostly links is left out over this link density.
    weak_link_density: float = 0.3
    # A container (with fewer than dense_commas commas) is a block of links over
    # dense_link_density, or over dense_weak_density with under dense_class_weight of
    # class weight and under dense_prose_chars of text outside links.
    dense_commas: int = 10
    dense_link_density: float = 0.5
    dense_weak_density: float = 0.2
    dense_class_weight: int = 25
    dense_prose_chars: int = 80
    # Reading cues (_cues): only blocks of at most cue_max_chars, never words inside prose;
    # at most cue_checks blocks per article, each when its text is reached within cue_nodes
    # nodes; at most cuts sections cut.
    cue_max_chars: int = 200
    cue_checks: int = 4096
    cue_nodes: int = 64
    cuts: int = 32

    # --- the main region of a page that is not an article (_region) ---------------------------
    # <main> (or role="main") is the region when it holds this share of the page's text
    # (main_region).
    main_share: float = 0.8
    # In the region, a block named furniture is left out when it is under region_named_chars
    # (a share bar) or at least region_named_link_density links (a menu, a related rail); a
    # block named by the short words when it is under region_short_chars (RegionSkipper).
    region_named_chars: int = 200
    region_named_link_density: float = 0.3
    region_short_chars: int = 400
    # A form holding a block with this much text of its own, not mostly links, among its first
    # region_title_nodes elements holds a post; a <header> holding an <h1> among them holds the
    # page's title (RegionSkipper).
    region_paragraph_chars: int = 25
    region_title_nodes: int = 256

    # --- the page's type (_page_type, _pick_type, _type_chrome) ---------------------------------
    # A product page's pick grows this far up to its name when what that adds outside
    # furniture is at most product_far_ratio times the pick.
    product_far_levels: int = 8
    product_far_ratio: float = 3.0
    # A documentation page's pick of sibling blocks is their parent when the parent holds at
    # most this many times their text.
    docs_parent_ratio: float = 2.0
    # A block up to chrome_box_chars starting with a box's words (who is online, write a
    # review, edit this page) is chrome; a line up to chrome_line_chars starting with a
    # control's words (sort by, last updated, add to cart) too. Each block is read within
    # chrome_nodes nodes, at most chrome_reads blocks per page.
    chrome_box_chars: int = 600
    chrome_line_chars: int = 120
    chrome_nodes: int = 64
    chrome_reads: int = 4096
    # A thread's member statistics: label and value each at most this long.
    stat_max_chars: int = 40


TUNING = Tuning()
