"""Keyed providers refuse an empty key up front and never show the key in their repr."""

from __future__ import annotations

import pytest

from runvil.web._search.providers import BraveProvider, TavilyProvider
from runvil.web._search.providers._keyed import KeyedProvider


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        (BraveProvider, "the Brave API key must not be empty"),
        (TavilyProvider, "the Tavily API key must not be empty"),
    ],
)
@pytest.mark.parametrize("key", ["", "   "])
def test_an_empty_key_is_refused(provider: type[KeyedProvider], message: str, key: str) -> None:
    with pytest.raises(ValueError) as caught:
        provider(key)
    assert str(caught.value) == message


def test_repr_names_the_provider_and_never_the_key() -> None:
    assert repr(BraveProvider("brave-secret-key")) == "BraveProvider()"
    assert repr(TavilyProvider("tvly-secret-key")) == "TavilyProvider()"
    assert BraveProvider("k").name == "brave"
    assert TavilyProvider("k").name == "tavily"
