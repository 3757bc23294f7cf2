"""Nothing a fault does outlives its call: file descriptors and tasks return to their baseline.

The fault server runs in its own process, so every descriptor counted here belongs to the client
side: the fetch's sockets, its TLS transports and its session.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.tool import WebFetch
from tests.fixtures.faults import FAULT_HOST, FaultServer
from tests.fixtures.internet import FakeInternet
from tests.reliability.conftest import FAULT_POLICY
from tests.reliability.test_fetch_faults import CASES, body_unreadable


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _settled_fds(baseline: int, patience: float = 3.0) -> int:
    """The descriptor count once closing transports have finished (they close on later loop
    iterations), or the last count seen when ``patience`` runs out."""
    deadline = time.monotonic() + patience
    count = _open_fds()
    while count != baseline and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        gc.collect()
        count = _open_fds()
    return count


async def test_every_fault_twice_leaves_no_descriptor_or_task(
    internet: FakeInternet, fault_server: FaultServer
) -> None:
    fault_server.install(internet)
    tasks_before = asyncio.all_tasks()
    fds_before = _open_fds()
    async with WebFetch(policy=FAULT_POLICY, network=internet.network()) as fetch:
        for _round in range(2):
            results = await asyncio.gather(
                *(fetch.call({"url": case.href}) for case in CASES.values()),
                return_exceptions=True,
            )
            unexpected = [r for r in results if not isinstance(r, str)]
            assert unexpected == []
    assert await _settled_fds(fds_before) == fds_before
    assert asyncio.all_tasks() == tasks_before


async def test_cancelled_calls_leave_no_descriptor_or_task(
    internet: FakeInternet, fault_server: FaultServer
) -> None:
    fault_server.install(internet)
    stuck = ["/slow/headers", "/slow/body", "/endless/slow", "/1xx/flood", "/hang/cancelled"]
    hosts = ["tls-stall.faults.example", "connect-stall.faults.example"]
    urls = [f"https://{FAULT_HOST}{p}" for p in stuck] + [f"https://{h}/ok" for h in hosts]
    tasks_before = asyncio.all_tasks()
    fds_before = _open_fds()
    patient = FetchPolicy(timeout=30, connect_timeout=30)
    async with WebFetch(policy=patient, network=internet.network()) as fetch:
        calls = [asyncio.create_task(fetch.call({"url": url})) for url in urls]
        await asyncio.sleep(0.4)
        for call in calls:
            call.cancel()
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert [type(o).__name__ for o in outcomes] == ["CancelledError"] * len(urls)
    assert await _settled_fds(fds_before) == fds_before
    assert asyncio.all_tasks() == tasks_before


async def test_a_malformed_chunk_fails_the_read_at_once_not_at_the_deadline(
    internet: FakeInternet, fault_server: FaultServer
) -> None:
    # aiohttp's C parser notices a malformed chunk after the head but never fails the body
    # stream, so a naive read waits for the whole-request deadline (20 s under the default
    # policy) before reporting what was known at once. Half the deadline is far more than the
    # ~0.1 s the fault takes; only a read stuck until the deadline can miss it.
    fault_server.install(internet)
    policy = FetchPolicy(timeout=6.0, connect_timeout=0.5)
    async with WebFetch(policy=policy, network=internet.network()) as fetch:
        for path in ("/chunked/bad-size", "/chunked/bad-terminator", "/chunked/overflow-size"):
            href = f"https://{FAULT_HOST}{path}"
            started = time.monotonic()
            result = await fetch.call({"url": href})
            elapsed = time.monotonic() - started
            assert result == body_unreadable(href, href)
            assert elapsed < policy.timeout / 2, f"{path} took {elapsed:.1f} s"
