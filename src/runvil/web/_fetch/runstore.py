"""What a fetch keeps for the length of a run, bounded for the whole process and shared fairly.

Two things are kept per run: each page's whole text (so a model reading on with ``start_index``
reads the same text without a new fetch) and each site's robots.txt rules. A model decides what
gets fetched, so it decides what would be kept: a store that grew with what a model asked for
would be a way to exhaust the process's memory. So the store is bounded *by construction*, for
the whole process and not per run (fifty sessions must not get fifty budgets):

- a byte budget: entries are counted by the size their owner reports (a page's text by
  ``sys.getsizeof``); an entry larger than the whole budget is not kept at all;
- an entry count, so a flood of tiny entries cannot make bookkeeping the cost;
- an age: an entry is never served, and not kept, at or past ``max_age`` seconds after it was
  stored (reading it does not make it younger);
- the run: an entry belongs to one :class:`~runvil._tools.RunScope` and is served only to calls
  of that run; when the run ends its entries (and fingerprints) are dropped at once, and a run
  let go without an end goes when its scope is garbage-collected.

**A fair share each.** The budget and the entry count are shared between the runs that hold
entries: with ``n`` of them, each run's share is ``budget // n`` bytes and ``max_entries // n``
entries. A run that needs room first gives up its own least recently used entries until it fits
its share; only then, if the store as a whole is full, does room come from other runs, and only
from runs holding more than their share (the largest first, its least recently used entry
first). So a run within its share never loses an entry to another run, however much that run
fetches; a run alone may use the whole budget.

**Fingerprints.** Next to each entry the store can keep its owner's :class:`Fingerprint` (a
length and a 128-bit digest), per run and *outside* the evictable budget: when an entry is gone
(evicted, expired, never kept because it was too large) the fingerprint still says what the run
saw, so a continuation can tell that a page fetched again is not the page it was reading. A run
keeps at most ``max_prints_per_run`` of them (its oldest go first) and the process at most
``max_prints`` (taken, when full, from the run holding the most). They go when the run ends.

**One interface.** :class:`RunStoreBackend` is what the fetch needs of a store (get, put,
fingerprint, end a run); :class:`RunStore` is the in-process one. Another backend (a shared
store behind a fleet of replicas) implements the same four operations.

What is not kept is fetched again, under every rule: forgetting is always safe.

The store is shared by the event loop and the render threads, so every operation takes one lock;
each is a few dictionary operations, and choosing whose entry to give up looks at the runs that
hold entries (at most ``max_entries`` of them).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, NamedTuple, Protocol, TypeVar

from runvil._tools import RunScope

__all__ = ["Fingerprint", "RunStore", "RunStoreBackend", "fingerprint_text"]

V = TypeVar("V")

#: The expiry heap may hold this many records per live entry before it is compacted (a record
#: stays until it expires, and an entry replaced or evicted earlier leaves its record behind).
_HEAP_SLACK = 4
#: Fingerprints a run keeps, and the process keeps, at most, by default: one costs about 300
#: bytes (a 16-byte key digest, the length and a 16-byte digest, and the dictionary's slot).
PRINTS_PER_RUN = 256
PRINTS = 16_384


class Fingerprint(NamedTuple):
    """What a run saw of a value: its length and a digest of it (the first 16 bytes of its
    SHA-256)."""

    length: int
    digest: bytes


#: Characters encoded at once for a fingerprint, so a page of any size costs at most 256 KiB of
#: encoded bytes at a time (an 8 Mi-character page of emoji would be 32 MiB at once).
_FINGERPRINT_CHUNK = 1 << 16


def fingerprint_text(text: str) -> Fingerprint:
    """The fingerprint of a text: its length in characters and the digest of its UTF-8 (lone
    surrogates included, so every string has one). The same text gives the same fingerprint in
    every process, so a store shared by several processes can compare them. SHA-256, because
    processors hash it in hardware: about 10 ms for 8 Mi characters of ASCII on the development
    machine, 60 ms for Greek, 140 ms for emoji (encoding wider characters costs more, as decoding
    them did)."""
    digest = hashlib.sha256()
    for start in range(0, len(text), _FINGERPRINT_CHUNK):
        digest.update(text[start : start + _FINGERPRINT_CHUNK].encode("utf-8", "surrogatepass"))
    return Fingerprint(len(text), digest.digest()[:16])


def _key_digest(key: Hashable) -> bytes:
    """A fixed-size stand-in for a key (a page's key holds its URL, up to 8,192 characters and
    more once encoded), so what a fingerprint costs does not depend on what a model asked for."""
    return hashlib.blake2b(repr(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()


class RunStoreBackend(Protocol[V]):
    """What a fetch needs of a per-run store; :class:`RunStore` is the in-process one.

    Every operation is keyed by the run (``scope``) and a key of the owner's choosing; a value
    is served only to the run that put it, and never past the store's age. A backend may forget
    anything at any time (the fetch then fetches again), except that a fingerprint it keeps is
    the one of the run's latest put under that key.
    """

    def get(self, scope: RunScope, key: Hashable) -> V | None:
        """The value ``scope``'s run kept under ``key``, or None."""
        ...

    def put(
        self,
        scope: RunScope,
        key: Hashable,
        value: V,
        size: int,
        fingerprint: Fingerprint | None = None,
    ) -> bool:
        """Keep ``value`` (``size`` bytes) and its fingerprint for ``scope``'s run; False when the
        value is not kept (the fingerprint may still be)."""
        ...

    def fingerprint(self, scope: RunScope, key: Hashable) -> Fingerprint | None:
        """The fingerprint of ``scope``'s latest put under ``key``, kept or not, or None."""
        ...

    def end_run(self, scope: RunScope) -> None:
        """Forget everything ``scope``'s run kept (its values and its fingerprints)."""
        ...


