"""Pages rendered at once: bounded, and shared round robin between runs."""

from __future__ import annotations

import asyncio

from runvil.web._fetch.browser.schedule import FairGate


async def test_a_run_with_many_pages_does_not_starve_another() -> None:
    gate = FairGate(slots=1)
    order: list[str] = []

    async def page(run: str, n: int) -> None:
        await gate.acquire(run)
        order.append(f"{run}{n}")
        await asyncio.sleep(0.01)
        gate.release()

    busy = [asyncio.create_task(page("a", n)) for n in range(5)]
    await asyncio.sleep(0)  # run a's pages queue first
    late = [asyncio.create_task(page("b", n)) for n in range(2)]
    await asyncio.gather(*busy, *late)
    assert order == ["a0", "a1", "b0", "a2", "b1", "a3", "a4"]
    assert gate.free == 1


async def test_a_cancelled_waiter_gives_its_turn_away() -> None:
    gate = FairGate(slots=1)
    await gate.acquire("a")
    waiter = asyncio.create_task(gate.acquire("b"))
    other = asyncio.create_task(gate.acquire("c"))
    await asyncio.sleep(0)
    waiter.cancel()
    await asyncio.sleep(0)
    gate.release()
    await other
    gate.release()
    assert gate.free == 1
