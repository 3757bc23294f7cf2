"""Class and id names are matched case-insensitively, on a fast path for ASCII names that must
find exactly what the case-insensitive pattern finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runvil.web._fetch.extract._content import _MAYBE, _NEGATIVE, _POSITIVE, _UNLIKELY
from runvil.web._fetch.extract._dom import _CONSENT_NAMES
from runvil.web._fetch.extract._names import NamePattern

PATTERNS = [_POSITIVE, _NEGATIVE, _UNLIKELY, _MAYBE, _CONSENT_NAMES]
# Letters of the patterns in both cases, separators, and characters whose case folding is not
# ASCII's: the Kelvin sign folds to "k", the long s to "s", the dotless i to "i".
ALPHABET = "abcdehikmnoprstuwCOMENTSHIDKP -_ \u212a\u017f\u0131\u0130"


def test_the_ascii_path_matches_any_case() -> None:
    pattern = NamePattern(r"comment|cmp-")
    assert pattern.search("site-Comments") is True
    assert pattern.search("CMP-banner") is True
    assert pattern.search("com-ment") is False


def test_names_outside_ascii_keep_the_full_case_folding() -> None:
    pattern = NamePattern(r"ask")
    assert pattern.search("tas\u212a") is True  # KELVIN SIGN matches "k" ignoring case
    assert pattern.search("\u017fidebar-ask") is True
    assert NamePattern(r"share").search("\u017fhare") is True  # LONG S matches "s"


def test_a_pattern_must_be_written_in_lower_case() -> None:
    with pytest.raises(ValueError, match=r"^a name pattern is matched against lower-cased names$"):
        NamePattern(r"Comment")


@given(st.text(alphabet=ALPHABET, max_size=40))
def test_every_pattern_finds_what_ignorecase_finds(names: str) -> None:
    for pattern in PATTERNS:
        expected = re.search(pattern._unfolded.pattern, names, re.IGNORECASE) is not None
        assert pattern.search(names) is expected
