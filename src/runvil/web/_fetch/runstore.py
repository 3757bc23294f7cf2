"""What a fetch keeps for the length of a run, bounded for the whole process.

Two things are kept per run: each page's whole text (so a model reading on with ``start_index``
reads the same text without a new fetch) and each site's robots.txt rules. A model decides what
gets fetched, so it decides what would be kept: a store that grew with what a model asked for
would be a way to exhaust the process's memory. So the store is bounded *by construction*, for
the whole process and not per run (fifty sessions must not get fifty budgets):

- a byte budget: entries are counted by the size their owner reports (a page's text by
  ``sys.getsizeof``), and the least recently used go first when a new entry would not fit; an
  entry larger than the whole budget is not kept at all;
- an entry count, so a flood of tiny entries cannot make bookkeeping the cost;
- an age: an entry is never served, and not kept, past ``max_age`` seconds after it was stored
  (reading it does not make it younger);
- the run: an entry belongs to one :class:`~runvil._tools.RunScope` and is served only to calls
  of that run; when the run ends (or its scope is garbage-collected, for a run let go without
  an end), its entries are dropped.

What is not kept is fetched again, under every rule: forgetting is always safe.

The store is shared by the event loop and the render threads, so every operation takes one lock;
each is a few dictionary operations.
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from runvil._tools import RunScope

__all__ = ["RunStore"]

V = TypeVar("V")


#: ``_born`` may hold this many records per entry before it is compacted (a record stays until
#: it expires, and an entry replaced or evicted earlier leaves its record behind).
_BORN_SLACK = 4


class _Entry(Generic[V]):
    __slots__ = ("born", "size", "value")

    def __init__(self, value: V, size: int, born: float) -> None:
        self.value = value
        self.size = size
        self.born = born


class RunStore(Generic[V]):
    """Values kept per run under one process-wide budget (see the module docstring)."""

    def __init__(
        self,
        *,
        budget: int,
        max_entries: int,
        max_age: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[int, Hashable], _Entry[V]] = OrderedDict()
        self._born: deque[tuple[float, tuple[int, Hashable]]] = deque()
        self._by_run: dict[int, set[tuple[int, Hashable]]] = {}
        self._ended: deque[int] = deque()
        self._serials: weakref.WeakKeyDictionary[RunScope, int] = weakref.WeakKeyDictionary()
        self._next_serial = itertools.count(1)
        self.size = 0
        """Bytes held now, as the entries' owners counted them."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, scope: RunScope, key: Hashable) -> V | None:
        """The value ``scope``'s run kept under ``key``, or None (never kept, evicted, too old)."""
        with self._lock:
            self._tidy()
            serial = self._serials.get(scope)
            if serial is None:
                return None
            entry = self._entries.get((serial, key))
            if entry is None:
                return None
            self._entries.move_to_end((serial, key))
            return entry.value

    def put(self, scope: RunScope, key: Hashable, value: V, size: int) -> bool:
        """Keep ``value`` for ``scope``'s run; False when it is larger than the whole budget."""
        if size > self.budget:
            return False
        with self._lock:
            serial = self._serial(scope)
            full = (serial, key)
            self._drop(full)
            self._tidy()
            while self._entries and (
                self.size + size > self.budget or len(self._entries) >= self.max_entries
            ):
                self._drop(next(iter(self._entries)))
            entry = _Entry(value, size, self._clock())
            self._entries[full] = entry
            self._born.append((entry.born, full))
            if len(self._born) > _BORN_SLACK * self.max_entries:
                self._compact()
            self._by_run.setdefault(serial, set()).add(full)
            self.size += size
            return True

    def clear(self) -> None:
        """Forget everything (the runs stay known)."""
        with self._lock:
            for full in list(self._entries):
                self._drop(full)
            self._born.clear()

    # -- under the lock ------------------------------------------------------------------------

    def _serial(self, scope: RunScope) -> int:
        """A number for ``scope`` that no later run reuses (an ``id()`` could be), and the
        notices that forget the run's entries when it ends or its scope goes."""
        serial = self._serials.get(scope)
        if serial is None:
            serial = next(self._next_serial)
            self._serials[scope] = serial
            ended = self._ended
            scope.on_end(lambda: ended.append(serial))
            weakref.finalize(scope, ended.append, serial)
        return serial

    def _tidy(self) -> None:
        """Drop the entries of runs that ended and of every entry past its age.

        A run's end is noted by its scope (or the scope's finalizer, which may run in any thread
        at any moment, even inside this lock when a collection happens there), so the notice
        only appends the run's number, and the store's next operation drops the run's
        entries."""
        while self._ended:
            serial = self._ended.popleft()
            for full in list(self._by_run.pop(serial, ())):
                self._drop(full)
        self._expire()

    def _drop(self, full: tuple[int, Hashable]) -> None:
        entry = self._entries.pop(full, None)
        if entry is None:
            return
        self.size -= entry.size
        keys = self._by_run.get(full[0])
        if keys is not None:
            keys.discard(full)

    def _expire(self) -> None:
        """Drop every entry older than ``max_age``. Entries are born in clock order, so the
        oldest are at the left of ``_born``; a record whose entry was already dropped or
        replaced since (its birth time differs) is skipped. The records hold keys only, never
        values, so an evicted page is freed at once."""
        horizon = self._clock() - self.max_age
        born = self._born
        while born and born[0][0] <= horizon:
            when, full = born.popleft()
            entry = self._entries.get(full)
            if entry is not None and entry.born == when:
                self._drop(full)

    def _compact(self) -> None:
        """Keep only the records of live entries, oldest first."""
        live = sorted(
            ((entry.born, full) for full, entry in self._entries.items()), key=lambda r: r[0]
        )
        self._born = deque(live)
