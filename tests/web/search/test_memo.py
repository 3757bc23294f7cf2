"""Identical requests answered from memory, concurrent calls, cancellation."""

from __future__ import annotations

import asyncio
import json

import pytest

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import ProviderError, SearchResult, WebSearch
from tests.web.search.fakes import FakeProvider, one_result


async def test_identical_requests_are_answered_from_memory() -> None:
    provider = one_result()
    search = WebSearch(provider)
    first = await search.call({"query": "rust", "count": 5})
    second = await search.call('{"count": 5, "query": "rust"}')
    assert first == second
    assert len(provider.requests) == 1


async def test_null_and_absent_are_the_same_request() -> None:
    provider = one_result()
    search = WebSearch(provider)
    await search.call({"query": "rust"})
    await search.call({"query": "rust", "count": None, "include_domains": []})
    assert len(provider.requests) == 1


async def test_different_requests_are_searched() -> None:
    provider = one_result()
    search = WebSearch(provider)
    await search.call({"query": "rust"})
    await search.call({"query": "rust "})
    await search.call({"query": "rust", "count": 3})
    assert len(provider.requests) == 3


async def test_memory_belongs_to_one_tool_instance() -> None:
    provider = one_result()
    await WebSearch(provider).call({"query": "rust"})
    await WebSearch(provider).call({"query": "rust"})
    assert len(provider.requests) == 2


async def test_failures_are_not_remembered() -> None:
    provider = FakeProvider(error=ProviderError(ToolErrorKind.Transport, "request failed"))
    search = WebSearch(provider)
    with pytest.raises(ToolError):
        await search.call({"query": "rust"})
    provider.error = None
    provider.results = [SearchResult(title="T", url="https://e.com", description="D")]
    assert "https://e.com" in await search.call({"query": "rust"})
    assert len(provider.requests) == 2


async def test_memory_is_bounded() -> None:
    provider = one_result()
    search = WebSearch(provider, memo_size=2)
    for query in ("a", "b", "c", "a"):
        await search.call({"query": query})
    assert [r.query for r in provider.requests] == ["a", "b", "c", "a"]


async def test_memory_is_bounded_by_characters_too() -> None:
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="d" * 1000)]
    )
    one = len(await WebSearch(provider).call({"query": "a"}))
    search = WebSearch(provider, memo_chars=2 * one + 10)
    provider.requests.clear()
    for query in ("a", "b", "c", "b", "a"):
        await search.call({"query": query})
    # a and b fill the budget; c pushes a out; b is remembered; a is searched again.
    assert [r.query for r in provider.requests] == ["a", "b", "c", "a"]
    tiny = WebSearch(provider, memo_chars=one - 1)  # a result larger than the budget
    provider.requests.clear()
    await tiny.call({"query": "a"})
    await tiny.call({"query": "a"})
    assert [r.query for r in provider.requests] == ["a", "a"]


async def test_the_default_memo_holds_at_most_4_mi_characters() -> None:
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="d" * 100_000)] * 5
    )
    search = WebSearch(provider)
    for i in range(100):
        await search.call({"query": f"q{i}"})
    held = sum(len(text) for text in search._memo.values())
    assert 4 * 1024 * 1024 - 500_100 < held <= 4 * 1024 * 1024
    assert len(search._memo) == 8


async def test_fifty_concurrent_calls() -> None:
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="D")], delay=0.01
    )
    search = WebSearch(provider)
    texts = await asyncio.gather(*(search.call({"query": f"q{i}"}) for i in range(50)))
    assert [json.loads(t)["query"] for t in texts] == [f"q{i}" for i in range(50)]
    assert len(provider.requests) == 50


async def test_concurrent_identical_calls_share_one_search() -> None:
    gate = asyncio.Event()
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="D")], gate=gate
    )
    search = WebSearch(provider)
    calls = [asyncio.create_task(search.call({"query": "same"})) for _ in range(50)]
    await asyncio.sleep(0)
    gate.set()
    texts = await asyncio.gather(*calls)
    assert len(set(texts)) == 1
    assert len(provider.requests) == 1


async def test_a_shared_failure_reaches_every_waiter() -> None:
    gate = asyncio.Event()
    provider = FakeProvider(error=ProviderError(ToolErrorKind.Backend, "boom"), gate=gate)
    search = WebSearch(provider)
    calls = [asyncio.create_task(search.call({"query": "same"})) for _ in range(5)]
    await asyncio.sleep(0)
    gate.set()
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(o, ToolError) and str(o) == "web_search: boom" for o in outcomes)
    assert len(provider.requests) == 1


async def test_cancelling_the_leading_call_lets_a_waiter_search() -> None:
    gate = asyncio.Event()
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="D")], gate=gate
    )
    search = WebSearch(provider)
    leader = asyncio.create_task(search.call({"query": "same"}))
    await asyncio.sleep(0)
    follower = asyncio.create_task(search.call({"query": "same"}))
    await asyncio.sleep(0)
    leader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leader
    gate.set()
    assert "https://e.com" in await follower
    assert len(provider.requests) == 2


async def test_cancelling_a_waiter_does_not_cancel_the_shared_search() -> None:
    gate = asyncio.Event()
    provider = FakeProvider(
        results=[SearchResult(title="T", url="https://e.com", description="D")], gate=gate
    )
    search = WebSearch(provider)
    leader = asyncio.create_task(search.call({"query": "same"}))
    await asyncio.sleep(0)
    follower = asyncio.create_task(search.call({"query": "same"}))
    await asyncio.sleep(0)
    follower.cancel()
    with pytest.raises(asyncio.CancelledError):
        await follower
    gate.set()
    assert "https://e.com" in await leader
    assert len(provider.requests) == 1
