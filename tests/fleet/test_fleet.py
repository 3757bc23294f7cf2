"""Three ``runvil mcp --http --state redis://...`` replicas behind a round-robin balancer, with a
real ``redis-server``: a client needs no session affinity, a replica can go away between two
requests, sessions stay apart, Redis can go away and come back, and the operator's endpoints
answer."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from mcp import Client

from runvil import unwrap
from runvil._faces.fleet_state import STATE_DOWN
from tests.faces_helpers import (
    child_env,
    gateway_app,
    hello_text,
    serve_gateway,
    site_app,
    start_mcp_http,
    stop,
    write_seam,
)
from tests.fixtures.internet import FakeInternet
from tests.fixtures.redis_server import RedisServer
from tests.fleet.balancer import Balancer

ENVELOPED = re.compile(r"<untrusted_input_([0-9a-f]{16})>\n(.*)\n</untrusted_input_\1>", re.S)
SEARCH_TEXT = (
    '{"query":"rust","results":[{"title":"Result for rust","url":"https://e.com/r",'
    '"description":"D"}]}'
)
#: A page three reads long at the default 40,000 characters a read.
LONG = "".join(f"line {i:06d} of the long page\n" for i in range(4000))


@dataclass
class Fleet:
    replicas: list[asyncio.subprocess.Process]
    urls: list[str]
    balancer: Balancer
    env: dict[str, str]
    hits: dict[str, int]
    searches: list[float]
    """When each search reached the vendor (the loop's clock)."""
    throttle: list[str]
    """``Retry-After`` values the vendor answers 429 with, one per search, before answering."""

    @property
    def mcp(self) -> str:
        return self.balancer.url + "/mcp"


def counted_gateway(arrivals: list[float], throttle: list[str]) -> web.Application:
    """The Gateway, noting when each search arrives, and answering 429 while told to."""

    @web.middleware
    async def note(request: web.Request, handler: object) -> web.StreamResponse:
        arrivals.append(asyncio.get_running_loop().time())
        if throttle:
            return web.Response(
                status=429, text='{"error":"slow down"}', headers={"Retry-After": throttle.pop(0)}
            )
        return await handler(request)  # type: ignore[operator,no-any-return]

    app = gateway_app()
    app.middlewares.append(note)
    return app


def site_with_long_page(hits: dict[str, int]) -> web.Application:
    app = site_app()

    async def long(request: web.Request) -> web.Response:
        hits["long"] = hits.get("long", 0) + 1
        return web.Response(text=LONG, content_type="text/plain")

    async def robots(request: web.Request) -> web.Response:
        hits["robots"] = hits.get("robots", 0) + 1
        return web.Response(text="User-agent: *\nDisallow: /private\n", content_type="text/plain")

    app.router.add_get("/long.txt", long)
    app.router.add_get("/robots.txt", robots)
    return app


@pytest.fixture
async def fleet(
    request: pytest.FixtureRequest, internet: FakeInternet, tmp_path: Path,
    redis_server: RedisServer,
) -> AsyncIterator[Fleet]:
    """Three replicas (or as many as the test's parameter says) behind the balancer."""
    size, extra = getattr(request, "param", (3, {}))
    hits: dict[str, int] = {}
    arrivals: list[float] = []
    throttle: list[str] = []
    await internet.serve(site_with_long_page(hits))
    await serve_gateway(internet, counted_gateway(arrivals, throttle))
    seam = write_seam(internet, tmp_path, {"timeout": 3.0, "connect_timeout": 1.0})
    env = child_env(seam, tmp_path, RUNVIL_MCP_STATE=redis_server.url, **extra)
    started = await asyncio.gather(*(start_mcp_http(env) for _ in range(size)))
    replicas = [proc for proc, _ in started]
    urls = [url for _, url in started]
    balancer = Balancer([url.removeprefix("http://").removesuffix("/mcp") for url in urls])
    await balancer.start()
    try:
        yield Fleet(replicas, urls, balancer, env, hits, arrivals, throttle)
    finally:
        await balancer.stop()
        await asyncio.gather(*(stop(proc) for proc in replicas))


def nonce_and_text(result: object) -> tuple[str, str]:
    match = ENVELOPED.fullmatch(result.content[0].text)  # type: ignore[attr-defined]
    assert match is not None, result
    return match.group(1), match.group(2)


def long_part(start: int, end: int, *, last: bool = False) -> str:
    header = "url: https://example.com/long.txt\n"
    if last:
        header += "truncated: false\n"
    else:
        header += f"truncated: true\nnext_start_index: {end}\n"
    return header + "extraction: plain\n\n" + LONG[start:end]


async def read_to_the_end(client: Client) -> tuple[set[str], list[str]]:
    nonces, texts = set(), []
    start = 0
    while True:
        args: dict[str, object] = {"url": "https://example.com/long.txt"}
        if start:
            args["start_index"] = start
        nonce, text = nonce_and_text(await client.call_tool("web_fetch", args))
        nonces.add(nonce)
        texts.append(text)
        found = re.search(r"^next_start_index: (\d+)$", text, re.M)
        if found is None:
            return nonces, texts
        start = int(found.group(1))


async def test_a_whole_conversation_needs_no_affinity(fleet: Fleet) -> None:
    async with Client(fleet.mcp, mode="legacy", cache=None) as client:
        tools = (await client.list_tools()).tools
        hello = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
        nonces, texts = await read_to_the_end(client)
        found = await client.call_tool("web_search", {"query": "rust"})
    assert [t.name for t in tools] == ["web_fetch", "web_search"]
    assert "start_index" in tools[0].input_schema["properties"]
    first, hello_body = nonce_and_text(hello)
    last, search_body = nonce_and_text(found)
    assert (hello_body, search_body) == (hello_text(), SEARCH_TEXT)
    assert nonces == {first} and last == first, "one nonce for the session on every replica"
    assert texts == [
        long_part(0, 40_000), long_part(40_000, 80_000),
        long_part(80_000, len(LONG), last=True),
    ]
    assert fleet.hits["long"] == 1, "reading on came from the shared store, not a new fetch"
    assert len(fleet.balancer.served) == 3, "every replica served part of the conversation"
    await sessions_stay_apart(fleet)
    await health_readiness_and_metrics(fleet)


async def test_a_replica_killed_mid_conversation_loses_nothing(fleet: Fleet) -> None:
    async with Client(fleet.mcp, mode="legacy", cache=None) as client:
        first = await client.call_tool("web_fetch", {"url": "https://example.com/long.txt"})
        fleet.replicas[0].kill()
        await fleet.replicas[0].wait()
        fleet.replicas[1].send_signal(signal.SIGKILL)
        await fleet.replicas[1].wait()
        nonces, texts = await read_to_the_end(client)
    nonce, text = nonce_and_text(first)
    assert text == long_part(0, 40_000)
    assert nonces == {nonce}
    assert texts[1:] == [long_part(40_000, 80_000), long_part(80_000, len(LONG), last=True)]
    assert fleet.hits["long"] == 1


async def sessions_stay_apart(fleet: Fleet) -> None:
    """Another session reading on in the page the first one read fetches it itself."""
    async with Client(fleet.mcp, mode="legacy", cache=None) as a:
        one = await a.call_tool("web_fetch", {"url": "https://example.com/long.txt"})
        async with Client(fleet.mcp, mode="legacy", cache=None) as b:
            other = await b.call_tool(
                "web_fetch", {"url": "https://example.com/long.txt", "start_index": 40_000}
            )
    mine, _ = nonce_and_text(one)
    theirs, text = nonce_and_text(other)
    assert mine != theirs
    assert text == long_part(40_000, 80_000)
    assert fleet.hits["long"] == 3, "the other session fetched the page itself"


async def test_redis_going_away_and_coming_back(fleet: Fleet, redis_server: RedisServer) -> None:
    replica = fleet.urls[0].removesuffix("/mcp")
    async with httpx.AsyncClient() as http:
        assert (await http.get(replica + "/readyz")).status_code == 200
        async with Client(fleet.mcp, mode="legacy", cache=None) as client:
            await client.call_tool("web_fetch", {"url": "https://example.com/long.txt"})
            redis_server.stop()
            down = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
            read_on = await client.call_tool(
                "web_fetch", {"url": "https://example.com/long.txt", "start_index": 40_000}
            )
            async with Client(fleet.mcp, cache=None) as sessionless:  # the 2026-07-28 era
                alone = await sessionless.call_tool(
                    "web_fetch", {"url": "https://example.com/long.txt", "start_index": 40_000}
                )
            ready = await http.get(replica + "/readyz")
            # A soft answer, runvil's own text: the model reads it and tries again.
            assert [(r.is_error, r.content[0].text) for r in (down, read_on, alone)] == [
                (False, STATE_DOWN), (False, STATE_DOWN), (False, STATE_DOWN),
            ]
            assert STATE_DOWN == (
                "runvil mcp: the shared state (Redis) is unreachable; this call needs it; "
                "try again shortly"
            )
            assert (ready.status_code, ready.text) == (
                503, "not ready: the shared state (Redis) is unreachable\n",
            )
            assert (await http.get(replica + "/healthz")).status_code == 200
            redis_server.start()
            await asyncio.sleep(1.1)  # the pause after a failure (RETRY_AFTER) runs out
            assert (await http.get(replica + "/readyz")).text == "ready\n"
            scraped = [(await http.get(url.removesuffix("/mcp") + "/metrics")).text
                       for url in fleet.urls]
        state_down = sum(
            _sample(text, 'runvil_tool_calls_total{outcome="state_down",tool="web_fetch"}')
            for text in scraped
        )
        assert state_down == 3
        # Redis came back empty (it saved nothing): a new session works on every replica.
        async with Client(fleet.mcp, mode="legacy", cache=None) as client:
            results = [
                await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
                for _ in range(3)
            ]
    assert [nonce_and_text(r)[1] for r in results] == [hello_text()] * 3


async def health_readiness_and_metrics(fleet: Fleet) -> None:
    """The operator's endpoints, and the calls counted by tool and outcome."""
    async with Client(fleet.mcp, mode="legacy", cache=None) as client:
        for _ in range(3):
            await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
        await client.call_tool("web_fetch", {"url": "https://user:pw@example.com/"})
    async with httpx.AsyncClient() as http:
        health = await http.get(fleet.balancer.url + "/healthz")
        ready = await http.get(fleet.balancer.url + "/readyz")
        scraped = [(await http.get(url.removesuffix("/mcp") + "/metrics")).text
                   for url in fleet.urls]
    assert (health.status_code, health.text) == (200, "ok\n")
    assert (ready.status_code, ready.text) == (200, "ready\n")
    ok = sum(_sample(text, 'runvil_tool_calls_total{outcome="ok",tool="web_fetch"}')
             for text in scraped)
    error = sum(_sample(text, 'runvil_tool_calls_total{outcome="error",tool="web_fetch"}')
                for text in scraped)
    assert (ok, error) == (1 + 3 + 2 + 3, 1), "the fetches of the whole conversation"
    for text in scraped:
        assert "runvil_tool_call_seconds_bucket" in text
        assert "runvil_render_gate_bytes_in_use 0.0" in text
        assert "runvil_pdf_queue 0.0" in text
        assert "runvil_redis_errors_total 0.0" in text


def _sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Mcp-Protocol-Version": "2025-11-25",
}


