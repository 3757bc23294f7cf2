"""render_html on article pages: the article comes back, its furniture does not.

Every page here is small and written for the test. Each test puts one kind of furniture
inside (or around) an article's container and asserts the exact markdown that comes back.
"""

from __future__ import annotations

import json

import pytest

from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._rendered import outside_code as _outside_code

BASE = "https://example.com/news/story.html"

P1 = (
    "The river rose by two metres overnight, and by morning the lower town was under water, "
    "the bakery, the school and the old mill among the buildings cut off from the main road."
)
P2 = (
    "Volunteers filled sandbags until dawn, while the fire brigade pumped out cellars, "
    "checked on elderly residents and ferried families to the sports hall on the hill."
)
P3 = (
    "The mayor said the council would meet on Friday to decide on repairs, and asked people "
    "to keep away from the riverbank, where the current is still strong and the ground soft."
)
Q1 = (
    "Insurers said they expected claims from more than two hundred households and shops, "
    "most of them on Mill Street and along the river."
)
Q2 = (
    "The weather service expects dry days for the rest of the week, which should let the "
    "water fall back into the river bed by Sunday."
)
ARTICLE = f"{P1}\n\n{P2}\n\n{P3}"
BODY = f"<p>{P1}</p><p>{P2}</p><p>{P3}</p>"


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>Flood</title>{head}</head><body>{body}</body></html>"


def chrome(article: str) -> str:
    """A site around an article: a menu, a header, the article, a footer."""
    return (
        "<nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a></nav>"
        "<header><p>The Valley Gazette, your local paper since 1901</p></header>"
        f"<main>{article}</main>"
        "<footer><p>Copyright The Valley Gazette. All rights reserved.</p></footer>"
    )


def extract(html: str) -> tuple[str, str]:
    return render_html(html, BASE, False)


def test_plain_article_in_a_site() -> None:
    assert extract(page(chrome(f"<article>{BODY}</article>"))) == (ARTICLE, "readability")


# --- furniture inside the article's container ------------------------------------------------


COMMENTS = (
    "<section class='comments'><h2>3 Comments</h2>"
    "<div class='comment'><p>Anna wrote: what a night, thanks to all the volunteers, "
    "we could not have managed without them.</p></div>"
    "<div class='comment'><p>Ben wrote: the mill has flooded twice in ten years, "
    "when will the council build a proper wall?</p></div></section>"
)
RELATED = (
    "<div class='related-articles'><h3>Related articles</h3><ul>"
    "<li><a href='/a'>Storm warning for the weekend, stay indoors</a></li>"
    "<li><a href='/b'>How the 1998 flood changed the town forever</a></li>"
    "<li><a href='/c'>New pumps for the fire brigade after long wait</a></li></ul></div>"
)


@pytest.mark.parametrize(
    "furniture",
    [
        pytest.param(COMMENTS, id="comment thread"),
        pytest.param(RELATED, id="related list"),
        pytest.param(
            "<aside class='recommended'><h4>Recommended for you</h4>"
            "<p><a href='/d'>Ten walks along the river this autumn</a></p></aside>",
            id="recommended list",
        ),
        pytest.param(
            "<div class='teaser'><a href='/e'><h3>Also in the valley: the harvest festival "
            "returns</h3></a><p><a href='/e'>Read the story</a></p></div>",
            id="teaser block",
        ),
        pytest.param(
            "<div class='share-bar'><a href='/s/fb'>Facebook</a> <a href='/s/x'>X</a> "
            "<a href='/s/mail'>Email</a></div>",
            id="share bar",
        ),
        pytest.param(
            "<div class='follow-us'><p>Follow us on all our channels for the latest news "
            "from the valley.</p></div>",
            id="follow block",
        ),
        pytest.param(
            "<div class='newsletter-signup'><p>Get the Valley Gazette newsletter in your "
            "inbox every morning, free of charge.</p><p>Sign up now</p></div>",
            id="newsletter box",
        ),
        pytest.param(
            "<div class='author-bio'><p>Maria Lopez has covered the valley for the Gazette "
            "since 2009 and lives in the lower town.</p></div>",
            id="author bio",
        ),
        pytest.param(
            "<div class='ad-slot'><p>Advertisement: the best mattresses of the year, now "
            "at half price in our shop.</p></div>",
            id="ad slot",
        ),
        pytest.param(
            "<div class='promo'><p>Subscribe for one euro a month and read every story "
            "without limits.</p></div>",
            id="promo slot",
        ),
        pytest.param(
            "<div class='paywall'><p>This article is for subscribers.</p>"
            "<p><a href='/login'>Log in</a> or <a href='/subscribe'>subscribe</a></p></div>",
            id="subscription wall",
        ),
        pytest.param(
            "<div class='gallery-controls'><button>Previous</button><span>1 of 12</span>"
            "<button>Next</button></div><div class='thumbnails'><a href='/g/1'>1</a> "
            "<a href='/g/2'>2</a></div>",
            id="gallery chrome",
        ),
    ],
)
def test_named_furniture_inside_the_article_is_left_out(furniture: str) -> None:
    html = page(chrome(f"<article>{BODY}{furniture}</article>"))
    assert extract(html) == (ARTICLE, "readability")