class _Entry(Generic[V]):
    __slots__ = ("expires", "size", "value")

    def __init__(self, value: V, size: int, expires: float) -> None:
        self.value = value
        self.size = size
        self.expires = expires


class _Run(Generic[V]):
    """One run's part of the store: its entries, least recently used first, and fingerprints."""

    __slots__ = ("entries", "prints", "serial", "size")

    def __init__(self, serial: int) -> None:
        self.serial = serial
        self.entries: OrderedDict[Hashable, _Entry[V]] = OrderedDict()
        self.prints: OrderedDict[bytes, Fingerprint] = OrderedDict()
        self.size = 0


class RunStore(Generic[V]):
    """Values kept per run under one process-wide budget, shared fairly (module docstring)."""

    def __init__(
        self,
        *,
        budget: int,
        max_entries: int,
        max_age: float,
        clock: Callable[[], float] = time.monotonic,
        max_prints_per_run: int = PRINTS_PER_RUN,
        max_prints: int = PRINTS,
    ) -> None:
        self.budget = budget
        self.max_entries = max_entries
        self.max_age = max_age
        self.max_prints_per_run = max_prints_per_run
        self.max_prints = max_prints
        self._clock = clock
        # Reentrant: a run's end may be noticed (by a finalizer) inside an operation of the
        # same thread; ``_busy`` then defers the drop to the operation's end.
        self._lock = threading.RLock()
        self._busy = False
        self._runs: dict[int, _Run[V]] = {}
        self._holding: dict[int, _Run[V]] = {}
        """The runs that hold at least one entry: the ones the shares are divided between."""
        self._expiry: list[tuple[float, int, int, Hashable]] = []
        self._seq = itertools.count()
        self._ended: deque[int] = deque()
        self._serials: weakref.WeakKeyDictionary[RunScope, int] = weakref.WeakKeyDictionary()
        self._next_serial = itertools.count(1)
        self._count = 0
        self._prints = 0
        self.size = 0
        """Bytes held now, as the entries' owners counted them."""

    def __len__(self) -> int:
        return self._count

    @property
    def prints(self) -> int:
        """Fingerprints kept now, over every run."""
        return self._prints

    # -- the interface -------------------------------------------------------------------------

    def get(self, scope: RunScope, key: Hashable) -> V | None:
        """The value ``scope``'s run kept under ``key``, or None (never kept, evicted, too old)."""
        with self._operation():
            run = self._run_of(scope)
            if run is None:
                return None
            entry = run.entries.get(key)
            if entry is None:
                return None
            if self._clock() >= entry.expires:
                self._drop(run, key)
                return None
            run.entries.move_to_end(key)
            return entry.value

    def put(
        self,
        scope: RunScope,
        key: Hashable,
        value: V,
        size: int,
        fingerprint: Fingerprint | None = None,
    ) -> bool:
        """Keep ``value`` for ``scope``'s run, making room as the module docstring says; False
        when it is not kept (larger than the whole budget, or no room without taking from a run
        within its share, or the run has ended). ``fingerprint``, when given, is kept even when
        the value is not (unless the run has ended)."""
        with self._operation():
            if scope.ended:
                return False
            run = self._run_for(scope)
            self._drop(run, key)
            if fingerprint is not None:
                self._remember(run, _key_digest(key), fingerprint)
            if size > self.budget or self.max_entries < 1:
                return False
            if not self._make_room(run, size):
                return False
            now = self._clock()
            entry = _Entry(value, size, now + self.max_age)
            run.entries[key] = entry
            self._holding[run.serial] = run
            run.size += size
            self.size += size
            self._count += 1
            heapq.heappush(self._expiry, (entry.expires, next(self._seq), run.serial, key))
            if len(self._expiry) > _HEAP_SLACK * max(self._count, 16):
                self._compact()
            return True

    def fingerprint(self, scope: RunScope, key: Hashable) -> Fingerprint | None:
        """The fingerprint of ``scope``'s latest put under ``key`` (kept or not), or None."""
        with self._operation():
            run = self._run_of(scope)
            if run is None:
                return None
            return run.prints.get(_key_digest(key))

    def end_run(self, scope: RunScope) -> None:
        """Forget ``scope``'s run now: its entries and its fingerprints."""
        with self._lock:
            serial = self._serials.get(scope)
            if serial is not None:
                self._note_end(serial)

    def run_size(self, scope: RunScope) -> int:
        """Bytes ``scope``'s run holds now."""
        with self._operation():
            run = self._run_of(scope)
            return 0 if run is None else run.size

    def clear(self) -> None:
        """Forget every entry (the runs and their fingerprints stay)."""
        with self._operation():
            for run in list(self._holding.values()):
                for key in list(run.entries):
                    self._drop(run, key)
            self._expiry.clear()

    # -- under the lock ------------------------------------------------------------------------

    @contextmanager
    def _operation(self) -> Iterator[None]:
        """Hold the lock for one operation: ended runs and expired entries go first, and a run
        that ends while the operation runs goes before the lock is let go."""
        with self._lock:
            self._busy = True
            try:
                self._tidy()
                yield
            finally:
                try:
                    self._forget_ended()
                finally:
                    self._busy = False

    def _run_of(self, scope: RunScope) -> _Run[V] | None:
        serial = self._serials.get(scope)
        return None if serial is None else self._runs.get(serial)

    def _run_for(self, scope: RunScope) -> _Run[V]:
        """The record of ``scope``'s run, made on its first put with a number no later run
        reuses (an ``id()`` could be), and the notices that forget the run when it ends (at
        once) or its scope goes (a finalizer: whenever the collector runs it)."""
        serial = self._serials.get(scope)
        if serial is None:
            serial = next(self._next_serial)
            self._serials[scope] = serial
            scope.on_end(lambda: self._ended_notice(serial))
            weakref.finalize(scope, self._ended_notice, serial)
        run = self._runs.get(serial)
        if run is None:
            run = self._runs[serial] = _Run(serial)
        return run

    def _ended_notice(self, serial: int) -> None:
        """A run ended (or its scope went): forget it now, or, when this thread is inside an
        operation (a finalizer run by a collection there), when that operation ends."""
        with self._lock:
            self._note_end(serial)

    def _note_end(self, serial: int) -> None:
        if self._busy:
            self._ended.append(serial)
        else:
            self._forget_run(serial)

    def _forget_ended(self) -> None:
        while self._ended:
            self._forget_run(self._ended.popleft())

    def _forget_run(self, serial: int) -> None:
        run = self._runs.pop(serial, None)
        if run is None:
            return
        for key in list(run.entries):
            self._drop(run, key)
        self._prints -= len(run.prints)
        run.prints.clear()

    def _tidy(self) -> None:
        """Forget the runs that ended and drop every entry at or past its age. The expiry
        records are a heap, so the earliest is found whatever order entries were put in (and
        whatever clock a test injects); a record whose entry was dropped or replaced since (its
        expiry differs) is skipped. Records hold keys only, never values, so an evicted value is
        freed at once."""
        self._forget_ended()
        now = self._clock()
        heap = self._expiry
        while heap and heap[0][0] <= now:
            expires, _, serial, key = heapq.heappop(heap)
            run = self._runs.get(serial)
            if run is None:
                continue
            entry = run.entries.get(key)
            if entry is not None and entry.expires == expires:
                self._drop(run, key)

    def _drop(self, run: _Run[V], key: Hashable) -> None:
        entry = run.entries.pop(key, None)
        if entry is None:
            return
        run.size -= entry.size
        self.size -= entry.size
        self._count -= 1
        if not run.entries:
            self._holding.pop(run.serial, None)

    def _make_room(self, run: _Run[V], size: int) -> bool:
        """Room for ``size`` more bytes and one more entry of ``run``: from its own entries down
        to its share, then from runs over their share, largest first. False when that is not
        enough (the rest is held by runs within their share)."""
        holders = len(self._holding) + (0 if run.entries else 1)
        share_bytes = self.budget // holders
        share_entries = max(1, self.max_entries // holders)
        while run.entries and (
            run.size + size > share_bytes or len(run.entries) + 1 > share_entries
        ):
            self._drop(run, next(iter(run.entries)))
        while self.size + size > self.budget or self._count + 1 > self.max_entries:
            by_count = self._count + 1 > self.max_entries
            victim = self._largest(run, by_count)
            if victim is None:
                return False
            over = victim.size > share_bytes if not by_count else (
                len(victim.entries) > share_entries
            )
            if not over:
                return False
            self._drop(victim, next(iter(victim.entries)))
        return True

    def _largest(self, run: _Run[V], by_count: bool) -> _Run[V] | None:
        """The run other than ``run`` holding the most bytes (or entries), or None."""
        best: _Run[V] | None = None
        for other in self._holding.values():
            if other is run:
                continue
            if best is None or (
                len(other.entries) > len(best.entries) if by_count else other.size > best.size
            ):
                best = other
        return best

    def _remember(self, run: _Run[V], digest: bytes, fingerprint: Fingerprint) -> None:
        """Keep ``fingerprint`` for ``run``, within the per-run and the process bounds."""
        if self.max_prints_per_run < 1 or self.max_prints < 1:
            return
        if run.prints.pop(digest, None) is not None:
            self._prints -= 1
        while len(run.prints) >= self.max_prints_per_run:
            run.prints.popitem(last=False)
            self._prints -= 1
        while self._prints >= self.max_prints:
            most = max(self._runs.values(), key=lambda r: len(r.prints))
            most.prints.popitem(last=False)
            self._prints -= 1
        run.prints[digest] = fingerprint
        self._prints += 1

    def _compact(self) -> None:
        """Keep only the expiry records of live entries."""
        live = [
            (entry.expires, next(self._seq), run.serial, key)
            for run in self._holding.values()
            for key, entry in run.entries.items()
        ]
        heapq.heapify(live)
        self._expiry = live
