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
* a session idle for the idle limit is forgotten by Redis (its record expires), and past the
  fleet's session limit the least recently active is ended to make room, as on one process.
  The per-peer limit does not apply: behind a load balancer every client has its address.

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

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers, MutableHeaders
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
from runvil._faces.mcp_sessions import SessionLimits

__all__ = ["SESSION_KEY", "STATE_DOWN_KEY", "FleetSessions"]

#: Where the middleware leaves ``(session id, nonce)`` of a request it checked, in the scope.
SESSION_KEY = "runvil.session"
#: Set in the scope of a request naming a session while Redis is unreachable.
STATE_DOWN_KEY = "runvil.state_down"

_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_PREFIX = "runvil:session:"
_ACTIVE = "runvil:sessions"


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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        version = headers.get(_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # sessionless: nothing to keep
            return
        session_id = headers.get(_SESSION_HEADER)
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
        await self.app(scope, receive, send)

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
            await self._create(session_id, nonce)
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

    async def _create(self, session_id: str, nonce: str) -> None:
        """Record a new session, then end the least recently active past the limit."""
        self.state.check()
        now = time.time()
        idle_ms = int(self.limits.idle * 1000)
        aio = self.state.aio
        async with aio.pipeline(transaction=True) as pipe:
            pipe.set(_PREFIX + session_id, nonce, px=idle_ms)
            pipe.zadd(_ACTIVE, {session_id: now})
            pipe.zremrangebyscore(_ACTIVE, "-inf", now - self.limits.idle)
            pipe.zcard(_ACTIVE)
            results = await pipe.execute()
        over = int(results[-1]) - self.limits.total
        if over > 0:
            oldest = await aio.zrange(_ACTIVE, 0, over - 1)
            for raw in oldest:
                other = raw.decode("ascii") if isinstance(raw, bytes) else str(raw)
                if other != session_id:
                    await self._end(other)

    async def _touch(self, session_id: str) -> str | None:
        """The session's nonce (its idle clock restarted), or None when it is unknown."""
        self.state.check()
        if len(session_id) > 64 or not session_id.isascii():
            return None
        aio = self.state.aio
        async with aio.pipeline(transaction=False) as pipe:
            pipe.get(_PREFIX + session_id)
            pipe.pexpire(_PREFIX + session_id, int(self.limits.idle * 1000))
            results = await pipe.execute()
        if results[0] is None:
            return None
        await aio.zadd(_ACTIVE, {session_id: time.time()})
        return str(results[0].decode("ascii"))

    async def _end(self, session_id: str) -> None:
        """End a session for the whole fleet: its record, its pages, this replica's run."""
        aio = self.state.aio
        await aio.delete(_PREFIX + session_id)
        await aio.zrem(_ACTIVE, session_id)
        for store in self.stores:
            await _in_thread(store.end_key, run_key(session_id))
        await self._ended_locally(session_id)

    async def _forget_quietly(self, session_id: str) -> None:
        try:
            await self.state.aio.delete(_PREFIX + session_id)
            await self.state.aio.zrem(_ACTIVE, session_id)
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