def test_a_related_list_bigger_than_the_article_text_is_still_left_out() -> None:
    # Six cards with blurbs hold more text than the article's three paragraphs: named
    # furniture made of cards is neither a wrapper of the article nor the page's listing.
    cards = "".join(
        f"<li><a href='/story/{n}'>Story number {n} from the valley</a>"
        f"<p>A short blurb about story {n}, the council, the weather and the river.</p></li>"
        for n in range(6)
    )
    html = page(chrome(f"<article>{BODY}<ul class='related-posts'>{cards}</ul></article>"))
    assert extract(html) == (ARTICLE, "readability")


@pytest.mark.parametrize(
    "stub",
    [
        "<p>Read more: <a href='/x'>The flood of 1998, twenty-five years on</a></p>",
        "<p>Lesen Sie auch: <a href='/y'>Hochwasser im Tal: die Chronik</a></p>",
        "<p>Lea también: <a href='/z'>Inundaciones en el valle</a></p>",
        "<p><a href='/full'>Continue reading</a></p>",
    ],
)
def test_read_more_stubs_are_left_out(stub: str) -> None:
    html = page(chrome(f"<article><p>{P1}</p>{stub}<p>{P2}</p><p>{P3}</p></article>"))
    assert extract(html) == (ARTICLE, "readability")


def test_a_furniture_heading_ends_the_article_section_it_opens() -> None:
    # No class names at all: the heading's words say what follows.
    related = (
        "<h2>You might also like</h2>"
        "<p><a href='/1'>Ten walks along the river this autumn, with maps</a></p>"
        "<p>Our pick of the quietest paths in the valley, from the mill to the old bridge.</p>"
    )
    html = page(chrome(f"<article>{BODY}{related}</article>"))
    assert extract(html) == (ARTICLE, "readability")


def test_comment_heading_and_thread_without_class_names_are_left_out() -> None:
    thread = (
        "<h3>Leave a reply</h3><p>Your email address will not be published, and we read "
        "every comment before it appears.</p>"
    )
    html = page(chrome(f"<article><h2>Flood in the valley</h2>{BODY}{thread}</article>"))
    assert extract(html) == (f"## Flood in the valley\n\n{ARTICLE}", "readability")


def test_photo_captions_and_credits_are_left_out() -> None:
    html = page(
        chrome(
            f"<article><p>{P1}</p><figure><img src='/mill.jpg' alt='The old mill'>"
            "<figcaption>The old mill on Tuesday morning.</figcaption></figure>"
            f"<p>Foto: Hans Berger</p><p>{P2}</p><p>© Valley Press Agency</p><p>{P3}</p>"
            "</article>"
        )
    )
    assert extract(html) == (
        f"{P1}\n\n![The old mill](https://example.com/mill.jpg)\n\n{P2}\n\n{P3}",
        "readability",
    )


def test_lines_of_controls_are_left_out() -> None:
    html = page(
        chrome(
            f"<article><p>Share Print Email</p>{BODY}<p>Advertisement</p>"
            "<p><a href='/back'>Back</a></p></article>"
        )
    )
    assert extract(html) == (ARTICLE, "readability")


