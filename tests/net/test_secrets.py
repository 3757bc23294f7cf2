"""Secrets in quoted answers: redacted before the cut, in part at the end, in the forms an echo
takes."""

from __future__ import annotations

import pytest

from runvil._net.secrets import LONG_PARTIAL, MIN_PARTIAL, Secrets

KEY = "sk-live-0123456789abcdef"
SECRETS = Secrets([KEY])


def test_whole_copies_are_replaced_everywhere() -> None:
    assert SECRETS.redact(f"a {KEY} b {KEY}") == "a [redacted] b [redacted]"
    assert SECRETS.redact_bytes(f"a {KEY} b".encode()) == b"a [redacted] b"


def test_the_forms_an_echo_takes() -> None:
    key = 'k3y/with+odd&"chars"'
    secrets = Secrets([key])
    for echoed in (
        key,
        "k3y%2Fwith%2Bodd%26%22chars%22",  # percent-encoded, as in a URL
        'k3y/with+odd&\\"chars\\"',  # JSON-escaped
        "k3y/with+odd&amp;&quot;chars&quot;",  # HTML-escaped
    ):
        assert secrets.redact(f"<{echoed}>") == "<[redacted]>", echoed


def test_a_long_run_of_the_first_characters_is_a_copy_wherever_it_is() -> None:
    shortened = KEY[:LONG_PARTIAL]
    assert SECRETS.redact(f"token {shortened}... was refused") == "token [redacted]... was refused"
    assert SECRETS.redact(f"token {KEY[: LONG_PARTIAL - 1]}... ok") == (
        f"token {KEY[: LONG_PARTIAL - 1]}... ok"
    )


@pytest.mark.parametrize("kept", range(1, len(KEY)))
def test_no_cut_leaves_a_prefix_behind(kept: int) -> None:
    # The key sits so that the cut at 100 characters would keep its first ``kept`` characters.
    text = "x" * (100 - kept) + KEY + "y" * 50
    quote = SECRETS.cut(text, 100)
    assert KEY[:MIN_PARTIAL] not in quote and KEY[:kept] not in quote[-kept:]
    assert quote == ("x" * (100 - kept) + "[redacted]" + "y" * 50)[:100]


@pytest.mark.parametrize("length", range(MIN_PARTIAL, len(KEY)))
def test_a_trailing_partial_key_is_redacted(length: int) -> None:
    assert SECRETS.redact_tail(f"bad key {KEY[:length]}") == "bad key [redacted]"
    assert SECRETS.cut(f"bad key {KEY[:length]}", 1000) == "bad key [redacted]"


def test_a_short_tail_and_a_key_free_text_are_left_alone() -> None:
    assert SECRETS.redact_tail(f"ends in {KEY[: MIN_PARTIAL - 1]}") == f"ends in {KEY[:3]}"
    assert SECRETS.cut("nothing secret here", 7) == "nothing"


def test_empty_secrets_change_nothing() -> None:
    secrets = Secrets([None, ""])
    assert not secrets
    assert secrets.cut("text", 2) == "te"
    assert secrets.redact_bytes(b"text") == b"text"
