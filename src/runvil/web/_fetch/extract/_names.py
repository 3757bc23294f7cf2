"""What an element's ``class`` and ``id`` names say about it: page furniture, or content.

Sites name their blocks after what they are (``comments``, ``share-bar``, ``relatedPosts``,
``newsletter-signup``, ``article-body``), so the names are good evidence, but only as words.
Matching substrings, as Readability does, reads ``com-paragraph`` as a comment, ``tagStyle_x`` as
a tag list, ``media-box`` as media chrome and every ``elementor-widget-container`` (the page
builder's wrapper around each paragraph) as a sidebar widget, and threw whole articles away.

So a name is split into words, at separators and at lower-to-upper case changes
(``relatedPosts`` is ``related`` ``posts``), and each word is compared with vocabularies:

- *furniture* words (navigation, comments, sharing, related stories, newsletters, ads, author
  boxes, paywalls...), matched at the start of a word, so ``comments``, ``sharebar`` and
  ``relatedposts`` match while ``commentary`` does not;
- *weak* words (``widget``, ``meta``, ``teaser``, ``sticky``...), which describe furniture on
  some sites and content wrappers on others: they count only for a block that holds little
  prose (``_corrections`` decides);
- a few *phrases* that sites glue into one word (``readmore``, ``youmayalsolike``), found in
  the names with every separator removed.

Verdicts are memoised per name string: a page repeats the same class strings thousands of
times.
"""

from __future__ import annotations

import re

from ._alternation import alternation

NONE = 0
WEAK = 1  # furniture only when the block is mostly links
SHORT = 2  # furniture only when the block is short (a paywall prompt, a login box)
FURNITURE = 3

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

# Each entry matches a word that starts with it. Grouped by the kind of furniture they name.
_FURNITURE_PREFIXES = (
    # navigation and page chrome
    "nav", "menu", "megamenu", "submenu", "dropdown", "flyout", "drawer", "breadcrumb",
    "footer", "colophon", "copyright", "sidebar", "widgets", "textwidget", "toolbar",
    "pagination", "pager", "skiplink", "masthead", "topbar", "bottombar",
    # comments
    "comment", "disqus", "respond", "reply", "replies",
    # sharing and following
    "share", "sharing", "social", "sociable", "follow",
    # related, recommended, most read, teasers to other pages
    "related", "recommend", "recirc", "trending", "popular", "mostread", "morestories",
    "outbrain", "taboola",
    # newsletters and subscriptions
    "newsletter", "subscri", "signup", "optin",
    # ads and promotion
    "advert", "sponsor", "promo", "dfp", "adslot", "adunit", "adcontainer", "adwrap",
    "affiliate",
    # author boxes and bylines
    "author", "byline",
    # tags and categories
    "tags", "taglist", "taxonomy", "categories", "keywords",
    # dialogs, banners, consent
    "modal", "popup", "overlay", "banner", "cookie", "consent", "gdpr", "dialog",
    # calls to action and controls
    "cta", "btn", "button", "rating", "reaction",
)  # fmt: skip
# Words that name furniture exactly (as a prefix they would catch too much: ``ad`` ``address``).
_FURNITURE_WORDS = frozenset({"ad", "ads", "adv", "bio", "bios", "noprint", "search", "aside"})
# Words that start like furniture but name content.
_NOT_FURNITURE = frozenset(
    {
        "commentary", "commentaries", "navigator", "shared", "shareholder", "shareholders",
        "popularity", "promoted", "promotion", "promotions",
    }
)  # fmt: skip
# Furniture when short: the box that asks for a login or a subscription, a gallery's
# thumbnails and arrows. Sites also put the article's own text in a block called ``paywall``
# (the part a subscription unlocks), which is long.
_SHORT_PREFIXES = (
    "paywall", "regwall", "login", "signin", "register", "registration", "premium",
    "thumbnails", "thumbs", "carousel", "slider", "lightbox", "gallery", "counter",
)  # fmt: skip
_WEAK_PREFIXES = (
    "widget", "meta", "extra", "teaser", "sticky", "secondary", "tool", "util", "action",
    "links", "linklist", "card", "media", "caption", "credit", "info", "more", "aux",
    "complementary", "feedback", "contact",
)  # fmt: skip
# Glued phrases, found in the lower-cased names with everything but letters removed.
_PHRASES = re.compile(
    r"readmore|continuereading|readnext|readalso|alsoread|youmay(?:also)?like|mightalsolike|"
    r"moreon|morefrom|aboutauthor|authorbox|authorbio|postnav|nextpost|prevpost|previouspost|"
    r"tableofcontents|sitemap|skipto|taglist|tagcloud|posttags|entrytags"
)
# Words that name an article's own container. A class made only of such words (``post``,
# ``hentry``, ``entry-content``, ``node--type-article``) protects its element from being
# taken for furniture by its other classes: WordPress gives a post ``tag-x category-y``
# classes, Drupal marks a front-page article ``node--promoted``.
_CONTENT_WORDS = frozenset(
    {
        "article", "content", "entry", "hentry", "post", "story", "body", "text", "prose",
        "main", "richtext", "blog", "single", "node", "type", "page", "field", "item",
        "inner", "wrapper", "wrap", "container", "h",
    }
)  # fmt: skip
# Of those, the ones that make a class a content class (not just structure).
_CONTENT_HEADS = frozenset(
    {"article", "content", "entry", "hentry", "post", "story", "body", "text", "prose", "richtext"}
)

