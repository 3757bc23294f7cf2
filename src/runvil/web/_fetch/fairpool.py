"""A few threads shared fairly between runs: robots.txt parsing and PDF conversions.

Why: both are work a site chooses the size of (a 512 KiB robots.txt, a PDF bomb), done off the
event loop on a handful of threads. Served first come first served, one run's hostile files
queue every other run's work behind them: K hostile robots.txt files made another caller's fetch
wait K times the cost of one. Here the queue is per run (:class:`~runvil._tools.RunScope`: a
Host run, an MCP session), and the threads serve runs, not arrivals:

- **one job per run at a time** (``per_run``): with more threads than that, a run's flood never
  holds every thread, so another run's job starts at once on a free one;
- **the least served run next** (start-time fair queueing): each run carries a finish tag, the
  virtual time by which its earlier jobs are paid for (each job's cost is its measured seconds,
  plus a microsecond so that no job is free); a job's start tag is its run's finish tag, or the
  pool's virtual time if that is later (a run that was idle banks no credit), and the queued job
  with the smallest start tag goes first. A run that was just served goes behind one that was
  not; on a tie the smaller job (its ``size``) goes first, then the earlier.

So a run's queued jobs wait for other runs' work only as long as those runs have been served
less, and never behind more than one job of any run already running. Threads start when work
arrives, are daemons, and end after a minute without work (or never, if the pool says so).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from runvil._tools import RunScope

__all__ = ["FairPool"]

T = TypeVar("T")

#: What every job costs on top of its measured time, so a run just served is never level with
#: one that was not.
_MIN_COST = 1e-6
#: A thread with nothing to do for this long ends (the next job starts another).
_IDLE_SECONDS = 60.0


class _Job:
    __slots__ = ("call", "future", "seq", "size")

    def __init__(
        self, call: Callable[[], Any], future: concurrent.futures.Future[Any], size: float,
        seq: int,
    ) -> None:
        self.call = call
        self.future = future
        self.size = size
        self.seq = seq


class _Run:
    """What the pool knows of one run: its queued jobs, how many run, what it has been served."""

    __slots__ = ("finish", "queue", "running")

    def __init__(self) -> None:
        self.queue: deque[_Job] = deque()
        self.running = 0
        self.finish = 0.0


class FairPool:
    """``threads`` threads running callables for runs, fairly between runs (module docstring)."""

    def __init__(
        self, threads: int, name: str, per_run: int = 1,
        idle_seconds: float | None = _IDLE_SECONDS,
    ) -> None:
        """``idle_seconds``: how long a thread waits for work before it ends (None: never, for
        threads that own something of their own, such as a worker process)."""
        self._idle_seconds = idle_seconds
        self._threads = threads
        self._name = name
        self._per_run = per_run
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        # A run's state lives as long as the run (its finish tag must outlive a quiet spell);
        # runs with queued jobs are also held strongly in _waiting until they are served.
        self._runs: weakref.WeakKeyDictionary[RunScope, _Run] = weakref.WeakKeyDictionary()
        self._waiting: dict[RunScope, _Run] = {}
        self._virtual = 0.0
        self._seq = itertools.count()
        self._live = 0

    def submit(
        self, run: RunScope, call: Callable[[], T], size: float = 0.0
    ) -> concurrent.futures.Future[T]:
        """Queue ``call`` for ``run``; ``size`` (any unit, the same for every job of the pool)
        breaks ties between runs served alike. Cancelling the future before the job starts
        drops it."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            state = self._runs.get(run)
            if state is None:
                state = self._runs[run] = _Run()
            state.queue.append(_Job(call, future, size, next(self._seq)))
            self._waiting[run] = state
            if self._live < self._threads:
                self._live += 1
                threading.Thread(
                    target=self._serve, name=f"{self._name}-{self._live}", daemon=True
                ).start()
            else:
                self._work.notify_all()
        return future

    def _next(self) -> tuple[_Run, _Job, float] | None:
        """The job to run now (lock held), or None when every waiting run is at its limit."""
        best: tuple[float, float, int] | None = None
        chosen: tuple[RunScope, _Run] | None = None
        for run, state in self._waiting.items():
            if state.running >= self._per_run:
                continue
            head = state.queue[0]
            key = (max(self._virtual, state.finish), head.size, head.seq)
            if best is None or key < best:
                best, chosen = key, (run, state)
        if chosen is None or best is None:
            return None
        run, state = chosen
        job = state.queue.popleft()
        if not state.queue:
            del self._waiting[run]
        start = best[0]
        self._virtual = max(self._virtual, start)
        state.running += 1
        return state, job, start

    def _serve(self) -> None:
        while True:
            with self._lock:
                picked = self._next()
                while picked is None:
                    woken = self._work.wait(self._idle_seconds)
                    picked = self._next()
                    if picked is None and not woken:
                        self._live -= 1
                        return
            state, job, start = picked
            began = time.monotonic()
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        result = job.call()
                    except BaseException as error:
                        job.future.set_exception(error)
                    else:
                        job.future.set_result(result)
            finally:
                cost = time.monotonic() - began + _MIN_COST
                with self._lock:
                    state.running -= 1
                    state.finish = max(state.finish, start) + cost
                    if self._waiting:
                        self._work.notify_all()
