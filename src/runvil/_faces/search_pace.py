"""The operator's search rate (``[search] rate``), held for one process or for a whole fleet,
and the search memo a fleet shares.

:class:`PacedSearch` wraps the configured provider (it is a provider itself, so the search tool
and its messages are unchanged). Before each vendor request it takes the next free slot of the
rate, ``1 / rate`` seconds after the one before, and waits for it: requests are spaced, never
refused, unless the wait would pass :data:`MAX_WAIT`, when the call fails at once with
:func:`rate_message` rather than holding a connection. The slots are kept in the process
(:class:`LocalSlots`) or, with ``--state``, in Redis (:class:`SharedSlots`: one Lua script
reserves a slot atomically), so N replicas together stay within the rate.

With ``--state`` the wrapper also keeps each successful search's rows in Redis for
:data:`MEMO_SECONDS`, keyed by a digest of the provider and the whole request, so an identical
search on another replica costs no vendor request. The search tool's own memo (in each process)
still answers first. If Redis does not answer, the memo is skipped and the rate falls back to
the process's own slots.

With ``--state`` a vendor's ``Retry-After`` holds for the fleet too (:class:`SharedPauses`): a
429 one replica's search meets is noted in Redis (the answer, expiring after the wait it asked
for, capped as the retry's is), and every replica's search to that provider first waits out
the rest of it (:data:`~runvil.web._search.egress.shared_pause`). If Redis does not answer,
each replica honours what it is told itself, as one process does.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Protocol

from multidict import CIMultiDict, CIMultiDictProxy

from runvil._errors import ToolErrorKind
from runvil._faces.fleet_state import SharedState, StateUnavailable
from runvil.web._search.egress import EgressResponse, shared_pause
from runvil.web._search.provider import (
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
)

__all__ = [
    "MAX_WAIT",
    "MEMO_SECONDS",
    "LocalSlots",
    "PacedSearch",
    "SharedPauses",
    "SharedSlots",
    "rate_message",
]

#: The longest a search waits for its slot; past it the call fails at once.
MAX_WAIT = 10.0
#: Seconds a fleet's shared memo keeps a search's rows.
MEMO_SECONDS = 600


def rate_message(name: str, rate: float) -> str:
    """The failure of a search whose slot is more than :data:`MAX_WAIT` seconds away."""
    return (
        f"{name}: the operator's search rate ({rate:g} per second) is used up for the next "
        f"{MAX_WAIT:g} seconds; try again shortly"
    )


class Slots(Protocol):
    def reserve(self, interval: float) -> float | None:
        """Seconds to wait for the next slot (reserved), or None when it is past MAX_WAIT."""
        ...


class LocalSlots:
    """The rate's slots in this process."""

    def __init__(self) -> None:
        self._next = 0.0

    def reserve(self, interval: float) -> float | None:
        now = time.monotonic()
        start = max(now, self._next)
        if start - now > MAX_WAIT:
            return None
        self._next = start + interval
        return start - now


