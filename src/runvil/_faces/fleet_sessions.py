"""MCP sessions that every replica of a fleet knows: kept in Redis, served sessionless.

The SDK keeps a handshake-era session in the memory of the process that opened it (its
transport, its server task), so a request landing on another replica would answer 404. A fleet
therefore runs the SDK's app in its *stateless* mode, where every request is served by a
born-ready transport of its own and nothing is left in memory between requests, and this
middleware keeps the session itself in Redis:

* an ``initialize`` without ``Mcp-Session-Id`` gets a new session: a random id (128 bits, the
  client's credential for it, as with the SDK), a record in Redis holding the session's
  envelope nonce, and the id in the answer's ``Mcp-Session-Id`` header;
* a request with an id Redis knows carries on that session on whichever replica it lands:
  the tool call runs in a Host run with the session's nonce, and continuation reads the pages
  kept under the session's key (:func:`~runvil._faces.fleet_state.run_key`), whichever replica
  fetched them. An unknown or ended id is answered 404 ``Session not found``, as the SDK does;
* ``DELETE`` ends the session for the whole fleet (its record and its pages); a ``GET`` (the
  optional server-to-client stream) is answered 405, which the specification allows: runvil
  sends nothing unasked;
* a session idle for the idle limit is forgotten by Redis (its record expires), and the
  session limits hold for the fleet, as on one process (:mod:`runvil._faces.mcp_sessions`),
  counted in Redis: past the per-peer limit a peer's newcomer ends that peer's least recently
  active session, past the total the least recently active of all is ended, so one client
  opening sessions without end only ever ends its own (or, past the total, the stalest).
  "Active" is when a request of the session began (and ended, for one that took over a
  second), by Redis's clock. Unlike one process, a session with a call in flight is not passed
  over (the replicas do not tell each other what is in flight); its call finishes, and its
  next request gets 404. Every change is one Lua script, atomic across the replicas.

Sessionless (2026-07-28) requests pass through untouched. When Redis is unreachable, a request
naming a session is let through marked (:data:`STATE_DOWN_KEY`), so listing tools still works
and a tool call answers :data:`~runvil._faces.fleet_state.STATE_DOWN` at once; an ``initialize``
is answered 503 with the same message.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runvil._envelope import new_nonce
from runvil._faces.fleet_state import (
    STATE_DOWN,
    RedisRunStore,
    SharedState,
    StateUnavailable,
    run_key,
)
from runvil._faces.mcp_sessions import SessionLimits, peer_of, session_of

__all__ = ["SESSION_KEY", "STATE_DOWN_KEY", "FleetSessions"]

#: Where the middleware leaves ``(session id, nonce)`` of a request it checked, in the scope.
SESSION_KEY = "runvil.session"
#: Set in the scope of a request naming a session while Redis is unreachable.
STATE_DOWN_KEY = "runvil.state_down"

_SESSION_HEADER = "mcp-session-id"
#: Keys: ``runvil:session:{id}`` the nonce (expiring when idle); ``runvil:s:active`` every
#: session by last activity (ms, Redis's clock); ``runvil:s:peers`` each session's peer;
#: ``runvil:s:peer:{peer}`` a peer's sessions by last activity.
_PREFIX = "runvil:session:"
#: A request longer than this (seconds) marks its session active again when it ends.
_LONG_REQUEST = 1.0

_HELPERS = """
local ACTIVE, PEERS, RECORD, PEER = 'runvil:s:active', 'runvil:s:peers', 'runvil:session:',
  'runvil:s:peer:'
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function forget(S)
  local peer = redis.call('HGET', PEERS, S)
  if peer then
    redis.call('ZREM', PEER..peer, S)
    redis.call('HDEL', PEERS, S)
  end
  redis.call('ZREM', ACTIVE, S)
  return redis.call('DEL', RECORD..S)
end
local function oldest_but(key, S)
  for _, other in ipairs(redis.call('ZRANGE', key, 0, 1)) do
    if other ~= S then return other end
  end
  return nil
end
"""

# ARGV: id, nonce, peer, idle (ms), per peer, total. Returns the ids of the sessions ended.
_OPEN = _HELPERS + """
local S, nonce, peer = ARGV[1], ARGV[2], ARGV[3]
local idle, per_peer, total = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now = now_ms()
for _, stale in ipairs(redis.call('ZRANGEBYSCORE', ACTIVE, '-inf', now - idle)) do
  forget(stale)
end
redis.call('SET', RECORD..S, nonce, 'PX', idle)
redis.call('ZADD', ACTIVE, now, S)
redis.call('HSET', PEERS, S, peer)
redis.call('ZADD', PEER..peer, now, S)
local ended = {}
while redis.call('ZCARD', PEER..peer) > per_peer do
  local victim = oldest_but(PEER..peer, S)
  if victim == nil then break end
  forget(victim)
  table.insert(ended, victim)
end
while redis.call('ZCARD', ACTIVE) > total do
  local victim = oldest_but(ACTIVE, S)
  if victim == nil then break end
  forget(victim)
  table.insert(ended, victim)
