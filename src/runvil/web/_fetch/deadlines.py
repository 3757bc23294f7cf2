"""The whole-request deadlines of one ``WebFetch``'s calls, served by one loop timer.

Every call has a deadline ``policy.timeout`` seconds after it starts; if it passes while the
fetch is still on the network, the fetch task is cancelled (:mod:`runvil.web._fetch.tool`).
``loop.call_later`` per call would do, but it is not free: each call pushes a ``TimerHandle``
onto the loop's heap, ordered by Python-level comparisons, and leaves it there cancelled until
the loop clears it out. Counted with callgrind on ``bench/fetch.py`` against nginx, this queue
took a 20 KB fetch from about 736,000 instructions to 723,000.

The calls of one ``WebFetch`` share one timeout, so their deadlines come due in the order the
calls started. A FIFO queue therefore holds them in deadline order at no cost, and one timer,
set for the earliest deadline still pending, serves them all: a call appends its deadline, a
call that ends cancels it (a flag), and when the timer fires it runs what is due, drops what was
cancelled and sets itself for the next deadline still pending. Each deadline runs at the same
loop time as its own ``call_later`` would have.

A cancelled deadline is let go of once it reaches the front of the queue, at the latest when the
deadlines before it come due, so the queue holds at most the calls started within one timeout.
A deadline earlier than the last one queued (the timeout was changed between two calls) would
break the order; it gets a timer of its own instead.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Cancellable", "DeadlineQueue"]


class Cancellable(Protocol):
    """What a scheduled deadline offers its caller: :meth:`cancel`, as a ``TimerHandle`` does."""

    def cancel(self) -> None: ...


class _Deadline:
    """One queued deadline; ``callback`` is None once it has run or was cancelled."""

    __slots__ = ("args", "callback", "when")

    def __init__(self, when: float, callback: Callable[..., object], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback: Callable[..., object] | None = callback
        self.args = args

    def cancel(self) -> None:
        self.callback = None
        self.args = ()  # let go of the task it would have cancelled


class DeadlineQueue:
    """``call_later`` for deadlines that come due in the order they were set, on one timer.

    Belongs to one event loop; make it inside that loop.
    """

    __slots__ = ("_firing", "_queue", "_timer", "_timer_when", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._queue: deque[_Deadline] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = 0.0
        self._firing = False

    def __len__(self) -> int:
        """Deadlines still held (pending, or cancelled and not yet dropped)."""
        return len(self._queue)

    def call_later(
        self, delay: float, callback: Callable[..., object], *args: Any
    ) -> Cancellable:
        """Run ``callback(*args)`` ``delay`` seconds from now unless cancelled first."""
        when = self.loop.time() + delay
        queue = self._queue
        while queue and queue[0].callback is None:
            queue.popleft()  # cancelled at the front: nothing is waiting for them
        if queue and when < queue[-1].when:
            return self.loop.call_at(when, callback, *args)
        deadline = _Deadline(when, callback, args)
        queue.append(deadline)
        if self._timer is None and not self._firing:
            self._arm(when)
        return deadline

    def _arm(self, when: float) -> None:
        self._timer_when = when
        self._timer = self.loop.call_at(when, self._fire)

    def _fire(self) -> None:
        """Run every deadline that is due, then set the timer for the next one pending."""
        self._timer = None
        self._firing = True
        # The loop ran this timer because its time had come; anything due by now runs too.
        now = max(self._timer_when, self.loop.time())
        queue = self._queue
        try:
            while queue:
                deadline = queue[0]
                callback = deadline.callback
                if callback is not None and deadline.when > now:
                    break
                queue.popleft()
                if callback is not None:
                    args = deadline.args
                    deadline.cancel()
                    callback(*args)  # a raise reaches the loop's handler; the rest run next
        finally:
            self._firing = False
            while queue and queue[0].callback is None:
                queue.popleft()
            if queue:
                self._arm(queue[0].when)
