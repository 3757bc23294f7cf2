"""Pages rendered at once: a bounded number, shared fairly between runs.

Each page takes one of :data:`PAGES_AT_ONCE` slots for its whole time in the browser. A page
that finds no slot free waits in its run's queue, and a freed slot goes to the runs in turn
(round robin over the runs that are waiting, first come first served within a run), so a run
that asks for fifty slow pages holds at most one waiting turn in the rotation and never starves
another run's single page.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Hashable

__all__ = ["PAGES_AT_ONCE", "FairGate"]

#: Pages one browser process renders at once (each costs a renderer, about 50 to 150 MB).
PAGES_AT_ONCE = 4


class FairGate:
    """``slots`` places, handed out round robin between the keys that wait (see above)."""

    def __init__(self, slots: int = PAGES_AT_ONCE) -> None:
        self.free = slots
        self._waiting: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()

    async def acquire(self, key: Hashable) -> None:
        if self.free > 0 and not self._waiting:
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot arrived with the cancellation: pass it on
            else:
                queue = self._waiting.get(key)
                if queue is not None and future in queue:
                    queue.remove(future)
                    if not queue:
                        del self._waiting[key]
            raise

    def release(self) -> None:
        while self._waiting:
            key, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(key)  # this run's next page waits for its next turn
            else:
                del self._waiting[key]
            if not future.done():
                future.set_result(None)
                return
        self.free += 1
