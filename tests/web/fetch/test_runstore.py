"""The per-run store's policy: ages exact on any clock, a fair share per run, fingerprints
outside the evictable budget, and a run's entries gone the moment it ends."""

from __future__ import annotations

import gc
import hashlib
import math

from runvil._tools import RunScope
from runvil.web._fetch.runstore import Fingerprint, RunStore, RunStoreBackend, fingerprint_text

#: A start time whose age limit does not come back by subtraction: ``(T + 600) - 600 < T``. The
#: store used to compare ``born <= now - max_age``, so an entry born at such a time outlived its
#: age by one clock tick (the cause of a test that failed once in CI).
T = 130667.001572


def clocked(
    budget: int = 100, max_entries: int = 10, **kw: int
) -> tuple[RunStore[str], list[float]]:
    now = [0.0]
    store: RunStore[str] = RunStore(
        budget=budget, max_entries=max_entries, max_age=600, clock=lambda: now[0], **kw
    )
    return store, now


def test_an_entry_expires_exactly_at_its_age_whatever_the_float() -> None:
    assert (T + 600.0) - 600.0 < T
    store, now = clocked()
    run = RunScope()
    now[0] = T
    store.put(run, "a", "A", 1)
    now[0] = math.nextafter(T + 600.0, 0.0)
    assert store.get(run, "a") == "A"
    now[0] = T + 600.0
    assert store.get(run, "a") is None
    assert (store.size, len(store)) == (0, 0)


def test_entries_put_out_of_clock_order_each_expire_at_their_own_age() -> None:
    """An entry stamped later but recorded first (another thread, another clock) does not hold
    back the expiry of the ones behind it."""
    store, now = clocked()
    run = RunScope()
    now[0] = 2000.0
    store.put(run, "late", "L", 1)
    now[0] = 1000.0
    store.put(run, "early", "E", 1)
    now[0] = 1600.0
    assert store.get(run, "early") is None
    assert store.get(run, "late") == "L"
    assert (store.size, len(store)) == (1, 1)


def test_a_run_alone_may_use_the_whole_budget() -> None:
    store, _ = clocked()
    run = RunScope()
    for i in range(5):
        assert store.put(run, i, str(i), 20)
    assert (store.size, len(store)) == (100, 5)


def test_a_run_filling_the_store_cannot_evict_another_runs_page() -> None:
    store, _ = clocked()
    a, b = RunScope(), RunScope()
    assert store.put(b, "page", "B's", 30)
    for i in range(20):
        assert store.put(a, i, str(i), 20)
    assert store.get(b, "page") == "B's"
    # two runs hold entries: a share is 50 bytes; A keeps its two most recent pages
    assert [store.get(a, i) for i in range(20)] == [None] * 18 + ["18", "19"]
    assert (store.run_size(a), store.run_size(b), store.size) == (40, 30, 70)


def test_a_newcomer_takes_room_only_from_runs_over_their_share() -> None:
    store, _ = clocked()
    a, b = RunScope(), RunScope()
    for i in range(5):
        store.put(a, i, str(i), 20)  # alone: the whole budget
    assert store.put(b, "page", "B's", 30)  # now A's share is 50: it gives up its oldest two
    assert [store.get(a, i) for i in range(5)] == [None, None, "2", "3", "4"]
    assert (store.run_size(a), store.run_size(b)) == (60, 30)


def test_no_room_without_taking_from_a_run_within_its_share_means_not_kept() -> None:
    store, _ = clocked()
    a, b = RunScope(), RunScope()
    assert store.put(a, "a", "A", 50)
    assert not store.put(b, "big", "B", 60)  # A holds exactly its share of 50
    assert store.get(a, "a") == "A" and store.get(b, "big") is None
    assert store.put(b, "fits", "b", 50)
    assert store.size == 100


def test_entry_counts_are_shared_fairly_too() -> None:
    store, _ = clocked(budget=10**6, max_entries=4)
    a, b = RunScope(), RunScope()
    for i in range(4):
        store.put(a, i, str(i), 1)
    for key in ("x", "y", "z"):
        store.put(b, key, key, 1)
    assert [store.get(a, i) for i in range(4)] == [None, None, "2", "3"]
    assert [store.get(b, k) for k in ("x", "y", "z")] == [None, "y", "z"]