def test_the_articles_own_structure_stays() -> None:
    article = (
        "<h1>Flood in the valley</h1>"
        f"<p>{P1}</p><h2>What happened</h2><p>{P2}</p>"
        "<ul><li>The bakery on Mill Street</li><li>The primary school</li></ul>"
        "<table><tr><th>Place</th><th>Water</th></tr><tr><td>Mill Street</td><td>1.2 m</td>"
        "</tr></table>"
        "<blockquote><p>We have never seen it rise this fast.</p></blockquote>"
        "<pre><code class='language-sh'>curl https://example.com/levels</code></pre>"
        f"<p>{P3}</p>"
    )
    html = page(chrome(f"<article>{article}</article>"))
    assert extract(html) == (
        f"# Flood in the valley\n\n{P1}\n\n## What happened\n\n{P2}\n\n"
        "- The bakery on Mill Street\n- The primary school\n\n"
        "| Place | Water |\n|---|---|\n| Mill Street | 1.2 m |\n\n"
        "> We have never seen it rise this fast.\n\n"
        "```sh\ncurl https://example.com/levels\n```\n\n"
        f"{P3}",
        "readability",
    )


def test_a_table_of_data_keeps_cells_that_look_like_controls() -> None:
    table = (
        "<table><tr><th>Network</th><th>Cost per click</th></tr>"
        "<tr><td>Facebook</td><td>0.50 dollars</td></tr>"
        "<tr><td>Email</td><td>0.10 dollars</td></tr></table>"
    )
    html = page(chrome(f"<article>{BODY}{table}</article>"))
    assert extract(html) == (
        f"{ARTICLE}\n\n| Network | Cost per click |\n|---|---|\n"
        "| Facebook | 0.50 dollars |\n| Email | 0.10 dollars |",
        "readability",
    )


def test_comments_are_the_content_of_a_forum_thread() -> None:
    thread_type = json.dumps({"@context": "https://schema.org", "@type": "DiscussionForumPosting"})
    posts = "".join(
        f"<div class='comment'><p>{text}</p></div>" for text in (P1, P2, P3)
    )
    html = page(
        chrome(f"<div class='thread'>{posts}</div>"),
        f"<script type='application/ld+json'>{thread_type}</script>",
    )
    assert extract(html) == (ARTICLE, "readability")


# --- the article decision -----------------------------------------------------------------


# An editorial column before the article, shorter than the article but long enough to make
# an undeclared page look like a page of several pieces.
COLUMN = (
    "<div class='column'>"
    + "".join(
        f"<p>Our editor writes, in column part {n}: the valley has seen many floods before, "
        "and each time the town came together.</p>"
        for n in range(2)
    )
    + "</div>"
)


def test_an_article_with_heavy_furniture_around_it_is_still_the_article() -> None:
    # The page says it is an article, so the article comes back alone.
    head = "<meta property='og:type' content='article'>"
    html = page(COLUMN + chrome(f"<article>{BODY}</article>"), head)
    assert extract(html) == (ARTICLE, "readability")


def test_the_same_page_without_a_declaration_comes_back_as_its_main_region() -> None:
    # Not clearly an article: the column and the article, without the menu, header and footer.
    text, label = extract(page(COLUMN + chrome(f"<article>{BODY}</article>")))
    assert label == "readability"
    assert text.startswith("Our editor writes, in column part 0:")
    assert text.endswith(P3)
    assert "Home" not in text and "Copyright" not in text and "since 1901" not in text


def test_a_dated_article_is_an_article() -> None:
    # A date in the URL's path is a declaration too.
    html = page(COLUMN + chrome(f"<article>{BODY}</article>"))
    assert render_html(html, "https://example.com/2024/05/12/flood.html", False) == (
        ARTICLE,
        "readability",
    )


def test_a_published_time_is_a_declaration() -> None:
    head = "<meta property='article:published_time' content='2024-05-12T08:00:00Z'>"
    html = page(COLUMN + chrome(f"<article>{BODY}</article>"), head)
    assert extract(html) == (ARTICLE, "readability")


def test_a_listing_of_cards_comes_back_as_its_list_even_when_declared() -> None:
    cards = "".join(
        f"<div class='card'><h3><a href='/story/{n}'>Story number {n} from the valley</a></h3>"
        f"<p>A short blurb about story {n}, the council and the weather.</p></div>"
        for n in range(8)
    )
    head = "<meta property='og:type' content='article'>"
    text, label = extract(page(chrome(f"<div class='grid'>{cards}</div>"), head))
    assert label == "readability"
    assert text.startswith("### [Story number 0 from the valley](https://example.com/story/0)")
    assert text.endswith("A short blurb about story 7, the council and the weather.")


