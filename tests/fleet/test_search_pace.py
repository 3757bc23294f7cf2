"""The operator's search rate in one process: requests spaced, never past the longest wait."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from runvil._faces.search_pace import PacedSearch, rate_message
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult


class Counting:
    name = "counting"
    endpoints: Sequence[str] = ()

    def __init__(self) -> None:
        self.calls = 0

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        self.calls += 1
        return [SearchResult(title=request.query, url="https://e.com/", description="d")]


async def test_a_slot_past_the_longest_wait_fails_at_once() -> None:
    inner = Counting()
    paced = PacedSearch(inner, rate=0.05)  # one search every 20 seconds
    first = await paced.search(SearchRequest(query="a"))
    with pytest.raises(ProviderError) as info:
        await paced.search(SearchRequest(query="b"))
    assert [r.title for r in first] == ["a"]
    assert inner.calls == 1
    assert info.value.message == rate_message("counting", 0.05) == (
        "counting: the operator's search rate (0.05 per second) is used up for the next 10 "
        "seconds; try again shortly"
    )
    assert (paced.name, paced.endpoints) == ("counting", ())
