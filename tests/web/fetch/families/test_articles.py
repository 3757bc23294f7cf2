"""Articles of the common blog and news templates: the body comes back joined across the
sibling blocks a template splits it into, without headline furniture, photo captions, share
bars, teaser rails or "about the author" boxes."""

from __future__ import annotations

import pytest

from ._family import FOOTER, NAV, PROSE, Family, check, json_ld, page, params

BODY = PROSE[:8]
CAPTION = "The ridge at dawn, seen from the church tower. Photo: Ann Walker"


def split_news() -> Family:
    # A news template that closes the body block for an advert and a "read also" box, and
    # opens a second one with the same class for the rest of the story.
    first = "".join(f"<p>{text}</p>" for text in BODY[:3])
    second = "".join(f"<p>{text}</p>" for text in BODY[3:])
    teasers = "".join(
        f"<li class='teaser'><a href='/news/2024/05/{n}/x'><img alt=''><span class='teaser__"
        f"title'>Another story from the valley, number {n}</span></a></li>"
        for n in range(4)
    )
    html = page(
        NAV + "<main><div class='article-header'><div class='kicker'>Outdoors</div><h1 "
        "class='headline'>The ridge loop, walked in a day</h1><div class='dateline'>By Ann "
        "Walker · 14 May 2024, 09:12</div></div><figure class='lead-image'><img src='/i/r.jpg'"
        f" alt=''><figcaption>{CAPTION}</figcaption></figure>"
        f"<div class='article-body'>{first}</div>"
        "<div class='ad-slot ad-slot--inarticle'><span>Advertisement</span></div>"
        "<aside class='read-also'><strong>Read also:</strong> <a href='/news/x'>Five walks "
        "for a wet weekend in the valley</a></aside>"
        f"<div class='article-body'>{second}</div>"
        "<div class='share-bar'><a>Share on Facebook</a> <a>Share on X</a> <a>Email</a></div>"
        f"<section class='more-stories'><h2>More from Outdoors</h2><ul>{teasers}</ul></section>"
        "</main>" + FOOTER,
        head=json_ld(
            {
                "@context": "https://schema.org",
                "@type": "NewsArticle",
                "headline": "The ridge loop",
                "datePublished": "2024-05-14",
            }
        ),
    )
    return Family(
        "split-news",
        html,
        "https://news.example.com/outdoors/2024/05/14/ridge-loop",
        must=BODY,
        must_not=[
            CAPTION,
            "Advertisement",
            "Five walks for a wet weekend",
            "Share on",
            "More from Outdoors",
            "Another story from the valley",
        ],
    )


def wordpress_post() -> Family:
    related = "".join(
        f"<article class='related-post'><a href='/2024/0{n + 1}/older-{n}/'><h3>An older "
        f"walk, part {n}</h3></a><p>{PROSE[10 + n][:90]}</p></article>"
        for n in range(3)
    )
    html = page(
        NAV + "<div id='content' class='site-content'><div id='primary' class='content-area'>"
        "<main id='main' class='site-main'><article id='post-9' class='post-9 post type-post "
        "status-publish format-standard hentry category-walks'><header class='entry-header'>"
        "<h1 class='entry-title'>The ridge loop, walked in a day</h1><div class='entry-meta'>"
        "<span class='posted-on'>Posted on <time class='entry-date published'>May 14, 2024"
        "</time></span> <span class='byline'>by <a class='url fn n'>Ann</a></span></div>"
        "</header><div class='entry-content'>"
        + "".join(f"<p>{text}</p>" for text in BODY[:4])
        + f"<figure class='wp-block-image size-large'><img alt=''><figcaption class='wp-"
        f"element-caption'>{CAPTION}</figcaption></figure>"
        + "".join(f"<p>{text}</p>" for text in BODY[4:])
        + "<div class='sharedaddy sd-sharing-enabled'><h3 class='sd-title'>Share this:</h3>"
        "<ul><li><a class='share-facebook'>Facebook</a></li><li><a class='share-x'>X</a>"
        "</li></ul></div></div><footer class='entry-footer'><span class='cat-links'>Posted "
        "in <a>Walks</a></span></footer></article>"
        "<div class='author-info'><h2 class='author-title'>About Ann</h2><p class='author-"
        "bio'>Ann has walked the valley for twenty years and writes about it every week, "
        "usually with muddy boots.</p></div>"
        f"<section class='related-posts'><h2>Related posts</h2>{related}</section>"
        "<div id='comments' class='comments-area'><div id='respond' class='comment-respond'>"
        "<h3 id='reply-title' class='comment-reply-title'>Leave a Reply</h3><form><p "
        "class='comment-notes'>Your email address will not be published.</p></form></div>"
        "</div></main></div></div>" + FOOTER
    )
    return Family(
        "wordpress-post",
        html,
        "https://blog.example.com/2024/05/14/ridge-loop/",
        must=BODY,
        must_not=[
            CAPTION,
            "Share this",
            "About Ann",
            "Related posts",
            "An older walk",
            "Leave a Reply",
            "Your email address",
        ],
    )


FAMILIES = [split_news(), wordpress_post()]

FAILING: frozenset[str] = frozenset()


@pytest.mark.parametrize("family", params(FAMILIES, FAILING))
def test_an_article_comes_back_whole_without_its_furniture(family: Family) -> None:
    check(family)
