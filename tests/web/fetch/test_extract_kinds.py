"""render_html on pages that are not a single article, and on general defects of the pick.

Every page here is small and written for the test, after what the common template families
generally emit (a React streaming render, a component library's class names, a shop
category grid, a blog index, a landing page, a forum thread): none is copied from a site.
"""

from __future__ import annotations

import pytest

from runvil.web._fetch.extract import render_html
from runvil.web._fetch.extract._signals import thread_path

BASE = "https://example.com/section/page"

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
NAV = (
    "<header><a href='/'>Valley Supplies</a><nav><a href='/a'>Tents</a> "
    "<a href='/b'>Boots</a> <a href='/c'>Stoves</a></nav></header>"
)
FOOTER = "<footer><p>Copyright Valley Supplies. All rights reserved.</p></footer>"


def page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head><title>Page</title>{head}</head><body>{body}</body></html>"


def extract(html: str, url: str = BASE) -> tuple[str, str]:
    return render_html(html, url, False)


# --- streaming server rendering -----------------------------------------------------------------


def test_a_hidden_part_that_the_pages_streaming_script_reveals_is_the_article() -> None:
    # React's streaming render: a placeholder where the article goes, the article itself later
    # in a hidden element, and the runtime's call that moves it into place.
    html = page(
        "<nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav>"
        "<main><!--$?--><template id='B:0'></template><p>Loading...</p><!--/$--></main>"
        f"<div hidden id='S:0'><article><h1>Flood</h1><p>{P1}</p><p>{P2}</p><p>{P3}</p>"
        "</article></div>"
        '<script>$RC("B:0","S:0")</script>'
    )
    assert extract(html) == (f"# Flood\n\n{P1}\n\n{P2}\n\n{P3}", "readability")


def test_a_hidden_part_no_script_reveals_stays_hidden() -> None:
    html = page(
        f"<article><p>{P1}</p><p>{P2}</p></article>"
        f"<div hidden id='S:0'><p>{P3}</p></div>"
        '<script>$RC("B:1","S:1")</script>'
    )
    assert extract(html) == (f"{P1}\n\n{P2}", "readability")


def test_content_hidden_until_found_is_content() -> None:
    # A collapsed section a reader opens (and find-in-page reveals) is part of the page.
    html = page(
        f"<article><h2>Opening hours</h2><p>{P1}</p>"
        f"<details><summary>More</summary></details><div hidden='until-found'><p>{P2}</p></div>"
        "</article>"
    )
    text, label = extract(html)
    assert label == "readability"
    assert text.endswith(P2)


# --- consent banners and component class names ----------------------------------------------------


def test_component_classes_named_cmp_are_not_a_consent_banner() -> None:
    # A site built from a component library names every block "cmp-...".
    html = page(
        "<div class='cmp-container'>"
        f"<div class='cmp-text'><p>{P1}</p><p>{P2}</p></div>"
        f"<div class='cmp-text'><p>{P3}</p></div></div>"
    )
    assert extract(html) == (f"{P1}\n\n{P2}\n\n{P3}", "readability")


def test_a_consent_platforms_banner_is_still_dropped() -> None:
    html = page(
        "<div class='qc-cmp2-container'><p>We value your privacy. We and our partners store "
        "and access information on a device, such as cookies.</p></div>"
        f"<article><p>{P1}</p><p>{P2}</p></article>"
    )
    assert extract(html) == (f"{P1}\n\n{P2}", "readability")


# --- listings, collections, landing pages: the main region ------------------------------------


def _shop_grid(items: int = 8) -> str:
    return "".join(
        f"<li class='product-card'><a href='/p/{n}'><img src='/i/{n}.jpg' alt=''>"
        f"<h2 class='product-card__title'>Trail tent number {n} for two</h2></a>"
        f"<span class='price'>${100 + n}.00</span>"
        f"<button class='add-to-cart'>Add to cart</button></li>"
        for n in range(items)
    )


def test_a_shop_category_comes_back_as_its_grid_without_filters_or_chrome() -> None:
    html = page(
        NAV
        + "<main><h1>Tents</h1><p class='intro'>Tents for every season, from light trail "
        "shelters to family domes.</p>"
        "<div class='filters'><h3>Filter by</h3><label>Brand</label> <label>Price</label> "
        "<label>Capacity</label> <label>Colour</label></div>"
        "<div class='sort-by'>Sort by: Featured</div>"
        f"<ul class='product-grid'>{_shop_grid()}</ul>"
        "<nav class='pagination'><a href='?page=2'>2</a> <a href='?page=3'>3</a></nav></main>"
        + FOOTER
    )
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith(
        "# Tents\n\nTents for every season, from light trail shelters to family domes."
    )
    assert "[Trail tent number 0 for two](https://example.com/p/0)" in text
    assert text.endswith("$107.00")
    for chrome in ("Filter by", "Sort by", "Add to cart", "Copyright", "Boots", "[2]"):
        assert chrome not in text


