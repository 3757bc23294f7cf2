"""An expensive page must not stall the event loop that every other fetch and session share.

A fetch reads its body under the whole-request deadline, but rendering happens afterwards, and
CPU work on the event loop thread cannot be interrupted by any deadline: while it runs, every
other call in the process (other fetches, searches, MCP sessions) stands still.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.tool import WebFetch
from tests.fixtures.faults import FAULT_HOST, FaultServer
from tests.fixtures.internet import FakeInternet


async def test_rendering_a_deeply_nested_page_leaves_the_event_loop_responsive(
    internet: FakeInternet, fault_server: FaultServer
) -> None:
    # Finding F-7: 40,000 nested <div>s (200 KB, far under the 8 MiB cap) took about 4.6 s of
    # rendering on the event loop thread (the HTML tree builder is quadratic in nesting depth:
    # 100,000 took 42 s), so the whole process froze for that long.
    fault_server.install(internet)
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.02)
            worst = max(worst, time.monotonic() - before - 0.02)

    policy = FetchPolicy(timeout=30.0, connect_timeout=2.0)
    async with WebFetch(policy=policy, network=internet.network()) as fetch:
        watch = asyncio.create_task(ticker())
        try:
            text = await fetch.call({"url": f"https://{FAULT_HOST}/html/deep-nesting"})
            await asyncio.sleep(0.1)  # let the ticker wake once more and record a late wake-up
        finally:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
    assert text.startswith(f"url: https://{FAULT_HOST}/html/deep-nesting\ntruncated: false\n")
    assert text.endswith("deep")
    # The deep page takes seconds of CPU to render; a stall under a second (scheduling noise on a
    # loaded machine included) proves the render ran off the event loop.
    assert worst < 1.0, f"the event loop stood still for {worst:.1f} s"