def test_an_article_spread_over_sibling_blocks_comes_back_whole() -> None:
    # The best-scoring block (a table, named nothing) holds three of the five paragraphs; the
    # other two sit deep in wrappers beside it, beyond the reach of Readability's scores.
    rows = "".join(f"<tr><td>{p}</td></tr>" for p in (P1, P2, P3))
    deep = [f"{'<div>' * 6}<p>{p}</p>{'</div>' * 6}" for p in (Q1, Q2)]
    html = page(
        chrome(
            f"<div class='layout'><div class='specs'><table>{rows}</table></div>"
            f"<div class='notes'>{''.join(deep)}</div></div>"
        )
    )
    assert extract(html) == (f"{ARTICLE}\n\n{Q1}\n\n{Q2}", "readability")


def test_a_section_beside_the_joined_sections_joins_them() -> None:
    # Two sections score and are joined; the third holds its prose too deep in wrappers to
    # score, but it is a section of the same page (documentation, a long how-to).
    deep = [f"{'<div>' * 6}<p>{p}</p>{'</div>' * 6}" for p in (Q1, Q2)]
    html = page(
        chrome(
            "<div class='doc'>"
            f"<section class='text'><h2>The flood</h2><p>{P1}</p><p>{P2}</p></section>"
            f"<section class='text'><h2>The council</h2><p>{P3}</p><p>{P1}</p></section>"
            f"<section><h2>What next</h2>{''.join(deep)}</section></div>"
        )
    )
    assert extract(html) == (
        f"## The flood\n\n{P1}\n\n{P2}\n\n## The council\n\n{P3}\n\n{P1}\n\n"
        f"## What next\n\n{Q1}\n\n{Q2}",
        "readability",
    )


# --- what the page declares ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["NewsArticle", "BlogPosting", "Article"])
def test_json_ld_article_body_locates_the_article(kind: str) -> None:
    # Readability's scores prefer the denser teaser column; the declared body says where the
    # article is, and the page holds its text.
    body = json.dumps({"@context": "https://schema.org", "@type": kind, "articleBody": ARTICLE})
    article = "".join(f"<div class='x'><div><p>{p}</p></div></div>" for p in (P1, P2, P3))
    column = (
        "<div class='column'><p>" + ", ".join(["one", "two", "three"] * 30) + "</p></div>"
    )
    html = page(
        f"<div class='top'>{column}</div><div class='bottom'><div class='main'>{article}</div>"
        "</div>",
        f"<script type='application/ld+json'>{body}</script>",
    )
    assert extract(html) == (ARTICLE, "readability")


@pytest.mark.parametrize(
    "declared",
    [
        pytest.param(P1[:60], id="teaser"),
        pytest.param(f"{P1}\n\n{P2[:50]}…", id="truncated"),
    ],
)
def test_a_declared_body_that_is_a_teaser_does_not_narrow_the_article(declared: str) -> None:
    # Checked against the page: only the part the page holds counts, and a declared body
    # inside the article never narrows it.
    body = json.dumps(
        {"@context": "https://schema.org", "@type": "BlogPosting", "articleBody": declared}
    )
    html = page(
        chrome(f"<article>{BODY}</article>"),
        f"<script type='application/ld+json'>{body}</script>",
    )
    assert extract(html) == (ARTICLE, "readability")


def test_a_declared_body_in_a_teaser_card_elsewhere_does_not_replace_the_article() -> None:
    # A related-posts card marks its blurb itemprop="articleBody": a declaration with a
    # fraction of the article's prose, elsewhere on the page, is the card's, not the page's.
    card = (
        "<div class='more'><div itemprop='articleBody'><p>The harvest festival returns to "
        "the valley on Sunday.</p></div></div>"
    )
    html = page(chrome(f"<article>{BODY}</article>{card}"))
    assert extract(html) == (ARTICLE, "readability")


def test_microdata_article_body_is_the_article_container() -> None:
    html = page(
        chrome(
            "<div class='layout'><div itemprop='articleBody'>"
            + "".join(f"<div class='para'><div><p>{p}</p></div></div>" for p in (P1, P2, P3))
            + "</div><div class='box'><p>"
            + ", ".join(["alpha", "beta", "gamma"] * 30)
            + "</p></div></div>"
        )
    )
    assert extract(html) == (ARTICLE, "readability")


