"""Class and id names are matched case-insensitively, on a fast path for ASCII names that must
find exactly what a flat case-insensitive alternation of the same words finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runvil.web._fetch.extract._dom import _CONSENT_NAMES
from runvil.web._fetch.extract._names import NamePattern
from runvil.web._fetch.extract._page_signals import _MAYBE, _UNLIKELY
from runvil.web._fetch.extract._pick_readability import _NEGATIVE, _POSITIVE

# Each pattern with the flat IGNORECASE alternation it stands for.
FLAT = [
    (
        _POSITIVE,
        r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|"
        r"prose",
    ),
    (
        _NEGATIVE,
        r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|"
        r"masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|"
        r"sponsor|shopping|tags|widget|social|newsletter|subscribe|breadcrumb|byline|author|"
        r"disqus|popup|modal|signup|login|cookie|advert|recommend|teaser|toolbar|menu|navbar",
    ),
    (
        _UNLIKELY,
        r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|"
        r"footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|"
        r"skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|"
        r"yom-remote",
    ),
    (_MAYBE, r"and|article|body|column|content|main|mathjax|shadow"),
    (
        _CONSENT_NAMES,
        r"cookie|consent|gdpr|onetrust|cookiebot|didomi|qc-cmp|cmpbox|cmpwrapper|cmp-banner|"
        r"cmp-popup|cmp-modal|cmp-dialog|cmp-overlay|cmp-notice|cmp-layer|cmp-message|cmp-root|"
        r"^cmp$| cmp$| cmp |^cmp ",
    ),
]
WORDS = sorted({word.strip(" ^$") for _, flat in FLAT for word in flat.split("|")})
# Pieces between the words: separators, case changes, and characters whose case folding is not
# ASCII's (the Kelvin sign folds to "k", the long s to "s", the dotless i to "i").
PIECES = st.text(alphabet="aeiknsCOMHIDP -_ \u212a\u017f\u0131\u0130", max_size=3)
NAMES = st.lists(
    st.one_of(
        PIECES,
        st.sampled_from(WORDS),
        st.sampled_from(WORDS).map(str.upper),
        st.sampled_from(WORDS).map(lambda word: word[:-1]),
    ),
    max_size=6,
).map("".join)


def test_the_ascii_path_matches_any_case() -> None:
    pattern = NamePattern(r"comment|cmp-")
    assert pattern.search("site-Comments") is True
    assert pattern.search("CMP-banner") is True
    assert pattern.search("com-ment") is False


def test_whole_words_match_only_as_whole_names() -> None:
    pattern = NamePattern("banner", whole_words="hid")
    assert [pattern.search(names) for names in ("hid", "x HID", "hid y", "hidden", "ahid")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_names_outside_ascii_keep_the_full_case_folding() -> None:
    assert NamePattern(r"ask").search("tas\u212a") is True  # KELVIN SIGN matches "k"
    assert NamePattern(r"share").search("\u017fhare") is True  # LONG S matches "s"


@pytest.mark.parametrize("words", ["Comment", "a.b", "(x)", "x|Y"])
def test_a_pattern_takes_literal_lower_case_words(words: str) -> None:
    with pytest.raises(ValueError, match=r"^a name pattern takes literal lower-case words: "):
        NamePattern(words)


@given(NAMES)
def test_every_pattern_finds_what_its_flat_alternation_finds(names: str) -> None:
    for pattern, flat in FLAT:
        expected = re.search(flat, names, re.IGNORECASE) is not None
        assert pattern.search(names) is expected, (flat, names)


@pytest.mark.parametrize(
    ("names", "consent"),
    [
        ("cmp-container", False),  # a component library's names for ordinary blocks
        ("cmp-text", False),
        ("aem-GridColumn cmp-teaser", False),
        ("qc-cmp2-container", True),  # consent-management platforms' own names
        ("cmpbox", True),
        ("cmp-banner", True),
        ("cmp", True),
    ],
)
def test_consent_names_are_the_platforms_not_a_component_prefix(names: str, consent: bool) -> None:
    assert _CONSENT_NAMES.search(names) is consent
