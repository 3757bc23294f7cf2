"""Blog and news indexes, and collections: the main list of items (title, short text,
link) comes back; filters, facets, sorting, pagination and widget rails do not."""

from __future__ import annotations

import pytest

from ._family import FOOTER, NAV, PROSE, Family, check, json_ld, page, params

TITLES = [
    "Ridge loop in a day",
    "Camping by the second stream",
    "The bus back from the lake",
    "Winter on the upper path",
    "Walking with dogs in spring",
    "The new bridge and the old ford",
]
EXCERPTS = [PROSE[0], PROSE[3], PROSE[5], PROSE[6], PROSE[9], PROSE[8]]


def wordpress_archive() -> Family:
    posts = "".join(
        f"<article class='post-{n} post type-post status-publish format-standard hentry "
        f"category-walks' id='post-{n}'><header class='entry-header has-text-align-center'>"
        "<div class='entry-categories'><span class='screen-reader-text'>Categories</span>"
        "<div class='entry-categories-inner'><a href='/category/walks/' rel='category tag'>"
        "Walks</a></div></div><h2 class='entry-title heading-size-1'><a href='/2024/05/"
        f"post-{n}/'>{title}</a></h2><div class='post-meta-wrapper post-meta-single "
        "post-meta-single-top'><ul class='post-meta'><li class='post-author meta-wrapper'>"
        "<span class='meta-icon'><span class='screen-reader-text'>Post author</span></span>"
        "<span class='meta-text'>By <a href='/author/ann/'>Ann</a></span></li><li class="
        "'post-date meta-wrapper'><span class='meta-text'><a href='/2024/05/post/'>May "
        f"{n + 1}, 2024</a></span></li><li class='post-comment-link meta-wrapper'><span "
        f"class='meta-text'><a href='/2024/05/post-{n}/#comments'>{n} Comments</a></span>"
        "</li></ul></div></header><div class='post-inner thin'><div class='entry-content'>"
        f"<p>{text}</p></div></div></article><hr class='post-separator styled-separator "
        "is-style-wide section-inner' aria-hidden='true'>"
        for n, (title, text) in enumerate(zip(TITLES, EXCERPTS, strict=True))
    )
    widgets = (
        "<div class='footer-nav-widgets-wrapper header-footer-group'><aside class='footer-"
        "widgets-outer-wrapper' role='complementary'><div class='widget widget_recent_"
        "entries'><h2 class='widget-title subheading heading-size-3'>Recent Posts</h2><ul>"
        "<li><a href='/a/'>An older walk we liked</a></li><li><a href='/b/'>Another older "
        "walk</a></li></ul></div><div class='widget widget_archive'><h2 class='widget-title'>"
        "Archives</h2><ul><li><a href='/2024/04/'>April 2024</a></li><li><a href='/2024/03/'>"
        "March 2024</a></li></ul></div><div class='widget widget_categories'><h2 class="
        "'widget-title'>Categories</h2><ul><li class='cat-item'><a>Walks</a></li><li "
        "class='cat-item'><a>Gear</a></li></ul></div></aside></div>"
    )
    html = page(
        NAV + "<main id='site-content' role='main'><header class='archive-header has-text-align-"
        "center header-footer-group'><div class='archive-header-inner section-inner medium'>"
        "<h1 class='archive-title'><span class='color-accent'>Category:</span> Walks</h1>"
        "<div class='archive-subtitle section-inner thin max-percentage intro-text'><p>Walks "
        "in and around the valley, with maps and timings.</p></div></div></header>"
        + posts
        + "<div class='pagination-wrapper section-inner'><hr class='styled-separator "
        "pagination-separator is-style-wide' aria-hidden='true'><nav class='navigation "
        "pagination' aria-label='Posts'><h2 class='screen-reader-text'>Posts navigation</h2>"
        "<div class='nav-links'><span aria-current='page' class='page-numbers current'>1"
        "</span><a class='page-numbers' href='/category/walks/page/2/'>2</a><a class='next "
        "page-numbers' href='/category/walks/page/2/'>Older <span class='nav-short'>Posts"
        "</span></a></div></nav></div></main>" + widgets + FOOTER
    )
    return Family(
        "wordpress-archive",
        html,
        "https://blog.example.com/category/walks/",
        must=[x for pair in zip(TITLES, EXCERPTS, strict=True) for x in pair],
        must_not=[
            "Recent Posts",
            "An older walk we liked",
            "April 2024",
            "Posts navigation",
            "Older Posts",
            "Privacy policy",
        ],
    )


