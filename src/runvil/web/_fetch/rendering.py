"""Where and when large HTML pages render: in worker threads, under a process-wide memory budget,
each by its deadline.

Why: rendering is CPU work that no event-loop deadline can interrupt, and a page can take
seconds and hundreds of megabytes of it, so it runs off the loop, and the process bounds both:

- **Memory, by bytes.** Before a rendering starts it reserves what a page of its size may take
  at most (:func:`reservation`: :data:`MEMORY_PER_BYTE` per body byte plus a little, never more
  than :data:`PER_RENDER_MEMORY`, which the extractor's node budget guarantees). Renderings run
  only while their reservations fit in :data:`RENDER_MEMORY` together, and at most
  :data:`RENDER_THREADS` at once. A small page fits beside two of the biggest, so a 100 KB
  article never waits for someone's 8 MiB pages; any waiting rendering that fits starts, in
  arrival order.
- **Time, by deadline.** Each rendering gets a deadline, ``FetchPolicy.render_timeout`` after its
  body arrived, waiting included. A rendering still waiting for room at its deadline, or still
  running past it (the extractor checks as it goes), returns the page's linear text rendering
  instead, labelled ``raw-html`` (rendering never fails a fetch). The text rendering runs on
  threads of its own (:data:`FALLBACK_THREADS`), so it never queues behind full renderings, nor
  a full rendering behind text renderings; and those threads take the callers' text
  renderings in turn (:class:`FairQueue`), so a caller whose flood of renderings all missed
  their deadline waits for its own text renderings, not another caller's one.

So every fetch's result arrives within ``timeout + render_timeout``, plus the time of a text
rendering (a few hundred milliseconds for the worst 8 MiB page), whatever other callers fetch;
their pages cost them their own renderings, not anyone else's deadlines.

A call cancelled while its rendering waits for room never starts it; one cancelled while it
runs returns at once, and the thread finishes that rendering (bounded by its deadline) and gives
its room back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "FALLBACK_THREADS",
    "MEMORY_PER_BYTE",
    "MEMORY_PER_CHAR",
    "PER_RENDER_MEMORY",
    "RENDER_MEMORY",
    "RENDER_THREADS",
    "FairQueue",
    "RenderGate",
    "gate",
    "reservation",
    "run_fallback",
    "run_in_thread",
]

T = TypeVar("T")

#: Renderings running at once, for the whole process. Rendering is Python work under the GIL
#: (only lexbor's parse runs beside it), so threads add no throughput; they let a small page
#: render beside big ones instead of after them.
RENDER_THREADS = 8
#: Threads kept for text renderings (past a deadline), so they never wait for full ones.
FALLBACK_THREADS = 2
#: The memory all running renderings may hold together: two of the biggest pages and room for
#: small ones beside them.
RENDER_MEMORY = 640 * 1024 * 1024
#: The most one rendering may hold: the extractor's node budget keeps the worst page within it
#: (docs/benchmarks.md, "Worst-case shapes").
PER_RENDER_MEMORY = 256 * 1024 * 1024
#: Reserved per byte of body: the worst shapes measured peak at 100-150 bytes per byte below
#: the node budget, and a rendering's other copies of the page add a few more.
MEMORY_PER_BYTE = 200
#: Reserved per character the rendering may return: its markdown is bounded by a multiple of
#: that (docs/reliability.md, "Output bounded by what the result can show"), at up to four bytes
#: a character; measured, the worst shape held 15.4 bytes per character (129 MB for 8 MiB of
#: emoji from a 40 KB page).
MEMORY_PER_CHAR = 16
_BASE_MEMORY = 4 * 1024 * 1024
# Characters the base covers: every fetch without continuation (at most max_chars, 40,000 by
# default) reserves for its page alone, as it always has.
_BASE_CHARS = 256 * 1024

# Full renderings: never more running than the gate admits, so one never waits for a thread.
_pool = concurrent.futures.ThreadPoolExecutor(
    max_workers=RENDER_THREADS, thread_name_prefix="runvil-render"
)


def reservation(body_bytes: int, chars: int = 0) -> int:
    """The memory a rendering of a ``body_bytes`` page that returns up to ``chars`` characters
    reserves before it starts: the page's tree, and the markdown, which a small page can make
    far more of than it has bytes, up to the multiple of ``chars`` the renderer is bounded by.
    """
    output = MEMORY_PER_CHAR * max(0, chars - _BASE_CHARS)
    return min(PER_RENDER_MEMORY, _BASE_MEMORY + MEMORY_PER_BYTE * body_bytes + output)


class _Waiter:
    __slots__ = ("amount", "future", "granted", "loop")

    def __init__(self, amount: int, loop: asyncio.AbstractEventLoop) -> None:
        self.amount = amount
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self.granted = False


class RenderGate:
    """Room for running renderings: ``memory`` bytes and ``slots`` renderings, process-wide.

    Thread-safe and loop-agnostic: calls from any event loop wait on it, and room given back
    from a worker thread wakes them through their own loop.
    """

    def __init__(self, memory: int = RENDER_MEMORY, slots: int = RENDER_THREADS) -> None:
        self.memory = memory
        self._lock = threading.Lock()
        self._free = memory
        self._slots = slots
        self._waiters: deque[_Waiter] = deque()

    async def acquire(self, amount: int, deadline: float) -> bool:
        """Take room for ``amount`` bytes, waiting until it fits or until ``deadline``
        (``time.monotonic()``); return whether it was taken."""
        amount = min(amount, self.memory)
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._fits(amount):
                self._take(amount)
                return True
            waiter = _Waiter(amount, loop)
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter.future, max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            with self._lock:
                if waiter.granted:  # room came just as time ran out: it is ours
                    return True
                self._waiters.remove(waiter)
            return False
        except asyncio.CancelledError:
            with self._lock:
                if waiter.granted:
                    self._give(amount)
                else:
                    self._waiters.remove(waiter)
            raise
        return True

    def release(self, amount: int) -> None:
        """Give back room taken by :meth:`acquire` (from any thread)."""
        with self._lock:
            self._give(min(amount, self.memory))

    def _fits(self, amount: int) -> bool:
        return self._slots > 0 and amount <= self._free

    def _take(self, amount: int) -> None:
        self._free -= amount
        self._slots -= 1

    def _give(self, amount: int) -> None:
        self._free += amount
        self._slots += 1
        for waiter in list(self._waiters):  # any waiter that fits, in arrival order
            if not self._fits(waiter.amount):
                continue
            self._waiters.remove(waiter)
            self._take(waiter.amount)
            waiter.granted = True
            try:
                waiter.loop.call_soon_threadsafe(_wake, waiter.future)
            except RuntimeError:  # its loop is closed: nobody is waiting any more
                waiter.granted = False
                self._free += waiter.amount
                self._slots += 1


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


#: The gate every ``WebFetch`` in the process renders through.
gate = RenderGate()


async def run_in_thread(
    function: Callable[[], T], on_done: Callable[[], None] | None = None
) -> T:
    """Run ``function`` (a full rendering the gate admitted) on a render thread with the
    caller's context; ``on_done`` runs in that thread when it finishes, even if the awaiting
    call was cancelled meanwhile."""
    future = _pool.submit(contextvars.copy_context().run, function)
    if on_done is not None:
        future.add_done_callback(lambda _: on_done())
    return await asyncio.wrap_future(future)


class FairQueue:
    """Jobs of many callers on one executor, taken from the callers in turn.

    Each caller has at most one job in the executor's queue (or running); its other jobs wait
    in a queue of its own, and the next one goes to the back of the executor's queue when the
    one before it ends. A caller with a thousand jobs queued therefore delays another caller's
    job by at most one of its own per thread, never by the thousand. A job whose awaiting call
    was cancelled before it started is dropped unrun.
    """

    def __init__(self, executor: concurrent.futures.Executor) -> None:
        self._executor = executor
        self._lock = threading.Lock()
        # Callers with a job in the executor, and their jobs waiting behind it.
        self._waiting: dict[object, deque[_Job]] = {}

    def submit(self, caller: object, function: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue ``function`` for ``caller`` (any hashable: a run, a tool)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        job = _Job(future, function)
        with self._lock:
            queued = self._waiting.get(caller)
            if queued is not None:
                queued.append(job)
                return future
            self._waiting[caller] = deque()
        self._start(caller, job)
        return future

    def _start(self, caller: object, job: _Job) -> None:
        try:
            self._executor.submit(self._run, caller, job)
        except RuntimeError:  # the executor is shut down (the interpreter is exiting)
            self._run(caller, job)

    def _run(self, caller: object, job: _Job) -> None:
        try:
            job.run()
        finally:
            with self._lock:
                queued = self._waiting[caller]
                following = None
                while queued:
                    candidate = queued.popleft()
                    if not candidate.future.cancelled():
                        following = candidate
                        break
                if following is None:
                    del self._waiting[caller]
            if following is not None:
                self._start(caller, following)


class _Job:
    __slots__ = ("function", "future")

    def __init__(self, future: concurrent.futures.Future[T], function: Callable[[], T]) -> None:
        self.future: concurrent.futures.Future[object] = future  # type: ignore[assignment]
        self.function: Callable[[], object] = function

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return  # its call was cancelled before it started
        try:
            result = self.function()
        except BaseException as failure:
            self.future.set_exception(failure)
        else:
            self.future.set_result(result)


# Text renderings (past a deadline): threads of their own, taken from the callers in turn.
_fallbacks = FairQueue(
    concurrent.futures.ThreadPoolExecutor(
        max_workers=FALLBACK_THREADS, thread_name_prefix="runvil-render-text"
    )
)


async def run_fallback(function: Callable[[], T], caller: object) -> T:
    """Run ``function`` (a text rendering, past a deadline) on a text-rendering thread with the
    caller's context, in turn with other callers' (:class:`FairQueue`)."""
    future = _fallbacks.submit(caller, functools.partial(contextvars.copy_context().run, function))
    return await asyncio.wrap_future(future)

