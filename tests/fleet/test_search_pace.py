"""The operator's search rate in one process: requests spaced, never past the longest wait; a
vendor's pause kept in Redis for a fleet."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from runvil._faces.fleet_state import SharedState
from runvil._faces.search_pace import PacedSearch, SharedPauses, rate_message
from runvil.web._search.egress import EgressResponse
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from tests.fixtures.redis_server import RedisServer


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


async def test_a_vendors_pause_is_kept_with_its_answer_and_never_shortened(
    redis_server: RedisServer,
) -> None:
    state = SharedState(redis_server.url)
    pauses = SharedPauses(state, "gateway")
    headers = CIMultiDictProxy(CIMultiDict([("Retry-After", "5"), ("X-A", "1"), ("X-A", "2")]))
    try:
        assert await pauses.pending() is None
        await pauses.pause(5.0, EgressResponse(429, headers, b"\xff slow down"))
        await pauses.pause(1.0, EgressResponse(429, headers, b"a shorter one"))
        held = await pauses.pending()
    finally:
        await state.aclose()
    assert held is not None
    left, answer = held
    assert 1.0 < left <= 5.0
    assert (answer.status, list(answer.headers.items()), answer.body) == (
        429, [("Retry-After", "5"), ("X-A", "1"), ("X-A", "2")], b"\xff slow down",
    )
