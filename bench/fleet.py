"""Calls per second of ``runvil mcp --http``: one replica alone, one replica with its state in
Redis, and three replicas with their state in Redis behind the tests' round-robin balancer.

Each configuration gets the same load: ``--clients`` MCP sessions (handshake era, the one the
shared state is for), each calling ``web_fetch`` on a small page of the fake site over and over
for ``--seconds``, all at once. The difference between the first two rows is what Redis costs a
call (checking the session, the continuation store's script); the third shows what more
replicas buy on this machine. A real ``redis-server`` is started on a free loopback port.

Usage (never part of the test suite)::

    python -m bench.fleet --clients 8 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import trustme
from mcp import Client
from tests.faces_helpers import child_env, site_app, start_mcp_http, stop, write_seam
from tests.fixtures.internet import Canary, FakeInternet
from tests.fixtures.redis_server import RedisServer
from tests.fleet.balancer import Balancer


async def hammer(url: str, clients: int, seconds: float) -> tuple[int, float]:
    """Calls answered by ``clients`` sessions in ``seconds``, and the mean latency (ms)."""
    done = 0
    latency = 0.0

    async def one() -> None:
        nonlocal done, latency
        async with Client(url, mode="legacy", cache=None) as client:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                started = time.monotonic()
                result = await client.call_tool(
                    "web_fetch", {"url": "https://example.com/hello.txt"}
                )
                assert not result.is_error, result
                latency += time.monotonic() - started
                done += 1

    await asyncio.gather(*(one() for _ in range(clients)))
    return done, latency / max(done, 1) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        canary = Canary()
        await canary.start()
        internet = FakeInternet(trustme.CA(), canary)
        await internet.serve(site_app())
        seam = write_seam(internet, directory)
        (directory / "redis").mkdir()
        redis = RedisServer(directory / "redis")
        redis.start()
        rows = []
        try:
            for label, replicas, shared in (
                ("1 replica, state in the process", 1, False),
                ("1 replica, state in Redis", 1, True),
                ("3 replicas behind the balancer, state in Redis", 3, True),
            ):
                extra = {"RUNVIL_MCP_STATE": redis.url} if shared else {}
                env = child_env(seam, directory, **extra)
                started = await asyncio.gather(*(start_mcp_http(env) for _ in range(replicas)))
                balancer = None
                try:
                    url = started[0][1]
                    if replicas > 1:
                        balancer = Balancer([
                            u.removeprefix("http://").removesuffix("/mcp") for _, u in started
                        ])
                        url = await balancer.start() + "/mcp"
                    await hammer(url, 2, 1.0)  # warm up
                    before = redis_work(redis.url)
                    calls, mean = await hammer(url, args.clients, args.seconds)
                    after = redis_work(redis.url)
                finally:
                    if balancer is not None:
                        await balancer.stop()
                    await asyncio.gather(*(stop(proc) for proc, _ in started))
                commands = (after[0] - before[0]) / max(calls, 1)
                micros = (after[1] - before[1]) / max(calls, 1)
                rows.append((label, calls / args.seconds, mean, commands, micros))
            down = await redis_down(seam, directory, redis)
        finally:
            redis.stop()
            await internet.close()
            await canary.stop()
    print("| with Redis killed | first call | mean of the next 20 | first call after Redis "
          "returns |")
    print("| --- | --- | --- | --- |")
    print(f"| 1 replica, a session's fetch | {down[0]:.1f} ms | {down[1]:.1f} ms | "
          f"{down[2]:.0f} ms |")
    head = f"configuration ({args.clients} sessions, {args.seconds:g} s)"
    print(f"| {head} | calls/s | mean latency | Redis commands per call | Redis time per call |")
    print("| --- | --- | --- | --- | --- |")
    for label, rate, mean, commands, micros in rows:
        print(f"| {label} | {rate:.0f} | {mean:.1f} ms | {commands:.1f} | {micros:.0f} µs |")


async def redis_down(seam: Path, directory: Path, redis: RedisServer) -> tuple[float, ...]:
    """Milliseconds a session's call takes to answer the soft state-down text with Redis
    killed (the first, and the mean of the next 20), and from Redis's restart to the first
    call answered normally again."""
    from runvil._faces.fleet_state import STATE_DOWN

    proc, url = await start_mcp_http(child_env(seam, directory, RUNVIL_MCP_STATE=redis.url))
    args = {"url": "https://example.com/hello.txt"}
    try:
        async with Client(url, mode="legacy", cache=None) as client:
            await client.call_tool("web_fetch", args)
            redis.stop()
            times = []
            for _ in range(21):
                started = time.monotonic()
                result = await client.call_tool("web_fetch", args)
                times.append((time.monotonic() - started) * 1000)
                assert result.content[0].text == STATE_DOWN, result  # type: ignore[union-attr]
            redis.start()
            back = time.monotonic()
        while True:
            try:
                async with Client(url, mode="legacy", cache=None) as client:
                    result = await client.call_tool("web_fetch", args)
                if not result.is_error:
                    break
            except Exception:
                await asyncio.sleep(0.05)
        recovered = (time.monotonic() - back) * 1000
    finally:
        await stop(proc)
    return times[0], sum(times[1:]) / 20, recovered


def redis_work(url: str) -> tuple[int, int]:
    """Commands Redis has run and the microseconds it spent on them, so far."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    calls = sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
    usec = sum(int(v["usec"]) for k, v in stats.items() if k != "cmdstat_info")
    return calls, usec


if __name__ == "__main__":
    asyncio.run(main())
