"""HTTP MCP sessions under a flood: bounded per peer and in total, the least recently active
ended to make room (never a newcomer refused), idle ones ended on the table's clock, and an
ended session's run ended with it (its calls cancelled, its pages released).

The whole HTTP stack runs in process (the guard, the session table, the SDK's app with its
session manager); peers are told apart by the ASGI scope's client address; the table's clock is
the test's (no sleeps)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from runvil import Host
from runvil._faces.config import ConfigError, describe, load_config
from runvil._faces.mcp import HttpStack, WebToolServer, session_limits
from runvil._faces.mcp_http import Audience
from runvil._faces.mcp_sessions import (
    IDLE_TIMEOUT,
    MAX_SESSIONS,
    SESSIONS_PER_PEER,
    SessionLimits,
    peer_of,
)
from runvil.web._fetch import continuation, reading
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.runstore import RunStore
from tests.fixtures.internet import FakeInternet

VERSION = "2025-06-18"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Host": "127.0.0.1:9",
}


def message(method: str, params: dict[str, Any] | None = None, id: int | None = 1) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        body["id"] = id
    if params is not None:
        body["params"] = params
    return json.dumps(body)


INITIALIZE = message("initialize", {
    "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"},
}, id=0)


class NoSearch:
    name = "none-used"
    endpoints: tuple[str, ...] = ()

    async def search(self, request: Any) -> list[Any]:
        raise AssertionError("no search in these tests")


@dataclass
class Served:
    server: WebToolServer
    stack: HttpStack
    now: list[float]

    async def post(
        self, peer: str, body: str, session: str | None = None
    ) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.stack.app, client=(peer, 40000))
        headers = dict(HEADERS)
        if session is not None:
            headers.update({"Mcp-Session-Id": session, "Mcp-Protocol-Version": VERSION})
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as c:
            return await c.post("/mcp", content=body, headers=headers)

    async def open(self, peer: str) -> str:
        """Initialize a session from ``peer`` one clock tick later; its id."""
        self.now[0] += 1
        response = await self.post(peer, INITIALIZE)
        assert response.status_code == 200, response.text
        session = response.headers["mcp-session-id"]
        initialized = await self.post(
            peer, message("notifications/initialized", id=None), session
        )
        assert initialized.status_code == 202
        return session

    async def ping(self, peer: str, session: str) -> int:
        """A request of ``session`` one clock tick later: its HTTP status."""
        self.now[0] += 1
        return (await self.post(peer, message("ping"), session)).status_code

    @property
    def sessions(self) -> list[str]:
        return self.stack.table.session_ids()


SMALL = SessionLimits(total=6, per_peer=3, idle=60.0)


@asynccontextmanager
async def serving(
    internet: FakeInternet, limits: SessionLimits = SMALL
) -> AsyncIterator[Served]:
    """The stack, served in the test's own task (the SDK's session manager must be entered and
    left in one task, so this cannot be a fixture)."""
    host = Host(
        network=internet.network(), fetch_policy=FetchPolicy(continuation=True, timeout=30),
        search_provider=NoSearch(),
    )
    async with host:
        server = WebToolServer(host, session_limits=limits)
        now = [0.0]
        stack = server.http_stack(
            "127.0.0.1", Audience.for_bind("127.0.0.1", "127.0.0.1", 9), clock=lambda: now[0]
        )
        async with stack.sdk.router.lifespan_context(stack.sdk):
            yield Served(server, stack, now)
            await stack.table.end_all()
        await server.aclose()


def test_the_defaults() -> None:
    assert (MAX_SESSIONS, SESSIONS_PER_PEER, IDLE_TIMEOUT) == (1024, 256, 600.0)
    assert SessionLimits() == SessionLimits(total=1024, per_peer=256, idle=600.0)
    for bad in ({"total": 0}, {"per_peer": 0}, {"idle": 0.0}, {"idle": float("inf")}):
        with pytest.raises(ValueError):
            SessionLimits(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("client", "peer"),
    [
        (("203.0.113.7", 5), "203.0.113.7"),
        (("2001:db8:1:2:aaaa::1", 5), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:bbbb::9", 5), "2001:db8:1:2::/64"),
        (("::ffff:203.0.113.7", 5), "203.0.113.7"),
        (None, ""),
    ],
)
def test_a_peer_is_its_address_and_an_ipv6_host_its_64(client: Any, peer: str) -> None:
    assert peer_of({"type": "http", "client": client}) == peer


async def test_one_peer_keeps_at_most_its_bound_and_loses_its_least_recently_active(
    internet: FakeInternet,
) -> None:
    async with serving(internet) as small:
        a = "198.51.100.1"
        first, second, third = [await small.open(a) for _ in range(3)]
        assert await small.ping(a, first) == 200  # now `second` is the least recently active
        fourth = await small.open(a)
        assert small.stack.table.sessions_of(a) == [third, first, fourth]
        assert await small.ping(a, second) == 404  # ended, as a client DELETE would have
        assert await small.ping(a, first) == 200
        for _ in range(20):  # a flood of initializes never closed
            await small.open(a)
            assert len(small.stack.table.sessions_of(a)) == 3
        newcomer = await small.open("198.51.100.2")  # another peer is served at once
        assert await small.ping("198.51.100.2", newcomer) == 200
        assert len(small.sessions) == 4
        assert small.stack.table.ended == 21


async def test_many_peers_keep_the_total_bound_and_the_least_recently_active_goes(
    internet: FakeInternet,
) -> None:
    async with serving(internet) as small:
        peers = [f"198.51.100.{i}" for i in range(10, 16)]
        opened = [await small.open(peer) for peer in peers]
        assert await small.ping(peers[0], opened[0]) == 200  # opened[1] is now the oldest activity
        newcomer = await small.open("198.51.100.99")
        assert small.sessions == [*opened[2:], opened[0], newcomer]
        assert await small.ping(peers[1], opened[1]) == 404
        for i in range(30):  # a flood from thirty more addresses
            last = await small.open(f"203.0.113.{i}")
            assert len(small.sessions) == 6
        assert await small.ping("203.0.113.29", last) == 200
        assert small.sessions[-1] == last


async def test_idle_sessions_are_ended_on_the_tables_clock(internet: FakeInternet) -> None:
    async with serving(internet) as small:
        a = "198.51.100.1"
        early = await small.open(a)  # t = 1
        small.now[0] = 30.0
        late = await small.open(a)  # t = 31
        small.now[0] = 60.0
        assert await small.stack.table.sweep() == 0  # idle for 59 s: not yet
        small.now[0] = 61.0
        assert await small.stack.table.sweep() == 1
        assert small.sessions == [late]
        small.now[0] = 90.0
        assert await small.ping(a, early) == 404
        assert await small.ping(a, late) == 200  # at 92: active again
        small.now[0] = 151.0
        assert await small.stack.table.sweep() == 0
        small.now[0] = 152.0
        assert await small.stack.table.sweep() == 1
        assert small.sessions == []


async def test_a_new_session_sweeps_the_idle_ones_before_evicting_anyone(
    internet: FakeInternet,
) -> None:
    async with serving(internet) as small:
        a = "198.51.100.1"
        stale = await small.open(a)
        small.now[0] = 100.0
        kept = [await small.open(a) for _ in range(2)]
        newest = await small.open(a)  # the peer's bound is 3: the stale one goes, not `kept`
        assert small.stack.table.sessions_of(a) == [*kept, newest]
        assert await small.ping(a, stale) == 404


async def test_ending_a_session_ends_its_run_cancels_its_call_and_releases_its_pages(
    internet: FakeInternet, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: RunStore[continuation.Held] = RunStore(budget=10**8, max_entries=100, max_age=600)
    monkeypatch.setattr(reading, "PAGES", store)
    started, closed = asyncio.Event(), asyncio.Event()

    async def hang(request: web.Request) -> web.Response:
        """Never answers; notes when the fetch's connection is closed from the other end."""
        started.set()
        transport = request.transport
        while transport is not None and not transport.is_closing():
            await asyncio.sleep(0.01)
        closed.set()
        return web.Response(text="too late")

    async def long(request: web.Request) -> web.Response:
        return web.Response(text="x" * 100_000, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/hang", hang)
    app.router.add_get("/long", long)
    await internet.serve(app)
    async with serving(internet, SessionLimits(total=10, per_peer=1, idle=60.0)) as served:
        a = "198.51.100.1"
        busy = await served.open(a)
        read = await served.post(a, message("tools/call", {
            "name": "web_fetch", "arguments": {"url": "https://example.com/long"}}), busy)
        assert "next_start_index: 40000" in read.text
        run = served.server._session_runs[busy]
        assert store.run_size(run.scope) > 0
        call = asyncio.ensure_future(served.post(a, message("tools/call", {
            "name": "web_fetch", "arguments": {"url": "https://example.com/hang"}}, id=2), busy))
        await asyncio.wait_for(started.wait(), 10)
        assert run.inflight == 1
        newcomer = await served.open(a)  # the peer's bound is 1: the busy session is ended
        assert served.sessions == [newcomer]
        assert busy not in served.server._session_runs
        assert run.closed and run.inflight == 0
        assert (store.size, len(store), store.prints) == (0, 0, 0)
        await asyncio.wait_for(closed.wait(), 10)  # the upstream connection was closed
        await asyncio.wait_for(call, 10)  # the client's request ended too
        assert await served.ping(a, busy) == 404
        assert await served.ping(a, newcomer) == 200


async def test_a_client_delete_ends_the_run_and_leaves_the_table(internet: FakeInternet) -> None:
    async with serving(internet) as small:
        a = "198.51.100.1"
        session = await small.open(a)
        refused = await small.post(a, message("tools/call", {
            "name": "web_fetch", "arguments": {"url": "https://user@example.com/"}}), session)
        assert "url must not contain userinfo" in refused.text  # no network; the run exists
        run = small.server._session_runs[session]
        transport = httpx.ASGITransport(app=small.stack.app, client=(a, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as c:
            gone = await c.delete("/mcp", headers={
                **HEADERS, "Mcp-Session-Id": session, "Mcp-Protocol-Version": VERSION})
        assert gone.status_code == 200
        assert small.sessions == []
        assert small.stack.table.ended == 0  # the client ended it, not the table
        assert run.closed and session not in small.server._session_runs


async def test_a_session_the_sdk_ended_ends_its_run_at_its_next_request(
    internet: FakeInternet,
) -> None:
    """A session the SDK ended without the table (a crash of its loop) answers 404: the table
    forgets it and ends its run then. The SDK's own idle limit is off; the table's is the one."""
    async with serving(internet) as small:
        a = "198.51.100.1"
        session = await small.open(a)
        await small.post(a, message("tools/call", {
            "name": "web_fetch", "arguments": {"url": "https://user@example.com/"}}), session)
        run = small.server._session_runs[session]
        manager = small.server.server._session_manager
        assert manager.session_idle_timeout is None
        await manager._server_instances[session].terminate()
        assert await small.ping(a, session) == 404
        assert run.closed and session not in small.server._session_runs
        assert small.sessions == []


async def test_sessionless_requests_open_nothing(internet: FakeInternet) -> None:
    async with serving(internet) as small:
        transport = httpx.ASGITransport(app=small.stack.app, client=("198.51.100.1", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as c:
            for _ in range(5):
                await c.post("/mcp", content=message("tools/list"), headers={
                    **HEADERS, "Mcp-Protocol-Version": "2026-07-28"})
        assert small.sessions == []


# -- the operator's settings -------------------------------------------------------------------


def test_the_limits_come_from_the_file_the_environment_and_flags(tmp_path: Path) -> None:
    (tmp_path / "runvil.toml").write_text(
        "[mcp]\nmax_sessions = 64\nsession_idle_timeout = 90.5\n", encoding="utf-8"
    )
    env = {"HOME": str(tmp_path), "RUNVIL_MCP_SESSIONS_PER_PEER": "4"}
    config = load_config(env=env, cwd=tmp_path)
    assert session_limits(config) == SessionLimits(total=64, per_peer=4, idle=90.5)
    assert describe(config)["mcp"] == {
        "max_sessions": 64, "sessions_per_peer": 4, "session_idle_timeout": 90.5,
    }
    flagged = load_config({"mcp_max_sessions": 8}, env=env, cwd=tmp_path)
    assert session_limits(flagged).total == 8
    assert session_limits(load_config(env={"HOME": str(tmp_path)})) == SessionLimits()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("RUNVIL_MCP_MAX_SESSIONS", "0",
         "RUNVIL_MCP_MAX_SESSIONS must be a whole number of sessions, 1 or more, not 0"),
        ("RUNVIL_MCP_SESSIONS_PER_PEER", "x",
         "RUNVIL_MCP_SESSIONS_PER_PEER must be a whole number of sessions, 1 or more, not 'x'"),
        ("RUNVIL_MCP_SESSION_IDLE_TIMEOUT", "0",
         "RUNVIL_MCP_SESSION_IDLE_TIMEOUT must be a number of seconds above 0, not '0'"),
        ("RUNVIL_MCP_SESSION_IDLE_TIMEOUT", "inf",
         "RUNVIL_MCP_SESSION_IDLE_TIMEOUT must be a number of seconds above 0, not 'inf'"),
    ],
)
def test_bad_limits_are_refused(tmp_path: Path, variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path), variable: value}, cwd=tmp_path)
    assert str(info.value) == message