def test_a_fingerprint_outlives_its_entry_and_goes_with_the_run() -> None:
    store, now = clocked(budget=100)
    run = RunScope()
    seen = fingerprint_text("page text")
    assert store.put(run, "k", "page text", 10, seen)
    assert store.fingerprint(run, "k") == seen
    now[0] = 600.0  # expired
    assert store.get(run, "k") is None
    assert store.fingerprint(run, "k") == seen
    assert not store.put(run, "huge", "H", 101, fingerprint_text("H"))  # not kept; still seen
    assert store.fingerprint(run, "huge") == fingerprint_text("H")
    assert store.fingerprint(RunScope(), "k") is None  # another run saw nothing
    run.end()
    assert store.fingerprint(run, "k") is None and store.prints == 0


def test_fingerprints_are_bounded_per_run_and_per_process() -> None:
    store, _ = clocked(max_prints_per_run=3, max_prints=5)
    a, b = RunScope(), RunScope()
    for i in range(10):
        store.put(a, i, "v", 1, Fingerprint(i, b"d"))
    assert [store.fingerprint(a, i) is not None for i in range(10)] == [False] * 7 + [True] * 3
    for i in range(3):
        store.put(b, i, "v", 1, Fingerprint(i, b"d"))
    assert store.prints == 5
    # the process bound took from the run holding the most: A's oldest
    assert [store.fingerprint(a, i) is not None for i in (7, 8, 9)] == [False, True, True]
    assert all(store.fingerprint(b, i) is not None for i in range(3))


def test_fingerprints_tell_texts_apart_and_match_across_stores() -> None:
    assert fingerprint_text("abc") == fingerprint_text("abc")
    assert fingerprint_text("abc") != fingerprint_text("abd")
    assert fingerprint_text("\ud800x").length == 2  # a lone surrogate has one too
    assert fingerprint_text("") == Fingerprint(0, bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb924"))
    long = "\U0001f600x" * 1_000_000  # past one chunk: the same digest as in one piece
    whole = hashlib.sha256(long.encode("utf-8")).digest()[:16]
    assert fingerprint_text(long) == Fingerprint(2_000_000, whole)


def test_a_run_that_ends_releases_everything_at_once() -> None:
    store, _ = clocked(budget=1000)
    a, b = RunScope(), RunScope()
    store.put(a, "a", "A", 300, fingerprint_text("A"))
    store.put(b, "b", "B", 400, fingerprint_text("B"))
    a.end()
    assert (store.size, len(store), store.prints) == (400, 1, 1)  # no other operation needed
    b.end()
    assert (store.size, len(store), store.prints) == (0, 0, 0)


def test_a_put_after_the_run_ended_is_not_kept() -> None:
    """A render thread that finishes after its run ended must not leave its page behind."""
    store, _ = clocked()
    run = RunScope()
    store.put(run, "a", "A", 10)
    run.end()
    assert not store.put(run, "late", "L", 10, fingerprint_text("L"))
    assert (store.size, len(store), store.prints) == (0, 0, 0)


def test_a_scope_collected_inside_an_operation_is_dropped_when_it_ends() -> None:
    store, _ = clocked()
    gone, other = RunScope(), RunScope()
    store.put(gone, "a", "A", 10)
    del gone
    gc.collect()  # the finalizer ran outside any operation: dropped at once
    assert (store.size, len(store)) == (0, 0)
    store.put(other, "b", "B", 10)
    assert store.get(other, "b") == "B"


def test_end_run_forgets_a_run_that_goes_on() -> None:
    store, _ = clocked()
    run = RunScope()
    store.put(run, "a", "A", 10, fingerprint_text("A"))
    store.end_run(run)
    assert (store.size, store.prints, store.get(run, "a")) == (0, 0, None)
    assert store.put(run, "b", "B", 10)  # the run itself has not ended


def test_the_memory_store_is_a_backend() -> None:
    backend: RunStoreBackend[str] = clocked()[0]
    assert backend.get(RunScope(), "k") is None