def ghost_tag() -> Family:
    cards = "".join(
        f"<article class='post-card post tag-gear{' post-card-large' if n == 0 else ''}'>"
        f"<a class='post-card-image-link' href='/post-{n}/'><img class='post-card-image' "
        f"src='/content/images/{n}.jpg' alt='{title}' loading='lazy'></a>"
        f"<div class='post-card-content'><a class='post-card-content-link' href='/post-{n}/'>"
        "<header class='post-card-header'><div class='post-card-tags'><span class='post-card-"
        f"primary-tag'>Walks</span></div><h2 class='post-card-title'>{title}</h2></header>"
        f"<div class='post-card-excerpt'>{text}</div></a><footer class='post-card-meta'>"
        f"<time class='post-card-meta-date' datetime='2024-05-{n + 10}'>May {n + 10}, 2024"
        "</time><span class='post-card-meta-length'>4 min read</span></footer></div>"
        "</article>"
        for n, (title, text) in enumerate(zip(TITLES, EXCERPTS, strict=True))
    )
    html = page(
        "<div class='viewport'><div class='site-content'><header id='gh-head' class='gh-head "
        "outer'><div class='gh-head-inner inner'><div class='gh-head-brand'><a class='gh-head-"
        "logo' href='/'>Valley Notes</a></div><nav class='gh-head-menu'><ul class='nav'><li "
        "class='nav-home'><a href='/'>Home</a></li><li class='nav-about'><a href='/about/'>"
        "About</a></li></ul></nav><div class='gh-head-actions'><a class='gh-head-button' "
        "href='#/portal/signup'>Subscribe</a></div></div></header>"
        "<main id='site-main' class='site-main outer'><div class='inner posts'><div "
        "class='post-feed'><section class='post-card post-card-large'><header class='post-"
        "card-header'><div class='post-card-header-inner'><h1 class='tag-name'>Walks</h1>"
        "</div></header><div class='post-card-excerpt'>Routes we have walked, with what we "
        f"learned on each.</div></section>{cards}</div><nav class='pagination'><span "
        "class='page-number'>Page 1 of 3</span><a class='older-posts' href='/tag/walks/page/"
        "2/'>Older Posts →</a></nav></div></main>"
        "<section class='footer-cta outer'><div class='inner'><h2 class='footer-cta-title'>"
        "Sign up for more like this.</h2><a class='footer-cta-button' href='#/portal'><div "
        "class='footer-cta-input'>Enter your email</div><span>Subscribe</span></a></div>"
        "</section><footer class='site-footer outer'><div class='inner'><section class='copy"
        "right'><a href='/'>Valley Notes</a> © 2024</section><nav class='site-footer-nav'>"
        "<ul class='nav'><li><a href='/privacy/'>Privacy policy</a></li></ul></nav><div><a "
        "href='https://ghost.example/' rel='noopener'>Powered by a publishing platform</a>"
        "</div></div></footer></div></div>",
        head="<meta property='og:type' content='website'>",
    )
    return Family(
        "ghost-tag",
        html,
        "https://notes.example.com/tag/walks/",
        must=[x for pair in zip(TITLES, EXCERPTS, strict=True) for x in pair],
        must_not=[
            "Sign up for more like this",
            "Enter your email",
            "Page 1 of 3",
            "Older Posts",
            "Powered by",
        ],
    )


