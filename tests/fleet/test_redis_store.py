"""The continuation store in Redis answers as the in-process one: per run, the same fair
shares, the same age, fingerprints that outlive an evicted page, and a run's end forgets it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runvil._faces.fleet_state import (
    STATE_DOWN,
    RedisRunStore,
    SharedState,
    StateUnavailable,
    page_store,
    robots_store,
    run_key,
)
from runvil._tools import RunScope
from runvil.web._fetch.continuation import Held
from runvil.web._fetch.robots import KeptRobots
from runvil.web._fetch.runstore import fingerprint_text
from tests.fixtures.redis_server import RedisServer


@pytest.fixture
def state(redis_server: RedisServer) -> Iterator[SharedState]:
    shared = SharedState(redis_server.url)
    yield shared
    shared.sync.close()


def text_store(state: SharedState, **limits: int) -> RedisRunStore[str]:
    return RedisRunStore(
        state, encode=lambda v: v.encode(), decode=lambda b: b.decode(), **limits
    )


def test_a_page_is_served_to_its_run_only_and_on_every_replica(state: SharedState) -> None:
    one, other = page_store(state), page_store(state)  # two replicas
    mine, theirs = RunScope(), RunScope()
    one.bind(mine, run_key("session-a"))
    other.bind(theirs, run_key("session-b"))
    held = Held("https://example.com/", "é" * 10 + "\ud800", "plain", True)
    assert one.put(mine, ("https://example.com/", False), held, 0, fingerprint_text(held.text))
    again = RunScope()  # the same session on another replica
    other.bind(again, run_key("session-a"))
    assert other.get(again, ("https://example.com/", False)) == held
    assert other.fingerprint(again, ("https://example.com/", False)) == fingerprint_text(held.text)
    assert other.get(theirs, ("https://example.com/", False)) is None
    assert other.fingerprint(theirs, ("https://example.com/", False)) is None


def test_shares_are_fair_and_a_run_within_its_share_keeps_its_pages(state: SharedState) -> None:
    store = text_store(state, budget=1000, max_entries=100)
    a, b = RunScope(), RunScope()
    assert store.put(a, "a1", "x" * 400, 0)
    assert store.put(b, "b1", "y" * 400, 0)
    # b wants more: its share is 500, so it gives up its own page first.
    assert store.put(b, "b2", "y" * 300, 0)
    assert store.get(b, "b1") is None
    assert store.get(a, "a1") == "x" * 400
    assert store.put(b, "b3", "y" * 200, 0) is False or store.get(a, "a1") == "x" * 400
    assert store.get(a, "a1") == "x" * 400
    assert store.put(a, "big", "z" * 1001, 0, fingerprint_text("z" * 1001)) is False
    assert store.fingerprint(a, "big") == fingerprint_text("z" * 1001)


def test_a_run_alone_uses_the_whole_budget_and_the_entry_count(state: SharedState) -> None:
    store = text_store(state, budget=10_000, max_entries=3)
    a = RunScope()
    for i in range(4):
        assert store.put(a, i, "p", 0)
    assert [store.get(a, i) for i in range(4)] == [None, "p", "p", "p"]
    assert store.totals() == (3, 3)


def test_a_run_ending_forgets_its_pages_and_prints(state: SharedState) -> None:
    store = page_store(state)
    scope = RunScope()
    store.bind(scope, run_key("s"))
    held = Held("https://e.com/", "t", "plain", False)
    store.put(scope, "k", held, 0, fingerprint_text("t"))
    scope.end()  # a replica's run ending leaves the session's pages to the others
    assert store.get(scope, "k") == held
    store.end_key(run_key("s"))
    assert store.get(scope, "k") is None
    assert store.fingerprint(scope, "k") is None
    assert store.totals() == (0, 0)
    loose = RunScope()  # a run of its own: its pages go with it
    store.put(loose, "k", held, 0)
    loose.end()
    assert store.totals() == (0, 0)


def test_pages_expire_at_their_age(state: SharedState) -> None:
    store = text_store(state, budget=1000, max_entries=10)
    store.max_age = 0.05
    a = RunScope()
    store.put(a, "k", "v", 0)
    import time

    time.sleep(0.08)
    assert store.get(a, "k") is None
    assert store.totals() == (0, 0)


def test_redis_down_fails_fast_with_the_message(
    state: SharedState, redis_server: RedisServer
) -> None:
    store = page_store(state)
    scope = RunScope()
    redis_server.stop()
    with pytest.raises(StateUnavailable) as info:
        store.get(scope, "k")
    assert info.value.message == STATE_DOWN
    assert store.put(scope, "k", Held("u", "t", "plain", False), 0) is False
    assert not state.up


def test_robots_rules_count_by_their_parsed_size_and_each_run_keeps_its_share(
    state: SharedState,
) -> None:
    store = RedisRunStore(
        state, encode=lambda v: v.encode(), decode=lambda b: b.decode(), budget=10_000,
        max_entries=100, count_reported=True,
    )
    greedy, modest = RunScope(), RunScope()
    for i in range(30):  # a model asking for thirty sites: kept within the budget
        store.put(greedy, i, "r", 1_000)
    assert store.totals() == (10_000, 10)
    assert store.put(modest, "site", "r", 1_000)
    assert store.get(modest, "site") == "r"
    assert store.totals() == (10_000, 10), "room came from the run over its share"
    assert store.put(greedy, "huge", "r", 10_001) is False


def test_robots_rules_travel_as_their_text_and_their_age(state: SharedState) -> None:
    one, other = robots_store(state), robots_store(state)  # two replicas
    mine, again = RunScope(), RunScope()
    one.bind(mine, run_key("session-a"))
    other.bind(again, run_key("session-a"))
    key = ("https", "example.com", 443)
    kept = KeptRobots(None, "user-agent: *\ndisallow: /private\n", 1_700_000_000.5)
    assert one.put(mine, key, kept, 4096)
    assert other.get(again, key) == kept
    assert one.put(mine, ("https", "b.example", 443), KeptRobots(False, "", 1.0), 256)
    assert other.get(again, ("https", "b.example", 443)) == KeptRobots(False, "", 1.0)
    assert (one.budget, one.max_entries, one.max_age) == (32 * 1024 * 1024, 4096, 600.0)