def test_og_type_article_is_evidence_for_the_decision() -> None:
    head = "<meta property='og:type' content='article'>"
    html = page(COLUMN + chrome(f"<div class='story'>{BODY}</div>"), head)
    assert extract(html) == (ARTICLE, "readability")


def test_og_type_website_is_no_such_evidence() -> None:
    head = "<meta property='og:type' content='website'>"
    html = page(COLUMN + chrome(f"<div class='story'>{BODY}</div>"), head)
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith("Our editor writes, in column part 0:")  # the main region


def test_json_ld_article_type_without_a_body_is_evidence_too() -> None:
    body = json.dumps({"@context": "https://schema.org", "@type": "BlogPosting"})
    html = page(
        COLUMN + chrome(f"<div class='story'>{BODY}</div>"),
        f"<script type='application/ld+json'>{body}</script>",
    )
    assert extract(html) == (ARTICLE, "readability")


def test_article_and_main_elements_are_never_taken_for_furniture() -> None:
    # Their class names say "sidebar" and "related", which would make a <div> furniture.
    html = page(
        "<nav><a href='/'>Home</a></nav>"
        f"<main class='with-sidebar'><article class='related-layout'>{BODY}</article></main>"
    )
    assert extract(html) == (ARTICLE, "readability")


def test_role_main_is_the_main_region() -> None:
    html = page(
        "<nav><a href='/'>Home</a></nav>"
        f"<div role='main' class='page-with-sidebar'>{BODY}</div>"
        "<div class='sidebar'><p>Opening hours of the town hall, Monday to Friday.</p></div>"
    )
    assert extract(html) == (ARTICLE, "readability")


def test_under_100_bytes_of_article_still_falls_back_to_the_whole_page() -> None:
    head = "<meta property='og:type' content='article'>"
    html = page("<nav><a href='/'>Home</a></nav><article><p>A short note.</p></article>", head)
    assert extract(html) == ("[Home](https://example.com/)\n\nA short note.", "raw-html")


# A rail of teasers after the main content: look-alike items, each a title link and two short
# lines of their own (too short to count as prose, but text a reader sees).
RAIL = (
    "<div class='more'>"
    + "".join(
        f"<div class='item'><a href='/story/{n}'>Valley story {n}</a>"
        "<p>Roads shut in the hills</p><p>Updated at noon today</p></div>"
        for n in range(20)
    )
    + "</div>"
)


def test_a_declared_article_followed_by_a_long_teaser_rail_is_the_article() -> None:
    # The rail's lines outweigh the article's text five to one, and the page says it is an
    # article: a rail after the article is its furniture, as on an undeclared page.
    head = "<meta property='og:type' content='article'>"
    html = page(chrome(f"<article><p>{P1}</p></article>") + RAIL, head)
    assert extract(html) == (P1, "readability")


def test_a_declared_page_whose_grid_comes_before_its_text_comes_back_as_its_region() -> None:
    # A category page: the grid first, a few lines about the category at its foot.
    head = "<meta property='og:type' content='article'>"
    html = page(RAIL + chrome(f"<article><p>{P1}</p></article>"), head)
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith("[Valley story 0](https://example.com/story/0)")
    assert text.endswith(P1)


# The same rail, each card's link an empty <a> laid over its picture: no link text at all.
OVERLAID_RAIL = (
    "<div class='more'>"
    + "".join(
        f"<div class='item'><a href='/story/{n}'></a><div class='title'>Valley story {n}</div>"
        "<p>Roads shut in the hills</p><p>Updated at noon today</p></div>"
        for n in range(20)
    )
    + "</div>"
)


def test_a_rail_of_cards_with_empty_links_after_the_article_is_discounted_too() -> None:
    html = page(chrome(f"<article>{BODY}</article>") + OVERLAID_RAIL)
    assert extract(html) == (ARTICLE, "readability")


def test_the_same_cards_before_the_text_still_make_a_listing() -> None:
    html = page(OVERLAID_RAIL + chrome(f"<article>{BODY}</article>"))
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith("Valley story 0\n\nRoads shut in the hills")
    assert text.endswith(P3)