def news_section() -> Family:
    # A news site's section front: a lead story, a grid of teasers, a "most read" rail and
    # a newsletter box; the list is declared as an ItemList.
    teasers = "".join(
        f"<div class='card card--standard' data-card-type='article'><a class='card__link' "
        f"href='/news/2024/05/{n}/story-{n}'><div class='card__media'><img alt=''></div>"
        f"<h3 class='card__headline'><span>{title}</span></h3></a><p class='card__summary'>"
        f"{text}</p><div class='card__meta'><span class='card__label'>Walks</span><time>"
        f"{n + 1}h ago</time></div></div>"
        for n, (title, text) in enumerate(zip(TITLES, EXCERPTS, strict=True))
    )
    rail = "".join(
        f"<li class='most-read__item'><span class='most-read__rank'>{n + 1}</span><a "
        f"href='/news/x{n}'>Most read story number {n} about the valley</a></li>"
        for n in range(5)
    )
    html = page(
        NAV + "<main id='main-content' class='section-front'><div class='section-header'><h1 "
        "class='section-header__title'>Outdoors</h1></div><div class='layout layout--with-"
        f"rail'><div class='layout__main'><div class='card-grid'>{teasers}</div>"
        "<div class='load-more'><button class='load-more__button'>Show more stories</button>"
        "</div></div><aside class='layout__rail'><section class='most-read'><h2 class='most-"
        f"read__title'>Most read</h2><ol class='most-read__list'>{rail}</ol></section>"
        "<section class='newsletter-promo'><h2>Get the outdoors newsletter</h2><p>Sign up "
        "for a weekly round-up of walks, gear and weather.</p><button>Sign up</button>"
        "</section></aside></div></main>" + FOOTER,
        head=json_ld(
            {
                "@context": "https://schema.org",
                "@type": "ItemList",
                "itemListElement": [
                    {"@type": "ListItem", "position": n + 1, "url": f"https://news.example.com/{n}"}
                    for n in range(6)
                ],
            }
        ),
    )
    return Family(
        "news-section",
        html,
        "https://news.example.com/outdoors",
        must=[x for pair in zip(TITLES, EXCERPTS, strict=True) for x in pair],
        must_not=[
            "Most read",
            "Most read story number",
            "outdoors newsletter",
            "Show more stories",
            "Privacy policy",
        ],
    )


def search_results() -> Family:
    results = "".join(
        f"<li class='search-result'><h3 class='search-result__title'><a href='/walks/{n}'>"
        f"{title}</a></h3><p class='search-result__snippet'>{text}</p><span "
        f"class='search-result__url'>example.com/walks/{n}</span></li>"
        for n, (title, text) in enumerate(zip(TITLES, EXCERPTS, strict=True))
    )
    facets = "".join(
        f"<li class='facet__option'><label><input type='checkbox'> {name} <span "
        f"class='facet__count'>({count})</span></label></li>"
        for name, count in [("Routes", 31), ("Gear reviews", 12), ("Trip reports", 8)]
    )
    html = page(
        NAV + "<div class='search-page'><form class='search-page__form' role='search'><input "
        "name='q' value='ridge'><button>Search</button></form><div class='search-page__"
        "body'><aside class='facets' aria-label='Filter results'><h2 class='facets__title'>"
        f"Filter results</h2><div class='facet'><h3>Content type</h3><ul>{facets}</ul></div>"
        "<div class='facet'><h3>Date</h3><ul><li><label><input type='radio'> Past week"
        "</label></li><li><label><input type='radio'> Past year</label></li></ul></div>"
        "</aside><section class='search-page__results'><div class='results-toolbar'><p "
        "class='results-count'>51 results for “ridge”</p><label>Sort by <select><option>"
        "Relevance</option><option>Newest</option></select></label></div>"
        f"<ol class='search-results'>{results}</ol><nav class='pager' aria-label='Pages'>"
        "<a aria-current='page'>1</a> <a href='?q=ridge&amp;page=2'>2</a> <a href='?q=ridge"
        "&amp;page=2' rel='next'>Next page</a></nav></section></div></div>" + FOOTER,
        head=json_ld({"@context": "https://schema.org", "@type": "SearchResultsPage"}),
    )
    return Family(
        "search-results",
        html,
        "https://www.example.com/search?q=ridge",
        must=[x for pair in zip(TITLES, EXCERPTS, strict=True) for x in pair],
        must_not=[
            "Filter results",
            "Content type",
            "Gear reviews",
            "Past week",
            "Sort by",
            "Next page",
            "Privacy policy",
        ],
    )


FAMILIES = [wordpress_archive(), ghost_tag(), news_section(), search_results()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_an_index_comes_back_as_its_main_list(family: Family) -> None:
    check(family)
