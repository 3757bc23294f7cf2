"""The fair pool robots.txt parsing and PDF conversions share: the order jobs are admitted in.

Every test holds jobs on events, so what is asserted is the order of admission, never a time:
a run's flood of queued jobs must not go ahead of another run's job.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from runvil._tools import RunScope
from runvil.web._fetch.fairpool import FairPool

WAIT = 30.0  # only a guard against a hang; nothing below depends on it


class Recorder:
    """Jobs that note when they start, and may be held until released."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.lock = threading.Lock()
        self.started: dict[str, threading.Event] = {}

    def job(self, name: str, gate: threading.Event | None = None) -> Callable[[], str]:
        started = self.started.setdefault(name, threading.Event())

        def run() -> str:
            with self.lock:
                self.order.append(name)
            started.set()
            if gate is not None:
                assert gate.wait(WAIT)
            return name

        return run


def test_another_runs_job_goes_before_a_hostile_runs_queued_jobs() -> None:
    pool, jobs, gate = FairPool(1, "test-fair"), Recorder(), threading.Event()
    hostile, innocent = RunScope(), RunScope()
    first = pool.submit(hostile, jobs.job("h1", gate), size=512)
    assert jobs.started["h1"].wait(WAIT)
    queued = [pool.submit(hostile, jobs.job(f"h{n}"), size=512) for n in range(2, 6)]
    mine = pool.submit(innocent, jobs.job("i"), size=20)
    gate.set()
    assert [f.result(WAIT) for f in (first, *queued, mine)] == ["h1", "h2", "h3", "h4", "h5", "i"]
    assert jobs.order == ["h1", "i", "h2", "h3", "h4", "h5"]


def test_a_run_never_holds_more_than_one_thread() -> None:
    """With two threads, a run whose job is stuck leaves the other thread to other runs."""
    pool, jobs, gate = FairPool(2, "test-fair"), Recorder(), threading.Event()
    hostile, innocent = RunScope(), RunScope()
    held = [pool.submit(hostile, jobs.job(f"h{n}", gate)) for n in range(1, 4)]
    assert jobs.started["h1"].wait(WAIT)
    assert pool.submit(innocent, jobs.job("i")).result(WAIT) == "i"
    assert jobs.order == ["h1", "i"]  # h2 and h3 wait for h1, though a thread was free
    gate.set()
    assert [f.result(WAIT) for f in held] == ["h1", "h2", "h3"]


def test_many_hostile_runs_do_not_go_ahead_of_a_smaller_job() -> None:
    """Runs served alike (fresh ones) are taken smallest job first: K hostile sessions, each
    with a 512 KiB file queued, do not make a small file wait for all K."""
    pool, jobs, gate = FairPool(1, "test-fair"), Recorder(), threading.Event()
    blocker = pool.submit(RunScope(), jobs.job("b", gate), size=1)
    assert jobs.started["b"].wait(WAIT)
    hostile = [RunScope() for _ in range(8)]
    floods = [pool.submit(run, jobs.job(f"h{n}"), size=512 * 1024)
              for n, run in enumerate(hostile)]
    mine = pool.submit(RunScope(), jobs.job("i"), size=20 * 1024)
    gate.set()
    assert (blocker.result(WAIT), mine.result(WAIT)) == ("b", "i")
    for flood in floods:
        flood.result(WAIT)
    assert jobs.order[:2] == ["b", "i"]


def test_a_run_served_earlier_goes_behind_one_that_was_not() -> None:
    pool, jobs, gate = FairPool(1, "test-fair"), Recorder(), threading.Event()
    busy, fresh = RunScope(), RunScope()
    pool.submit(busy, jobs.job("a1")).result(WAIT)  # busy has been served once
    blocker = pool.submit(RunScope(), jobs.job("b", gate))
    assert jobs.started["b"].wait(WAIT)
    later = pool.submit(busy, jobs.job("a2"), size=1)  # queued first, and smaller
    mine = pool.submit(fresh, jobs.job("f"), size=100)
    gate.set()
    for future in (blocker, later, mine):
        future.result(WAIT)
    assert jobs.order == ["a1", "b", "f", "a2"]


def test_a_job_cancelled_while_queued_never_runs() -> None:
    pool, jobs, gate = FairPool(1, "test-fair"), Recorder(), threading.Event()
    run = RunScope()
    first = pool.submit(run, jobs.job("a", gate))
    assert jobs.started["a"].wait(WAIT)
    dropped = pool.submit(run, jobs.job("dropped"))
    assert dropped.cancel()
    last = pool.submit(run, jobs.job("c"))
    gate.set()
    assert (first.result(WAIT), last.result(WAIT)) == ("a", "c")
    assert jobs.order == ["a", "c"]


def test_an_exception_reaches_the_caller_and_the_pool_goes_on() -> None:
    pool = FairPool(1, "test-fair")

    def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        pool.submit(RunScope(), fail).result(WAIT)
    assert pool.submit(RunScope(), lambda: 7).result(WAIT) == 7