def test_an_article_the_page_holds_twice_is_the_article() -> None:
    # A responsive template: a second copy for small screens, hidden by a style sheet.
    html = page(chrome(f"<article>{BODY}</article>") + f"<div class='mobile'>{BODY}</div>")
    assert extract(html) == (ARTICLE, "readability")


def test_a_page_of_two_different_stories_comes_back_as_both() -> None:
    other = f"<p>{Q1}</p><p>{Q2}</p><p>{Q1} {Q2}</p>"
    html = page(chrome(f"<article>{BODY}</article>") + f"<div class='mobile'>{other}</div>")
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith(P1)
    assert text.endswith(f"{Q1} {Q2}")


# Shell steps whose comments start like markdown headings.
STEPS = "\n".join(f"# step {n}: look at the tree\ngit status" for n in range(6))


def test_comment_lines_in_code_blocks_are_not_headings() -> None:
    code = f"<pre><code>{STEPS}</code></pre>"
    html = page(chrome(f"<article><p>{P1}</p>{code}<p>{P2}</p></article>"))
    assert extract(html) == (f"{P1}\n\n```\n{STEPS}\n```\n\n{P2}", "readability")


def test_code_blocks_end_at_their_own_fence_or_at_the_end() -> None:
    text = "# Title\n````sh\n# a\n```\n# b\n````\n# after\n```\n# never closed\n# c"
    assert _outside_code(text) == "# Title\n# after"


def test_a_page_of_headings_comes_back_as_its_main_region() -> None:
    sections = "".join(
        f"<h2>Step {n}: look at the tree</h2><p>Run git status.</p>" for n in range(6)
    )
    html = page(chrome(f"<article><p>{P1}</p>{sections}<p>{P2}</p></article>"))
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith(P1)
    assert "## Step 5: look at the tree\n\nRun git status." in text


# An off-canvas mega-menu: a site map with a line under every entry, bigger than the page.
MEGA_MENU = (
    "<nav class='offcanvas'><ul>"
    + "".join(
        f"<li><a href='/section/{n}'>Everything about section {n} of the Valley Gazette site</a>"
        f"<p>Opening times of office {n} here</p></li>"
        for n in range(50)
    )
    + "</ul></nav>"
)
LONG_BODY = BODY + f"<p>{Q1}</p><p>{Q2}</p><p>{P1} {P2}</p>"
LONG_ARTICLE = f"{ARTICLE}\n\n{Q1}\n\n{Q2}\n\n{P1} {P2}"


def test_an_article_beside_a_mega_menu_bigger_than_the_page_is_the_article() -> None:
    html = page(MEGA_MENU + f"<main><article>{LONG_BODY}</article></main>")
    assert extract(html) == (LONG_ARTICLE, "readability")


def test_a_short_block_beside_a_mega_menu_still_comes_back_whole() -> None:
    # A listing whose items a script loads: the menu is all the page shows.
    html = page(MEGA_MENU + f"<main><article>{BODY}</article></main>")
    text, label = extract(html)
    assert label == "raw-html"
    assert text.startswith("- [Everything about section 0 of the Valley Gazette site]")
    assert text.endswith(P3)


def test_a_mega_menu_that_outscores_the_article_is_not_the_article() -> None:
    # Commas in every entry's line give the menu Readability's best score; the menu is
    # furniture that does not hold the page's densest prose, so that prose is the article.
    menu = MEGA_MENU.replace("Opening times of office", "Open 9, 10, 11, 12, 13, 14 at").replace(
        "Gazette site</a>", "Gazette site, its archive and its pages</a>"
    )
    html = page(menu + f"<main><article>{LONG_BODY}</article></main>")
    assert extract(html) == (LONG_ARTICLE, "readability")


def portal(article: str) -> str:
    """A news portal's page: a short article, then many blocks of teasers with prose blurbs."""
    teasers = "".join(
        f"<section class='block'><h2>Section {s}</h2>"
        + "".join(
            f"<div class='box'><h3><a href='/s/{s}{n}'>Story {s}{n} from the valley</a></h3>"
            f"<p>A blurb for story {s}{n}, which tells readers about the council meeting, the "
            "new bridge, the school fete and the weather expected next week.</p></div>"
            for n in range(4)
        )
        + "</section>"
        for s in range(5)
    )
    return (
        "<nav><a href='/'>Home</a></nav><div class='wrap'><div class='col'>"
        f"<div class='main'>{article}</div><div class='share'>Share</div></div>"
        f"<div class='portal'>{teasers}</div></div><footer><p>Copyright</p></footer>"
    )


