"""The streamable HTTP MCP transport's sessions: how many the server keeps, for whom, how long.

Every ``initialize`` of the handshake era opens a session, and the SDK keeps it (its transport,
its server task, and runvil's Host run with the pages it read) until the client deletes it or it
has been idle for the SDK's 30 minutes; past the SDK's 10,000 it refuses every newcomer with 503
``Too many open sessions``. A client that never closes what it opens could therefore hold the
server's memory and lock every other client out for half an hour. :class:`SessionTable`, in
front of the SDK's app, keeps the number bounded and never refuses a newcomer:

* **per peer**: at most :attr:`SessionLimits.per_peer` sessions opened from one client address
  (an IPv6 address counts by its /64, the block one host is given; an IPv4-mapped address as
  its IPv4 address). A peer's newcomer past that ends the peer's least recently active session;
* **in total**: at most :attr:`SessionLimits.total`. A newcomer past that ends the least
  recently active session of all;
* **idle**: a session with no request in flight for :attr:`SessionLimits.idle` seconds is
  ended (the table sweeps on every new session and on a timer).

"Least recently active" is the session whose last request began or ended longest ago; a session
with a request in flight (a call running, a GET stream open) is passed over while an idle one is
there to end instead, and is never ended for idleness.

Ending a session is what a client's own ``DELETE`` does: the table sends one to the SDK on the
session's behalf (so the SDK forgets it and its id answers 404 from then on, by the SDK's own
path), then ends its Host run (``end_run``): calls still in flight are cancelled and unwound,
and the pages and fingerprints the run kept are released, before the newcomer's answer goes
out. A client whose session was ended starts a new one on the 404, as the MCP specification asks.
A session its client deletes ends its run too, and one the SDK answers 404 for (it lost it on
its own) ends its run at that answer. The SDK's own idle limit is turned off
(:meth:`~runvil._faces.mcp.WebToolServer.http_stack`): it would end sessions without a word here.

Sessionless (2026-07-28 single-exchange) requests open no session and pass through untouched.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "IDLE_TIMEOUT",
    "MAX_SESSIONS",
    "SESSIONS_PER_PEER",
    "SessionLimits",
    "SessionTable",
    "peer_of",
]

#: Sessions the server keeps at once, over all clients: an agent keeps one (or a few) open, and
#: each costs about 40 KB of the SDK's state besides the pages its run keeps.
MAX_SESSIONS = 1024
#: Sessions one client address keeps at once. A server bound to loopback sees every local
#: client as one peer, so this is generous; an operator who serves many machines can lower it.
SESSIONS_PER_PEER = 256
#: Seconds without a request before a session is ended: the age of a page the session keeps
#: (ten minutes), so a session idle that long has nothing left to read on from.
IDLE_TIMEOUT = 600.0

logger = logging.getLogger("runvil.mcp")

_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"



def session_of(scope: Scope) -> tuple[bool, str | None]:
    """Whether a request keeps a session, and the one it names: ``(False, None)`` when it keeps
    none (not HTTP, or a protocol version without the handshake), else its ``mcp-session-id``
    (``None``: it opens one). The one reading both session tables (in-process and the fleet's)
    share."""
    if scope["type"] != "http":
        return False, None
    headers = Headers(scope=scope)
    version = headers.get(_VERSION_HEADER)
    if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return False, None
    session_id: str | None = headers.get(_SESSION_HEADER)
    return True, session_id


@dataclass(frozen=True)
class SessionLimits:
    """How many sessions the server keeps, per peer and in total, and for how long idle."""

    total: int = MAX_SESSIONS
    per_peer: int = SESSIONS_PER_PEER
    idle: float = IDLE_TIMEOUT

    def __post_init__(self) -> None:
        if self.total < 1 or self.per_peer < 1:
            raise ValueError("session limits are whole numbers, 1 or more")
        if not self.idle > 0 or self.idle == float("inf"):
            raise ValueError("the idle timeout is a positive number of seconds")


class _Session:
    __slots__ = ("id", "inflight", "last", "peer")

    def __init__(self, session_id: str, peer: str, now: float) -> None:
        self.id = session_id
        self.peer = peer
        self.last = now
        self.inflight = 0


def peer_of(scope: Scope) -> str:
    """The peer a request counts against: its client address, an IPv6 one by its /64."""
    client = scope.get("client")
    if not client:
        return ""
    host = str(client[0])
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class SessionTable:
    """ASGI middleware in front of the SDK's streamable HTTP app (see the module docstring).

    ``end_run(session_id)`` ends the Host run of a session the table ended; ``clock`` is the
    table's time (tests move it, no sleeps); ``path`` is where the SDK's app serves MCP.
    """

    def __init__(
        self,
        app: ASGIApp,
        limits: SessionLimits | None = None,
        *,
        end_run: Callable[[str], Awaitable[None]],
        clock: Callable[[], float] = time.monotonic,
        path: str = "/mcp",
    ) -> None:
        self.app = app
        self.limits = limits if limits is not None else SessionLimits()
        self.end_run = end_run
        self.clock = clock
        self.path = path
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        """Every session, least recently active first."""
        self._peers: dict[str, OrderedDict[str, _Session]] = {}
        """Each peer's sessions, least recently active first."""
        self.ended = 0
        """Sessions the table has ended (evicted or idle), for the operator's figures."""

    def __len__(self) -> int:
        return len(self._sessions)

    def sessions_of(self, peer: str) -> list[str]:
        """The ids of ``peer``'s sessions, least recently active first."""
        return list(self._peers.get(peer, ()))

    def session_ids(self) -> list[str]:
        """Every session id, least recently active first."""
        return list(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kept, session_id = session_of(scope)
        if not kept:
            await self.app(scope, receive, send)  # sessionless: nothing to keep
            return
        if session_id is None:
            await self._open(scope, receive, send)
            return
        session = self._sessions.get(session_id)
        if session is None:
            await self.app(scope, receive, send)  # unknown or ended: the SDK answers 404
            return
        self._touch(session, +1)
        status: list[int] = []
        try:
            await self.app(scope, receive, _watching(send, status))
        finally:
            self._touch(session, -1)
        ended = status and (
            status[0] == 404 or (scope.get("method") == "DELETE" and status[0] < 400)
        )
        if ended and self._forget(session_id):  # the client (or the SDK) ended it
            await self.end_run(session_id)

    async def sweep(self) -> int:
        """End every session idle for the limit; how many were ended."""
        horizon = self.clock() - self.limits.idle
        idle = []
        for session in self._sessions.values():
            if session.last > horizon:
                break  # the rest were active later
            if session.inflight == 0:
                idle.append(session.id)
        for session_id in idle:
            await self._end(session_id)
        return len(idle)

    async def sweep_forever(self) -> None:
        """Sweep on a timer (a tenth of the idle limit, between 1 and 60 seconds), until
        cancelled: idle sessions go even when no newcomer arrives."""
        period = min(max(self.limits.idle / 10, 1.0), 60.0)
        while True:
            await asyncio.sleep(period)
            try:
                await self.sweep()
            except Exception:  # one failed end must not stop every later sweep
                logger.exception("runvil mcp: ending idle sessions failed")

    async def end_all(self) -> None:
        """End every session (the server is shutting down)."""
        for session_id in list(self._sessions):
            await self._end(session_id)

    # -- opening -------------------------------------------------------------------------------

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: the SDK opens a session if it is an ``initialize``
        it accepts. The table counts it once the answer names the new session, and makes room
        then (a request that opens nothing never costs anyone their session)."""
        peer = peer_of(scope)
        opened: list[_Session] = []

        async def send_and_count(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status", 500) < 400:
                new_id = Headers(raw=message.get("headers", [])).get(_SESSION_HEADER)
                if new_id and new_id not in self._sessions:
                    opened.append(self._admit(new_id, peer))
                    await self._make_room(opened[0])
            await send(message)

        try:
            await self.app(scope, receive, send_and_count)
        finally:
            if opened:
                self._touch(opened[0], -1)

    def _admit(self, session_id: str, peer: str) -> _Session:
        session = _Session(session_id, peer, self.clock())
        session.inflight = 1  # its opening request
        self._sessions[session_id] = session
        self._peers.setdefault(peer, OrderedDict())[session_id] = session
        return session

    async def _make_room(self, newcomer: _Session) -> None:
        """Bring the table back within its limits after ``newcomer``: idle sessions first, then
        the peer's least recently active, then the least recently active of all."""
        await self.sweep()
        own = self._peers.get(newcomer.peer, OrderedDict())
        while len(own) > self.limits.per_peer:
            await self._end(_least_recent(own, newcomer))
        while len(self._sessions) > self.limits.total:
            await self._end(_least_recent(self._sessions, newcomer))

    # -- bookkeeping ---------------------------------------------------------------------------

    def _touch(self, session: _Session, step: int) -> None:
        """A request of ``session`` began (+1) or ended (-1): it is the most recently active."""
        session.inflight += step
        session.last = self.clock()
        if session.id in self._sessions:
            self._sessions.move_to_end(session.id)
            peer = self._peers.get(session.peer)
            if peer is not None and session.id in peer:
                peer.move_to_end(session.id)

    def _forget(self, session_id: str) -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        peer = self._peers.get(session.peer)
        if peer is not None:
            peer.pop(session_id, None)
            if not peer:
                del self._peers[session.peer]
        return True

    async def _end(self, session_id: str) -> None:
        """End a session as its client's ``DELETE`` would, then end its run."""
        if not self._forget(session_id):
            return
        self.ended += 1
        await self.app(*_delete_request(self.path, session_id))
        await self.end_run(session_id)


def _least_recent(sessions: OrderedDict[str, _Session], spare: _Session) -> str:
    """The least recently active session but ``spare``, an idle one before a busy one."""
    busy: str | None = None
    for session_id, session in sessions.items():
        if session is spare:
            continue
        if session.inflight == 0:
            return session_id
        if busy is None:
            busy = session_id
    assert busy is not None  # called only with more sessions than the limit, which is >= 1
    return busy


def _watching(send: Send, status: list[int]) -> Send:
    """``send``, noting the response's status in ``status``."""

    async def watch(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(int(message.get("status", 500)))
        await send(message)

    return watch


def _delete_request(path: str, session_id: str) -> tuple[Scope, Receive, Send]:
    """An in-process ``DELETE`` of one session, as its client would send it."""
    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "DELETE",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode("ascii"),
        "root_path": "",
        "query_string": b"",
        "headers": [(_SESSION_HEADER.encode("ascii"), session_id.encode("latin-1"))],
        "client": None,
        "server": None,
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        return None

    return scope, receive, send