_CACHE_LIMIT = 20_000
_verdicts: dict[str, int] = {}


class NamePattern:
    """A case-insensitive search for words in class and id names, fast on ASCII names.

    ``words`` are literal lower-case words separated by ``|``, found anywhere in the names
    (``comment`` in ``site-Comments``); ``whole_words`` the same, found only as a whole
    space-separated name (``hid``).

    Why: a page's first encounter with each of its class strings is what a fetch pays for,
    as the verdict caches only help on names seen before, and Python's regex engine made that
    slow twice over: ``re.IGNORECASE`` alternations match four to six times slower than plain
    ones (the engine folds the case of every character it compares), and a flat alternation
    tries its words one after the other at every position. So an ASCII name is lower-cased
    once and searched with a case-sensitive trie of the words (:func:`~._alternation.alternation`),
    which finds exactly what the ``IGNORECASE`` alternation finds; any other name is searched
    with the ``IGNORECASE`` form of the same trie, so nothing changes for it either.
    """

    __slots__ = ("_folded", "_unfolded")

    def __init__(self, words: str, whole_words: str = "") -> None:
        listed = [word for word in words.split("|") if word]
        whole = [word for word in whole_words.split("|") if word]
        for word in listed + whole:
            if word != word.lower() or _METACHARACTERS.intersection(word):
                raise ValueError(f"a name pattern takes literal lower-case words: {word!r}")
        # A yes-or-no search needs no word that holds another ("cookiebot" holds "cookie").
        kept = [word for word in listed if not any(o != word and o in word for o in listed)]
        pattern = alternation(kept)
        if whole:
            pattern += "|(?:^| )(?:" + alternation(whole) + ")(?:$| )"
        self._folded = re.compile(pattern)
        self._unfolded = re.compile(pattern, re.IGNORECASE)

    def search(self, names: str) -> bool:
        """Whether one of the words occurs in ``names``, ignoring case."""
        if names.isascii():
            return self._folded.search(names.lower()) is not None
        return self._unfolded.search(names) is not None


_METACHARACTERS = frozenset("\\^$.*+?()[]{}|")


def words(names: str) -> list[str]:
    """The lower-cased words of a class or id string."""
    return [word.lower() for word in _WORD.findall(names)]


# Comment words, which name the content itself on a forum thread or a Q&A page.
_COMMENT_PREFIXES = ("comment", "reply", "replies", "respond")


def _judge_word(word: str, thread: bool) -> int:
    if word in _NOT_FURNITURE or (thread and word.startswith(_COMMENT_PREFIXES)):
        return NONE
    if word in _FURNITURE_WORDS or word.startswith(_FURNITURE_PREFIXES):
        return FURNITURE
    if word.startswith(_SHORT_PREFIXES):
        return SHORT
    if word.startswith(_WEAK_PREFIXES):
        return WEAK
    return NONE


def _judge(names: str, thread: bool) -> int:
    verdict = NONE
    for name in names.split():
        found = words(name)
        if not found:
            continue
        if found[-1] in _CONTENT_HEADS and all(word in _CONTENT_WORDS for word in found):
            return NONE  # a content class: the element is the article's own
        for word in found:
            verdict = max(verdict, _judge_word(word, thread))
        if verdict < FURNITURE and _PHRASES.search("".join(found)):
            verdict = FURNITURE
    return verdict


def furniture(names: str, thread: bool = False) -> int:
    """``FURNITURE``, ``SHORT``, ``WEAK`` or ``NONE`` for the class and id names of an
    element (space-separated). On a ``thread`` (a page that declares a forum discussion or a
    Q&A), comments and replies are the content, not furniture."""
    key = "\x00" + names if thread else names
    verdict = _verdicts.get(key)
    if verdict is None:
        verdict = _judge(names, thread)
        if len(_verdicts) > _CACHE_LIMIT:
            _verdicts.clear()
        _verdicts[key] = verdict
    return verdict