def rpc(method: str, params: dict[str, object], ident: int = 1) -> str:
    import json

    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})


@pytest.mark.parametrize("fleet", [(1, {})], indirect=True)
async def test_sigterm_lets_the_call_in_flight_finish(fleet: Fleet) -> None:
    proc, url = fleet.replicas[0], fleet.urls[0]
    async with httpx.AsyncClient(timeout=30) as http:
        opened = await http.post(url, headers=HEADERS, content=rpc("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }))
        session = opened.headers["mcp-session-id"]
        call = asyncio.ensure_future(http.post(
            url, headers={**HEADERS, "Mcp-Session-Id": session},
            content=rpc("tools/call", {
                "name": "web_fetch", "arguments": {"url": "https://example.com/slow"},
            }, 2),
        ))
        await asyncio.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        answer = await call
    code = await asyncio.wait_for(proc.wait(), 30)
    result = answer.json()["result"]
    assert result["isError"] is False
    # The answer of a fetch whose 3-second deadline ran out in the body: the call ran to its
    # own end after the signal, then the replica exited.
    assert unwrap(result["content"][0]["text"]) == (
        "the response body from https://example.com/slow could not be read; try again or use "
        "a different URL"
    )
    assert code == -signal.SIGTERM  # uvicorn ends by raising the signal it caught


@pytest.mark.parametrize("fleet", [(3, {"RUNVIL_SEARCH_RATE": "2"})], indirect=True)
async def test_the_search_rate_and_memo_hold_for_the_fleet(fleet: Fleet) -> None:
    async with Client(fleet.mcp, mode="legacy", cache=None) as client:
        found = await asyncio.gather(*(
            client.call_tool("web_search", {"query": f"q{i}"}) for i in range(6)
        ))
    async with Client(fleet.mcp, mode="legacy", cache=None) as other:
        again = [await other.call_tool("web_search", {"query": "q0"}) for _ in range(3)]
    assert all(not r.is_error for r in found + again)
    assert {nonce_and_text(r)[1] for r in again} == {nonce_and_text(found[0])[1]}
    assert len(fleet.searches) == 6, "the repeated search came from the shared memo"
    # Two a second for the three replicas together: six searches at once are spread over
    # at least 2.5 seconds (2.0 allowing for the first one's own delay), where without the
    # rate they would all arrive at once.
    assert fleet.searches[-1] - fleet.searches[0] >= 2.0


@pytest.mark.parametrize("fleet", [(2, {
    "RUNVIL_FETCH_ROBOTS": "on", "RUNVIL_MCP_SESSIONS_PER_PEER": "2",
    "RUNVIL_MCP_MAX_SESSIONS": "3",
})], indirect=True)
async def test_robots_txt_session_limits_and_a_vendors_pause_hold_for_the_fleet(
    fleet: Fleet, redis_server: RedisServer
) -> None:
    """One fleet of two replicas (starting one costs seconds) for three fleet-wide rules."""
    await a_session_reads_robots_txt_once(fleet)
    await the_session_limits_stay_fair(fleet)
    await a_vendors_retry_after_holds(fleet, redis_server)


async def a_session_reads_robots_txt_once(fleet: Fleet) -> None:
    async with Client(fleet.mcp, mode="legacy", cache=None) as client:
        pages = [
            await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
            for _ in range(3)
        ]
        refused = await client.call_tool("web_fetch", {"url": "https://example.com/private/x"})
        ours = fleet.hits["robots"]
    async with Client(fleet.mcp, mode="legacy", cache=None) as other:
        theirs = await other.call_tool("web_fetch", {"url": "https://example.com/private/y"})
    assert [nonce_and_text(p)[1] for p in pages] == [hello_text()] * 3
    assert [unwrap(r.content[0].text) for r in (refused, theirs)] == [
        "https://example.com/private/x is disallowed by the site's robots.txt",
        "https://example.com/private/y is disallowed by the site's robots.txt",
    ]
    assert len(fleet.balancer.served) == 2, "the session's calls landed on both replicas"
    assert ours == 1, "the session's rules came from the shared store on the other replicas"
    assert fleet.hits["robots"] == 2, "another session reads robots.txt itself"


async def a_vendors_retry_after_holds(fleet: Fleet, redis_server: RedisServer) -> None:
    import redis.asyncio

    fleet.throttle.append("2")
    shared = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        async with Client(fleet.mcp, mode="legacy", cache=None) as client:
            told = asyncio.ensure_future(client.call_tool("web_search", {"query": "q0"}))

            async def paused() -> None:
                while await shared.pttl("runvil:pause:gateway") <= 0:
                    await asyncio.sleep(0.01)

            await asyncio.wait_for(paused(), 10)
            other = await client.call_tool("web_search", {"query": "q1"})  # the next replica
            first = await told
    finally:
        await shared.aclose()
    assert [r.is_error for r in (first, other)] == [False, False]
    assert len(fleet.searches) == 3, "the 429, its retry, and the other replica's search"
    # The vendor asked for 2 seconds: the replica it told retried after them, and the other
    # replica, whose search began meanwhile, sent nothing before they were over.
    assert min(fleet.searches[1:]) - fleet.searches[0] >= 1.9


async def the_session_limits_stay_fair(fleet: Fleet) -> None:
    """The session limits (2 per peer, 3 in all) for the fleet. Two clients, told apart by the
    address the balancer forwards (uvicorn trusts a loopback proxy's X-Forwarded-For): one
    opening sessions without end only ends its own, and past the total the least recently
    active of all goes, whichever replica it lived on."""

    async with httpx.AsyncClient(timeout=30) as http:

        async def open_session(peer: str) -> str:
            answer = await http.post(fleet.mcp, headers={**HEADERS, "X-Forwarded-For": peer},
                                     content=rpc("initialize", {
                                         "protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "t", "version": "1"},
                                     }))
            assert answer.status_code == 200, answer.text
            return answer.headers["mcp-session-id"]

        async def ping(session: str) -> int:
            answer = await http.post(fleet.mcp, content=rpc("ping", {}),
                                     headers={**HEADERS, "Mcp-Session-Id": session})
            return answer.status_code

        a1 = await open_session("198.51.100.1")
        a2 = await open_session("198.51.100.1")
        a3 = await open_session("198.51.100.1")  # past its 2: its own least recent, a1, ends
        after_a = [await ping(s) for s in (a1, a2, a3)]
        b1 = await open_session("198.51.100.2")
        assert await ping(a2) == 200  # a2 is now more recent than a3 and b1
        b2 = await open_session("198.51.100.2")  # past the total 3: the stalest of all, a3
        after_b = [await ping(s) for s in (a2, a3, b1, b2)]
    assert after_a == [404, 200, 200]
    assert after_b == [200, 404, 200, 200]
    assert len(fleet.balancer.served) == 2