def test_a_blog_index_comes_back_as_its_list_of_posts() -> None:
    posts = "".join(
        f"<article class='post-summary'><h2><a href='/blog/{n}'>Notes from the valley, "
        f"part {n}</a></h2><time>May {n + 1}, 2024</time><p>What we learned on walk {n}, "
        "in a few lines.</p></article>"
        for n in range(6)
    )
    html = page(
        NAV
        + f"<div class='content'><h1>Blog</h1>{posts}</div>"
        + "<aside class='sidebar'><h3>Archives</h3><a href='/2023'>2023</a></aside>"
        + FOOTER
    )
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith("# Blog\n\n## [Notes from the valley, part 0](https://example.com/blog/0)")
    assert text.endswith("What we learned on walk 5, in a few lines.")
    assert "Archives" not in text and "Copyright" not in text


def test_a_landing_page_comes_back_as_its_sections() -> None:
    sections = "".join(
        f"<section class='feature'><h2>Feature {n}</h2><ul><li>Fast setup</li>"
        f"<li>Works offline</li><li>Free updates</li></ul></section>"
        for n in range(4)
    )
    html = page(
        NAV
        + "<div class='hero'><h1>Plan your trip</h1><p>Maps for every trail.</p>"
        "<a class='btn' href='/start'>Get started</a></div>"
        + sections
        + "<div class='newsletter-signup'><p>Sign up for our newsletter</p></div>"
        + FOOTER
    )
    text, label = extract(html)
    assert label == "readability"
    assert text.startswith("# Plan your trip\n\nMaps for every trail.")
    assert text.endswith("## Feature 3\n\n- Fast setup\n- Works offline\n- Free updates")
    assert "newsletter" not in text and "Copyright" not in text


def test_a_page_with_nothing_to_leave_out_comes_back_whole() -> None:
    # A table of data and nothing around it: the region is the page, labelled as such.
    rows = "".join(f"<tr><td>Station {n}</td><td>{n * 3} cm</td></tr>" for n in range(12))
    html = page(f"<table><tr><th>Station</th><th>Level</th></tr>{rows}</table>")
    text, label = extract(html)
    assert label == "raw-html"
    assert text.startswith("| Station | Level |")


# --- threads ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "thread"),
    [
        ("https://example.com/forum/beginners/first-steps", True),
        ("https://example.com/threads/first-steps.1234/", True),
        ("https://example.com/t/first-steps/1234", True),
        ("https://example.com/r/science/comments/abc/first_steps/", True),
        ("https://example.com/questions/1234/how-to-start", True),
        ("https://example.com/showthread.php?t=1234", True),
        ("https://example.com/news/2024/first-steps", False),
        ("https://example.com/tents/trail-tent", False),
        ("https://example.com/topical/first-steps", False),
    ],
)
def test_forum_and_q_and_a_paths_are_read_as_threads(url: str, thread: bool) -> None:
    assert thread_path(url) is thread


def _replies(count: int) -> str:
    return "".join(
        f"<div class='comment' itemprop='comment' itemscope "
        f"itemtype='https://schema.org/Comment'><div class='comment-meta'>"
        f"<a href='/u/{n}'>walker{n}</a></div><div class='comment-body'><p>Reply {n}: {P2}</p>"
        "</div></div>"
        for n in range(count)
    )


def test_a_thread_declared_in_microdata_keeps_every_reply_in_order() -> None:
    # A forum engine's markup: the opening post and its replies, the replies named comments.
    html = page(
        NAV
        + "<main itemscope itemtype='https://schema.org/DiscussionForumPosting'>"
        f"<h1 itemprop='headline'>First steps</h1><div class='post-body'><p>{P1}</p></div>"
        f"<div class='comments'>{_replies(4)}</div></main>"
        + FOOTER
    )
    text, label = extract(html, "https://example.com/community/first-steps")
    assert label == "readability"
    assert text.index(P1) < text.index("Reply 0:") < text.index("Reply 3:")
    assert "Copyright" not in text


def test_a_threads_posts_inside_forms_come_back_in_its_main_region() -> None:
    # An older forum engine wraps each post's text in the form that edits it; the thread's
    # URL says it is a thread, so its replies, named comments, are content.
    posts = "".join(
        f"<div class='thing comment'><p class='tagline'><a href='/u/{n}'>walker{n}</a> "
        f"{n + 2} points</p><form class='usertext'><div class='md'><p>Post {n}: the trail "
        f"was muddy after the rain, take boots.</p></div></form></div>"
        for n in range(6)
    )
    html = page(
        NAV
        + "<div class='side'><p>A community for walkers since 2009.</p></div>"
        + f"<div class='content'><div class='commentarea'>{posts}</div></div>"
        + "<form class='login-form'><label>User</label> <label>Password</label></form>"
        + FOOTER
    )
    text, label = extract(html, "https://example.com/r/walks/comments/abc/muddy_trails/")
    assert label == "readability"
    assert text.index("Post 0:") < text.index("Post 5:")
    assert "Password" not in text and "Copyright" not in text
