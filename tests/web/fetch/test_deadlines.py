"""The fetch's deadline queue: every deadline runs when its own timer would have, on one timer."""

from __future__ import annotations

import asyncio
import logging

import pytest

from runvil.web import FetchPolicy
from runvil.web._fetch.deadlines import DeadlineQueue
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import FetchFactory, RawSiteFactory


class Log:
    """What ran, and the loop time it ran at."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ran: list[tuple[str, float]] = []

    def __call__(self, name: str) -> None:
        self.ran.append((name, self.loop.time()))

    def names(self) -> list[str]:
        return [name for name, _ in self.ran]


async def test_deadlines_run_in_order_each_no_earlier_than_its_time() -> None:
    loop = asyncio.get_running_loop()
    queue, log = DeadlineQueue(loop), Log(loop)
    due = {}
    for name in ("a", "b", "c"):
        due[name] = loop.time() + 0.05
        queue.call_later(0.05, log, name)
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    assert log.names() == ["a", "b", "c"]
    for name, ran_at in log.ran:
        # The loop runs a timer once its time is within the clock's resolution.
        assert ran_at >= due[name] - 2 * loop._clock_resolution  # type: ignore[attr-defined]
    assert len(queue) == 0


async def test_a_cancelled_deadline_never_runs_and_the_next_one_still_does() -> None:
    loop = asyncio.get_running_loop()
    queue, log = DeadlineQueue(loop), Log(loop)
    first = queue.call_later(0.03, log, "first")
    queue.call_later(0.06, log, "second")
    first.cancel()
    await asyncio.sleep(0.1)
    assert log.names() == ["second"]


async def test_cancelled_deadlines_at_the_front_are_let_go() -> None:
    # A long-lived queue must not keep every finished call's deadline until its time.
    loop = asyncio.get_running_loop()
    queue = DeadlineQueue(loop)
    for _ in range(1000):
        queue.call_later(60, print).cancel()
    queue.call_later(60, print)
    assert len(queue) == 1


async def test_one_loop_timer_serves_every_deadline() -> None:
    loop = asyncio.get_running_loop()
    queue = DeadlineQueue(loop)
    before = len(loop._scheduled)  # type: ignore[attr-defined]
    handles = [queue.call_later(60, print) for _ in range(100)]
    assert len(loop._scheduled) == before + 1  # type: ignore[attr-defined]
    for handle in handles:
        handle.cancel()


async def test_a_deadline_earlier_than_the_last_one_gets_its_own_timer() -> None:
    loop = asyncio.get_running_loop()
    queue, log = DeadlineQueue(loop), Log(loop)
    queue.call_later(10, log, "late")
    queue.call_later(0.02, log, "early")
    await asyncio.sleep(0.06)
    assert log.names() == ["early"]


async def test_a_callback_that_raises_stops_no_other_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    queue, log = DeadlineQueue(loop), Log(loop)

    def broken() -> None:
        raise RuntimeError("deadline bug")

    queue.call_later(0.02, broken)
    queue.call_later(0.02, log, "after")
    queue.call_later(0.04, log, "later")
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        await asyncio.sleep(0.08)
    assert log.names() == ["after", "later"]
    assert "deadline bug" in caplog.text


async def test_a_deadline_set_while_others_run_keeps_its_place() -> None:
    loop = asyncio.get_running_loop()
    queue, log = DeadlineQueue(loop), Log(loop)

    def rearm() -> None:
        log("first")
        queue.call_later(0.03, log, "from the callback")

    queue.call_later(0.02, rearm)
    queue.call_later(0.025, log, "second")
    await asyncio.sleep(0.1)
    assert log.names() == ["first", "second", "from the callback"]


async def test_a_shorter_timeout_set_mid_flight_still_ends_the_next_call_on_time(
    make_fetch: FetchFactory, raw_site: RawSiteFactory, internet: FakeInternet
) -> None:
    # Deadlines out of start order (the policy was replaced between two calls): the stalled
    # second call must not wait for the first call's longer deadline.
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    await raw_site(stall)
    fetch = make_fetch(FetchPolicy(timeout=30))
    slow = asyncio.ensure_future(fetch.call({"url": "https://example.com/slow"}))
    await asyncio.sleep(0.05)
    fetch.policy = FetchPolicy(connect_timeout=0.5, timeout=0.3)
    text = await asyncio.wait_for(fetch.call({"url": "https://example.com/fast"}), 5)
    assert text == "request to https://example.com/fast timed out; try again or use a different URL"
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
