"""Soak: thousands of fetches against every fault at once, and nothing lost or leaked.

Runs ``--fetches`` fetches (default 10,000) round-robin across every fault-server behaviour the
reliability tests know (``tests/reliability/test_fetch_faults.py``), ``--concurrency`` at a time
(default 100), through one ``WebFetch`` under a short policy. It then checks what issue 8 asks:

- every call ended in a message from the fetch catalogue (a page, or one of the soft texts, or
  a specified hard error), and none in an unexpected exception or ``the fetch task did not
  finish``;
- no call took longer than the policy's whole-request limit (plus a small scheduling slack);
- open file descriptors and asyncio tasks are back to their baseline after the run;
- resident memory grew by less than 50 MB.

It also reports how many results were exactly the text the reliability tests expect (under
load a fast fault may legitimately time out instead; that is still a catalogue message).

Usage (never part of the test suite)::

    python -m bench.soak --fetches 10000 --concurrency 100

Exit status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import os
import re
import ssl
import sys
import time
from collections.abc import Iterable

import trustme
from tests.fixtures.faults import FaultServer
from tests.reliability.test_fetch_faults import CASES

from runvil._errors import ToolError
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.tool import WebFetch

#: The soak's policy: the reliability tests' short limits, so stalls end quickly.
POLICY = FetchPolicy(timeout=1.5, connect_timeout=0.5)
#: How late past ``POLICY.timeout`` a call may end (event-loop scheduling on a loaded machine).
SLACK = 1.0
RSS_BUDGET_MB = 50.0

#: Every soft text and the page header, as the catalogue gives them.
SOFT = [
    r"url: https://\S+\ntruncated: (true|false)\nextraction: (readability|raw-html|plain)\n\n.*",
    r"request to https://\S+ timed out; try again or use a different URL",
    r"the response body from https://\S+ could not be read; try again or use a different URL",
    r"fetch failed for https://\S+: network error; try a different URL",
    r"https://\S+ answered HTTP \d{3}; try a different URL",
    r"content type .+ from https://\S+ cannot be returned as text; "
    r"try an HTML version of the page or a different URL",
    r"response from https://\S+ declared no content type; refusing to guess its format; "
    r"try a different URL",
    r"response from https://\S+ exceeds the \d+-byte size cap",
    r"response from https://\S+ declared unknown charset .+; cannot decode its text",
    r"dns resolution failed for \S+",
    r"redirect from \S+ to \S+ refused: .+",
    r"scheme not allowed: \S+",
]
CATALOGUE = re.compile("|".join(f"(?:{p})" for p in SOFT), re.S)
HARD = re.compile(
    r"invalid url|url must not contain userinfo|port not allowed: \d+"
    r"|ip literal host not allowed: \S+|host \S+ has no allowed address"
    r"|web_fetch: (missing url argument|max_chars must be a positive integer"
    r"|raw must be a boolean)"
)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_mb(field: str = "VmRSS") -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


async def settle(baseline_fds: int, patience: float = 5.0) -> None:
    """Give closing transports the loop iterations they need to release their sockets."""
    deadline = time.monotonic() + patience
    while open_fds() != baseline_fds and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        gc.collect()


class Tally:
    def __init__(self) -> None:
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.exact = 0
        self.inexact: collections.Counter[str] = collections.Counter()
        self.unexpected: list[str] = []
        self.too_slow: list[tuple[str, float]] = []
        self.slowest = 0.0
        self.rss_samples: list[tuple[int, float]] = []


async def one(fetch: WebFetch, name: str, tally: Tally) -> None:
    case = CASES[name]
    started = time.monotonic()
    try:
        text = await fetch.call({"url": case.href})
    except ToolError as err:
        ok = HARD.fullmatch(err.message) is not None
        tally.outcomes["hard " + ("catalogue" if ok else "OTHER")] += 1
        if not ok:
            tally.unexpected.append(f"{name}: ToolError {err.kind.value} {err.message!r}")
    except BaseException as exc:  # the soak's whole point is to catch these
        tally.outcomes["exception"] += 1
        tally.unexpected.append(f"{name}: {type(exc).__name__}: {exc}")
    else:
        if CATALOGUE.fullmatch(text) is None:
            tally.outcomes["soft OTHER"] += 1
            tally.unexpected.append(f"{name}: not a catalogue message: {text[:200]!r}")
        else:
            tally.outcomes["page" if text.startswith("url: ") else "soft catalogue"] += 1
        if text == case.expect(case.href, case.display):
            tally.exact += 1
        else:
            tally.inexact[f"{name} -> {text.split(' ', 1)[0]} ..."] += 1
    done = sum(tally.outcomes.values())
    if done % 1000 == 0:
        tally.rss_samples.append((done, rss_mb()))
    elapsed = time.monotonic() - started
    tally.slowest = max(tally.slowest, elapsed)
    if elapsed > POLICY.timeout + SLACK:
        tally.too_slow.append((name, elapsed))


class LagMonitor:
    """Measures how late the event loop wakes a 50 ms sleeper: a deadline cannot fire while the
    loop is starved (CPU-bound work in the loop, or the OS giving the process no core), so an
    overrun is only the fetch's fault if it exceeds this lag."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.05)
            self.worst = max(self.worst, time.monotonic() - before - 0.05)

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def run(fetch: WebFetch, names: Iterable[str], concurrency: int, tally: Tally) -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    for name in names:
        queue.put_nowait(name)

    async def worker() -> None:
        while not queue.empty():
            await one(fetch, queue.get_nowait(), tally)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def soak(fetches: int, concurrency: int, warmup: int) -> bool:
    ca = trustme.CA()
    server = FaultServer()
    server.start(ca)
    try:
        context = ssl.create_default_context()
        ca.configure_trust(context)
        network = server.network(context)
        names = list(CASES)
        schedule = [names[i % len(names)] for i in range(fetches)]

        fds0, tasks0, rss_start = open_fds(), len(asyncio.all_tasks()), rss_mb()
        # Warm up at full concurrency, so imports, caches and the allocator's working set (up
        # to 100 bodies of up to 8 MiB in flight) are part of the baseline: the check is for
        # growth that a longer run would keep adding, i.e. leaks.
        warm = [names[i % len(names)] for i in range(warmup)]
        async with WebFetch(policy=POLICY, network=network) as fetch:
            await run(fetch, warm, concurrency, Tally())
        gc.collect()
        await settle(fds0)
        rss0 = rss_mb()

        tally = Tally()
        lag = LagMonitor()
        lag.start()
        started = time.monotonic()
        cpu0 = time.process_time()
        async with WebFetch(policy=POLICY, network=network) as fetch:
            await run(fetch, schedule, concurrency, tally)
        wall = time.monotonic() - started
        await lag.stop()
        cpu = time.process_time() - cpu0
        gc.collect()
        await settle(fds0)
        fds1, tasks1, rss1, peak = open_fds(), len(asyncio.all_tasks()), rss_mb(), rss_mb("VmHWM")
    finally:
        server.stop()

    calls = sum(tally.outcomes.values())
    print(f"soak: {calls} fetches over {len(CASES)} behaviours, concurrency {concurrency}, "
          f"policy timeout {POLICY.timeout} s / connect {POLICY.connect_timeout} s")
    print(f"  wall {wall:.1f} s, client CPU {cpu:.1f} s, slowest call {tally.slowest:.2f} s, "
          f"worst event-loop lag {lag.worst:.2f} s")
    for outcome, count in sorted(tally.outcomes.items()):
        print(f"  {outcome:16} {count}")
    print(f"  exactly the text the reliability tests expect: {tally.exact} of {calls}")
    for what, count in tally.inexact.most_common(8):
        print(f"    otherwise: {count:5} x {what}")
    print(f"  open fds  {fds0} -> {fds1}")
    print(f"  tasks     {tasks0} -> {tasks1}")
    print(f"  RSS       {rss_start:.1f} before a {warmup}-fetch warm-up, {rss0:.1f} after it")
    growth = rss1 - rss0
    print(f"  RSS       {rss0:.1f} -> {rss1:.1f} MB (growth {growth:+.1f} MB), peak {peak:.1f}")
    samples = ", ".join(f"{n}: {mb:.0f}" for n, mb in tally.rss_samples)
    print(f"  RSS by fetches done (MB): {samples}")
    for line in tally.unexpected[:20]:
        print("  UNEXPECTED", line)
    for name, elapsed in tally.too_slow[:20]:
        print(f"  over {POLICY.timeout + SLACK:g} s: {name}: {elapsed:.2f} s")
    late = [e for _, e in tally.too_slow if e > POLICY.timeout + SLACK + lag.worst]
    checks = {
        "every call ended in a catalogue message": not tally.unexpected and calls == fetches,
        "every call ended within the policy's limit (plus the loop's measured lag)": not late,
        "descriptors back to baseline": fds1 == fds0,
        "tasks back to baseline": tasks1 == tasks0,
        f"RSS growth under {RSS_BUDGET_MB:.0f} MB": rss1 - rss0 < RSS_BUDGET_MB,
    }
    for check, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {check}")
    return all(checks.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fetches", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=1_000)
    args = parser.parse_args()
    ok = asyncio.run(soak(args.fetches, args.concurrency, args.warmup))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