end
return ended
"""

# ARGV: id, idle (ms), whether the record is read (1) or only the activity noted (0).
_TOUCH = _HELPERS + """
local S, idle = ARGV[1], tonumber(ARGV[2])
local nonce = redis.call('GET', RECORD..S)
if not nonce then return false end
redis.call('PEXPIRE', RECORD..S, idle)
local now = now_ms()
redis.call('ZADD', ACTIVE, now, S)
local peer = redis.call('HGET', PEERS, S)
if peer then redis.call('ZADD', PEER..peer, now, S) end
return nonce
"""

_END = _HELPERS + """
return forget(ARGV[1])
"""


def _jsonrpc_error(message: str, status: int, code: int) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json")


class FleetSessions:
    """ASGI middleware in front of the SDK's stateless app (module docstring).

    ``end_local(session_id)`` ends this replica's Host run of a session that ended.
    """

    def __init__(
        self,
        app: ASGIApp,
        state: SharedState,
        stores: Sequence[RedisRunStore[Any]],
        limits: SessionLimits | None = None,
        *,
        end_local: Callable[[str], Any] | None = None,
    ) -> None:
        self.app = app
        self.state = state
        self.stores = tuple(stores)
        """The stores keeping each session's things (pages, robots.txt rules) under its key."""
        self.limits = limits if limits is not None else SessionLimits()
        self.end_local = end_local
        self._open = state.aio.register_script(_OPEN)
        self._touch_script = state.aio.register_script(_TOUCH)
        self._end_script = state.aio.register_script(_END)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kept, session_id = session_of(scope)
        if not kept:
            await self.app(scope, receive, send)  # sessionless: nothing to keep
            return
        if session_id is None:
            await self._maybe_open(scope, receive, send)
            return
        method = scope.get("method")
        try:
            nonce = await self._touch(session_id)
        except Exception as err:  # redis errors, timeouts, lost connections
            if not isinstance(err, StateUnavailable):
                self.state.failed(err)
            if method in ("DELETE", "GET"):
                await _jsonrpc_error(STATE_DOWN, 503, -32603)(scope, receive, send)
                return
            scope[STATE_DOWN_KEY] = True
            await self.app(scope, receive, send)
            return
        if nonce is None:
            await _jsonrpc_error("Session not found", 404, -32600)(scope, receive, send)
            await self._ended_locally(session_id)
            return
        if method == "DELETE":
            await self._end(session_id)
            await Response(status_code=200)(scope, receive, send)
            return
        if method == "GET":
            await Response("Method Not Allowed", status_code=405)(scope, receive, send)
            return
        scope[SESSION_KEY] = (session_id, nonce)
        started = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            if time.monotonic() - started > _LONG_REQUEST:
                await self._touch_quietly(session_id)

    # -- opening ---------------------------------------------------------------------------

    async def _maybe_open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: an ``initialize`` opens a session, anything else
        passes through (the SDK serves it as a request of its own)."""
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            if messages:
                return messages.pop(0)
            return await receive()

        if not _is_initialize(body):
            await self.app(scope, replay, send)
            return
        session_id = uuid.uuid4().hex
        nonce = new_nonce()
        try:
            await self._create(session_id, nonce, peer_of(scope))
        except Exception as err:
            if not isinstance(err, StateUnavailable):
                self.state.failed(err)
            await _jsonrpc_error(STATE_DOWN, 503, -32603)(scope, replay, send)
            return
        scope[SESSION_KEY] = (session_id, nonce)
        opened: list[bool] = []

        async def send_with_id(message: Message) -> None:
            if (
                message["type"] == "http.response.start"
                and int(message.get("status", 500)) < 400
            ):
                MutableHeaders(scope=message)[_SESSION_HEADER] = session_id
                opened.append(True)
            await send(message)

        try:
            await self.app(scope, replay, send_with_id)
        finally:
            if not opened:  # refused: nothing was established
                await self._forget_quietly(session_id)

    # -- Redis -----------------------------------------------------------------------------

    async def _create(self, session_id: str, nonce: str, peer: str) -> None:
        """Record a new session of ``peer``, ending, past the limits, the peer's least recently
        active session, then the least recently active of all (one script)."""
        self.state.check()
        limits = self.limits
        ended = await self._open(args=[
            session_id, nonce, peer, int(limits.idle * 1000), limits.per_peer, limits.total,
        ])
        for raw in ended:
            await self._ended(raw.decode("ascii") if isinstance(raw, bytes) else str(raw))

    async def _touch(self, session_id: str) -> str | None:
        """The session's nonce (its idle clock restarted, its activity noted), or None when it
        is unknown."""
        self.state.check()
        if len(session_id) > 64 or not session_id.isascii():
            return None
        nonce = await self._touch_script(args=[session_id, int(self.limits.idle * 1000)])
        if nonce is None:
            return None
        return str(nonce.decode("ascii"))

    async def _touch_quietly(self, session_id: str) -> None:
        try:
            await self._touch(session_id)
        except Exception as err:
            if not isinstance(err, StateUnavailable):
                self.state.failed(err)

    async def _end(self, session_id: str) -> None:
        """End a session for the whole fleet: its record, its pages, this replica's run."""
        await self._end_script(args=[session_id])
        await self._ended(session_id)

    async def _ended(self, session_id: str) -> None:
        """What is left of a session whose record is gone: its pages, this replica's run."""
        for store in self.stores:
            await _in_thread(store.end_key, run_key(session_id))
        await self._ended_locally(session_id)

    async def _forget_quietly(self, session_id: str) -> None:
        try:
            await self._end_script(args=[session_id])
        except Exception as err:
            self.state.failed(err)

    async def _ended_locally(self, session_id: str) -> None:
        if self.end_local is not None:
            await self.end_local(session_id)


async def _in_thread(function: Callable[..., Any], *args: Any) -> Any:
    import asyncio

    return await asyncio.to_thread(function, *args)


def _is_initialize(body: bytes) -> bool:
    """Whether a request body is a JSON-RPC ``initialize`` request."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"