NEWS_LD = (
    '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Flood"}</script>'
)


def test_a_short_declared_article_among_a_portals_teasers_comes_back_alone() -> None:
    # The teasers' blurbs hold ten times the article's prose: the pick grows over them, but
    # the page declares an article and holds one <article>, which is it.
    html = page(portal(f"<article><h1>Flood</h1><p>{P1}</p><p>{P2}</p></article>"), NEWS_LD)
    assert extract(html) == (f"# Flood\n\n{P1}\n\n{P2}", "readability")


def test_the_same_portal_without_a_declaration_keeps_its_teasers() -> None:
    html = page(portal(f"<article><h1>Flood</h1><p>{P1}</p><p>{P2}</p></article>"))
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith(f"# Flood\n\n{P1}")
    assert "A blurb for story 43" in text


def test_a_declared_portal_with_two_articles_keeps_its_teasers() -> None:
    two = f"<article><p>{P1}</p><p>{P2}</p></article><article><p>{P3}</p><p>{Q1}</p></article>"
    text, _ = extract(page(portal(two), NEWS_LD))
    assert "A blurb for story 43" in text



def test_a_documentation_page_drops_its_contents_breadcrumbs_and_previous_next_links() -> None:
    # A documentation generator's page: breadcrumbs, a table of contents, a side navigation
    # and previous/next links around the text, named by class words and ARIA labels.
    contents = "".join(f"<li><a href='#s{n}'>Section {n}</a></li>" for n in range(6))
    pages = "".join(f"<li><a href='/p{n}'>Page {n}</a></li>" for n in range(10))
    doc = (
        "<div class='document'><div class='body' role='main'>"
        "<div class='breadcrumbs' aria-label='breadcrumbs'><a href='/'>Docs</a> » "
        "<a href='/guide'>Guide</a> » Floods</div><h1>Floods</h1>"
        f"<div class='toc'><p class='caption'>Contents</p><ul>{contents}</ul></div>"
        f"<p>{P1}</p><h2 id='s1'>Pumps</h2><p>{P2}</p><pre><code>pump --start</code></pre>"
        f"<p>{P3}</p><div class='prev-next' role='navigation' aria-label='footer'>"
        "<a href='/a' rel='prev'>Previous: Rivers</a> <a href='/c' rel='next'>Next: Repairs</a>"
        f"</div></div></div><div class='sphinxsidebar'><h3>Navigation</h3><ul>{pages}</ul></div>"
    )
    assert extract(page(doc)) == (
        f"# Floods\n\n{P1}\n\n## Pumps\n\n{P2}\n\n```\npump --start\n```\n\n{P3}",
        "readability",
    )


def test_a_product_page_keeps_name_price_description_and_specifications() -> None:
    # A shop platform's product page: the description scores best, but the product's name
    # and price sit above it and its specification table beside it; the basket form and the
    # recommendation carousel stay out.
    specs = (
        "<table class='specs'><tr><th>Weight</th><td>2.4 kg</td></tr>"
        "<tr><th>Capacity</th><td>2 people</td></tr></table>"
    )
    cards = "".join(
        f"<div class='product-card'><a href='/p/{n}'>Tent model {n} for two</a>"
        f"<span class='price'>£{n}9.00</span></div>"
        for n in range(6)
    )
    product = (
        "<div class='product'><h1 class='product-title'>Ridge Tent</h1>"
        "<p class='price'>£129.00</p><form class='cart' action='/cart'>"
        "<button>Add to basket</button></form>"
        f"<div class='description'><p>{P1}</p><p>{P2}</p></div>{specs}</div>"
        f"<div class='recommended-products'><h2>You may also like</h2>{cards}</div>"
    )
    head = '<script type="application/ld+json">{"@type": "Product", "name": "Ridge Tent"}</script>'
    assert extract(page(chrome(product), head)) == (
        f"# Ridge Tent\n\n£129.00\n\n{P1}\n\n{P2}\n\n"
        "| Weight | 2.4 kg |\n|---|---|\n| Capacity | 2 people |",
        "readability",
    )