_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now, nxt)
if start - now > limit then return -1 end
local keep = math.floor((start - now + interval) / 1000) + 1000
redis.call('SET', KEYS[1], start + interval, 'PX', keep)
return start - now
"""


class SharedSlots:
    """The rate's slots in Redis, one sequence for every replica (Redis's clock)."""

    def __init__(self, state: SharedState, provider: str) -> None:
        self.state = state
        self.key = f"runvil:rate:{provider}"
        self._script = state.sync.register_script(_RESERVE)
        self._fallback = LocalSlots()

    def reserve(self, interval: float) -> float | None:
        try:
            waited = self.state.run_sync(lambda _c: self._script(
                keys=[self.key], args=[int(interval * 1e6), int(MAX_WAIT * 1e6)]
            ))
        except StateUnavailable:
            return self._fallback.reserve(interval)
        return None if int(waited) < 0 else int(waited) / 1e6


_PAUSE = """
local ms = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ms then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ms)
end
return 1
"""


class SharedPauses:
    """A provider's pauses (a 429's ``Retry-After``) in Redis, for every replica; a
    :class:`~runvil.web._search.egress.SharedPause`. The key holds the answer that asked for
    the pause and expires when the pause ends (Redis's clock), so a longer pause is never
    shortened by a shorter one."""

    def __init__(self, state: SharedState, provider: str) -> None:
        self.state = state
        self.key = f"runvil:pause:{provider}"
        self._script = state.aio.register_script(_PAUSE)

    async def pending(self) -> tuple[float, EgressResponse] | None:
        if not self.state.up:
            return None
        try:
            async with self.state.aio.pipeline(transaction=False) as pipe:
                pipe.pttl(self.key)
                pipe.get(self.key)
                left, data = await pipe.execute()
        except Exception as err:  # redis errors, timeouts, lost connections
            self.state.failed(err)
            return None
        if data is None or int(left) <= 0:
            return None
        return int(left) / 1000, decode_answer(data)

    async def pause(self, seconds: float, response: EgressResponse) -> None:
        milliseconds = int(seconds * 1000)
        if milliseconds <= 0 or not self.state.up:
            return
        try:
            await self._script(keys=[self.key], args=[milliseconds, encode_answer(response)])
        except Exception as err:
            self.state.failed(err)


def encode_answer(response: EgressResponse) -> bytes:
    """A vendor's answer as Redis keeps it (its body is at most the error body's cap)."""
    body = None if response.body is None else base64.b64encode(response.body).decode("ascii")
    return json.dumps({
        "status": response.status, "headers": list(response.headers.items()), "body": body,
    }).encode("utf-8")


def decode_answer(data: bytes) -> EgressResponse:
    raw = json.loads(data)
    body = None if raw["body"] is None else base64.b64decode(raw["body"])
    headers = CIMultiDictProxy(CIMultiDict((str(k), str(v)) for k, v in raw["headers"]))
    return EgressResponse(int(raw["status"]), headers, body)


class PacedSearch:
    """A provider within the operator's rate, and with a fleet's shared memo (docstring)."""

    def __init__(
        self,
        provider: SearchProvider,
        *,
        rate: float | None,
        state: SharedState | None = None,
    ) -> None:
        self.provider = provider
        self.rate = rate
        self.state = state
        self.slots: Slots | None = None
        self.pauses = SharedPauses(state, provider.name) if state is not None else None
        if rate is not None:
            self.slots = (
                SharedSlots(state, provider.name) if state is not None else LocalSlots()
            )

    @property
    def name(self) -> str:
        return self.provider.name

    @property
    def endpoints(self) -> Sequence[str]:
        return self.provider.endpoints

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        key = self._memo_key(request)
        if self.state is not None:
            remembered = await self._recall(key)
            if remembered is not None:
                return remembered
        if self.slots is not None and self.rate is not None:
            wait = await asyncio.to_thread(self.slots.reserve, 1.0 / self.rate)
            if wait is None:
                raise ProviderError(ToolErrorKind.Transport, rate_message(self.name, self.rate))
            if wait > 0:
                await asyncio.sleep(wait)
        token = shared_pause.set(self.pauses) if self.pauses is not None else None
        try:
            results = await self.provider.search(request)
        finally:
            if token is not None:
                shared_pause.reset(token)
        if self.state is not None:
            await self._remember(key, results)
        return results

    def _memo_key(self, request: SearchRequest) -> str:
        text = json.dumps([self.provider.name, asdict(request)], sort_keys=True)
        return "runvil:memo:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    async def _recall(self, key: str) -> list[SearchResult] | None:
        assert self.state is not None
        if not self.state.up:
            return None
        try:
            data = await self.state.aio.get(key)
        except Exception as err:
            self.state.failed(err)
            return None
        if data is None:
            return None
        rows = json.loads(data)
        return [
            SearchResult(**{**row, "extra_snippets": tuple(row.get("extra_snippets", ()))})
            for row in rows
        ]

    async def _remember(self, key: str, results: Sequence[SearchResult]) -> None:
        assert self.state is not None
        if not self.state.up:
            return
        rows = [{**asdict(r), "extra_snippets": list(r.extra_snippets)} for r in results]
        try:
            await self.state.aio.set(key, json.dumps(rows), ex=MEMO_SECONDS)
        except Exception as err:
            self.state.failed(err)
