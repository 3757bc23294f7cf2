"""What a fleet of ``runvil mcp --http`` replicas shares, kept in Redis (``--state``).

One :class:`SharedState` per process holds the two clients of one Redis database: the asyncio
one for the HTTP face (sessions, readiness) and a blocking one for the page store, whose
interface (:class:`~runvil.web._fetch.runstore.RunStoreBackend`) is synchronous because it is
also called from the render threads. Both have short timeouts (:data:`TIMEOUT`), so an
unreachable Redis costs a call at most a fraction of a second, never its whole deadline; after a
failure the state is *down* for :data:`RETRY_AFTER` seconds (nothing waits on Redis then), and
the first operation after that tries again, so a replica recovers on its own when Redis returns.

:class:`RedisRunStore` is the continuation store of docs/fetch.md in Redis: the same fair
shares of one budget between the runs that hold pages, the same entry count, the same age, and
fingerprints per run, so a page read on through any replica is the page its run read first. A
run is known by its key (:meth:`RedisRunStore.bind`; an MCP session's key is derived from its
id), so every replica finds the pages of the same session. The budget counts the bytes of the
encoded pages Redis holds. The same store keeps each run's robots.txt rules
(:func:`robots_store`), counted as the in-process store counts them. Every operation is one
Lua script, atomic in Redis, so two replicas never make room from the same entry twice. Pages
live under ``runvil:pg:`` keys, robots.txt rules under ``runvil:rb:``; the scripts
name keys they compute, so the store needs one Redis (or a primary with replicas), not a Redis
Cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from runvil._errors import ToolError, ToolErrorKind
from runvil._tools import RunScope
from runvil.web._fetch.continuation import PAGE_BUDGET, PAGE_ENTRIES, PAGE_MAX_AGE, Held
from runvil.web._fetch.pagetext import restored
from runvil.web._fetch.robots import ROBOTS_BUDGET, ROBOTS_ENTRIES, ROBOTS_MAX_AGE, KeptRobots
from runvil.web._fetch.runstore import PRINTS_PER_RUN, Fingerprint

if TYPE_CHECKING:
    import redis
    import redis.asyncio

__all__ = [
    "STATE_DOWN",
    "RedisRunStore",
    "SharedState",
    "StateUnavailable",
    "decode_held",
    "decode_robots",
    "encode_held",
    "encode_robots",
    "robots_store",
]

#: Seconds a Redis connection or command may take before the state counts as down.
TIMEOUT = 0.5
#: Seconds the state stays down after a failure before the next operation tries again.
RETRY_AFTER = 1.0
#: What a call that needs the shared state answers while it is unreachable.
STATE_DOWN = (
    "runvil mcp: the shared state (Redis) is unreachable; this call needs it; try again shortly"
)

logger = logging.getLogger("runvil.mcp")

V = TypeVar("V")


class StateUnavailable(ToolError):
    """Redis did not answer (or is known to be down for a moment). A tool call that meets it
    answers :data:`STATE_DOWN` at once, as soft text the model can act on (the MCP face,
    docs/deploy.md), instead of serving a page it cannot check."""

    def __init__(self, message: str = STATE_DOWN) -> None:
        super().__init__(ToolErrorKind.Other, message)


class SharedState:
    """The Redis database a fleet shares (module docstring). ``on_error`` is told of every
    failed operation (the metrics count them)."""

    def __init__(self, url: str, *, on_error: Callable[[], None] | None = None) -> None:
        import redis
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self.url = url
        self.sync: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT,
            health_check_interval=0,
        )
        # One retry on a broken connection (Redis restarted since it was pooled), as the
        # blocking client does by default.
        self.aio: redis.asyncio.Redis = redis.asyncio.Redis.from_url(
            url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT,
            health_check_interval=0, retry=Retry(NoBackoff(), 1),
            retry_on_error=[redis.ConnectionError],
        )
        self.on_error = on_error
        self._down_until = 0.0
        self._lock = threading.Lock()

    @property
    def up(self) -> bool:
        """Whether the last operation reached Redis (or the pause after a failure is over)."""
        return time.monotonic() >= self._down_until

    def check(self) -> None:
        """Raise :class:`StateUnavailable` at once while the state is known to be down."""
        if not self.up:
            raise StateUnavailable(STATE_DOWN)

    def failed(self, err: BaseException) -> StateUnavailable:
        """Note a failed operation: the state is down for :data:`RETRY_AFTER` seconds."""
        with self._lock:
            self._down_until = time.monotonic() + RETRY_AFTER
        if self.on_error is not None:
            self.on_error()
        logger.warning("runvil mcp: the shared state is unreachable: %s", err)
        return StateUnavailable(STATE_DOWN)

    def run_sync(self, operation: Callable[[redis.Redis], Any]) -> Any:
        """``operation(client)`` on the blocking client; :class:`StateUnavailable` on failure."""
        import redis

        self.check()
        try:
            return operation(self.sync)
        except (redis.RedisError, OSError) as err:
            raise self.failed(err) from None

    async def ping(self) -> bool:
        """Whether Redis answers now (readiness); never raises."""
        import redis

        try:
            return bool(await self.aio.ping())
        except (redis.RedisError, OSError) as err:
            self.failed(err)
            return False

    async def aclose(self) -> None:
        await self.aio.aclose()
        self.sync.close()


def encode_held(held: Held) -> bytes:
    """A kept page as the bytes Redis holds."""
    return json.dumps(
        [held.href, held.extraction, held.cut, held.text], ensure_ascii=False
    ).encode("utf-8", "surrogatepass")


def decode_held(data: bytes) -> Held:
    href, extraction, cut, text = json.loads(data.decode("utf-8", "surrogatepass"))
    return Held(href, restored(text), extraction, bool(cut))


# The scripts share these helpers. KEYS: none (the store's keys are computed from its prefix,
# the run and the key digest). Every size is the encoded value's bytes.
_HELPERS = """
local P = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function drop(R, D)
  local sz = redis.call('HGET', P..'sz:'..R, D)
  if not sz then return end
  sz = tonumber(sz)
  redis.call('HDEL', P..'sz:'..R, D)
  redis.call('ZREM', P..'lru:'..R, D)
  redis.call('DEL', P..'e:'..R..':'..D)
  redis.call('ZREM', P..'exp', R..'|'..D)
  redis.call('HINCRBY', P..'total', 'size', -sz)
  redis.call('HINCRBY', P..'total', 'count', -1)
  local left = redis.call('HINCRBY', P..'counts', R, -1)
  if left <= 0 then
    redis.call('HDEL', P..'counts', R)
    redis.call('ZREM', P..'holders', R)
  else
    redis.call('ZINCRBY', P..'holders', -sz, R)
  end
end
local function tidy(now)
  local expired = redis.call('ZRANGEBYSCORE', P..'exp', '-inf', now, 'LIMIT', 0, 256)
  for _, m in ipairs(expired) do
    local bar = string.find(m, '|', 1, true)
    drop(string.sub(m, 1, bar - 1), string.sub(m, bar + 1))
  end
end
local function oldest(R)
  return redis.call('ZRANGE', P..'lru:'..R, 0, 0)[1]
end
"""

_GET = _HELPERS + """
local R, D = ARGV[2], ARGV[3]
tidy(now_ms())
local v = redis.call('GET', P..'e:'..R..':'..D)
if not v then
  drop(R, D)
  return false
end
redis.call('ZADD', P..'lru:'..R, redis.call('INCR', P..'seq'), D)
return v
"""

_PUT = _HELPERS + """
local R, D, value = ARGV[2], ARGV[3], ARGV[4]
local budget, max_entries, max_age = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local print, prints_per_run, prints_ttl = ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10])
local size = tonumber(ARGV[11])
local now = now_ms()
tidy(now)
drop(R, D)
if print ~= '' and prints_per_run >= 1 then
  local fp, fpo = P..'fp:'..R, P..'fpo:'..R
  redis.call('HSET', fp, D, print)
  redis.call('ZADD', fpo, redis.call('INCR', P..'seq'), D)
  while redis.call('ZCARD', fpo) > prints_per_run do
    local gone = redis.call('ZPOPMIN', fpo)[1]
    redis.call('HDEL', fp, gone)
  end
  redis.call('PEXPIRE', fp, prints_ttl)
  redis.call('PEXPIRE', fpo, prints_ttl)
end
if size > budget or max_entries < 1 then return 0 end
local holders_key, counts_key = P..'holders', P..'counts'
local holding = redis.call('HEXISTS', counts_key, R) == 1
local holders = redis.call('ZCARD', holders_key)
if not holding then holders = holders + 1 end
local share = math.floor(budget / holders)
local share_n = math.max(1, math.floor(max_entries / holders))
local function rsize(X) return tonumber(redis.call('ZSCORE', holders_key, X) or '0') end
local function rcount(X) return tonumber(redis.call('HGET', counts_key, X) or '0') end
local function total(f) return tonumber(redis.call('HGET', P..'total', f) or '0') end
while rcount(R) > 0 and (rsize(R) + size > share or rcount(R) + 1 > share_n) do
  drop(R, oldest(R))
end
while total('size') + size > budget or total('count') + 1 > max_entries do
  local by_count = total('count') + 1 > max_entries
  local victim, most = nil, -1
  if by_count then
    local all = redis.call('HGETALL', counts_key)
    for i = 1, #all, 2 do
      local n = tonumber(all[i + 1])
      if all[i] ~= R and n > most then victim, most = all[i], n end
    end
  else
    local top = redis.call('ZREVRANGE', holders_key, 0, 1, 'WITHSCORES')
    for i = 1, #top, 2 do
      if top[i] ~= R and victim == nil then victim, most = top[i], tonumber(top[i + 1]) end
    end
  end
  if victim == nil then return 0 end
  if by_count then
    if most <= share_n then return 0 end
  elseif most <= share then
    return 0
  end
  drop(victim, oldest(victim))
end
local expires = now + max_age
redis.call('SET', P..'e:'..R..':'..D, value, 'PX', max_age)
redis.call('HSET', P..'sz:'..R, D, size)
redis.call('ZADD', P..'lru:'..R, redis.call('INCR', P..'seq'), D)
redis.call('ZADD', P..'exp', expires, R..'|'..D)
redis.call('HINCRBY', P..'total', 'size', size)
redis.call('HINCRBY', P..'total', 'count', 1)
redis.call('HINCRBY', counts_key, R, 1)
redis.call('ZINCRBY', holders_key, size, R)
return 1
"""

_END = _HELPERS + """
local R = ARGV[2]
local keys = redis.call('HKEYS', P..'sz:'..R)
for _, D in ipairs(keys) do drop(R, D) end
redis.call('DEL', P..'fp:'..R, P..'fpo:'..R, P..'lru:'..R, P..'sz:'..R)
return #keys
"""


def _digest(key: Hashable) -> str:
    """A fixed-size stand-in for a store key, the same in every process."""
    return hashlib.blake2b(
        repr(key).encode("utf-8", "surrogatepass"), digest_size=16
    ).hexdigest()


def run_key(session_id: str) -> str:
    """The store's key for an MCP session's run: a digest of its id (the id itself is the
    session's credential and is not written anywhere else)."""
    return hashlib.blake2b(session_id.encode("utf-8"), digest_size=16).hexdigest()


class RedisRunStore(Generic[V]):
    """A :class:`~runvil.web._fetch.runstore.RunStoreBackend` in Redis (module docstring).

    A run bound to a key (:meth:`bind`) keeps its pages across replicas until :meth:`end_key`
    (its session ended) or their age; a run never bound (a call of its own) gets a random key,
    and its pages go when its scope ends. When Redis is unreachable, ``get`` and
    ``fingerprint`` raise :class:`StateUnavailable` (a continuation cannot be answered) and
    ``put`` keeps nothing.
    """

    def __init__(
        self,
        state: SharedState,
        *,
        encode: Callable[[V], bytes],
        decode: Callable[[bytes], V],
        budget: int = PAGE_BUDGET,
        max_entries: int = PAGE_ENTRIES,
        max_age: float = PAGE_MAX_AGE,
        max_prints_per_run: int = PRINTS_PER_RUN,
        prints_ttl: float = PAGE_MAX_AGE,
        prefix: str = "runvil:pg:",
        count_reported: bool = False,
    ) -> None:
        self.state = state
        self.encode = encode
        self.decode = decode
        self.budget = budget
        self.max_entries = max_entries
        self.max_age = max_age
        self.max_prints_per_run = max_prints_per_run
        self.prints_ttl = prints_ttl
        self.prefix = prefix
        self.count_reported = count_reported
        """Count each entry by the size its owner reports (when larger than its encoding), as
        the in-process store does; else by the bytes Redis holds."""
        self._keys: weakref.WeakKeyDictionary[RunScope, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        client = state.sync
        self._get = client.register_script(_GET)
        self._put = client.register_script(_PUT)
        self._end = client.register_script(_END)

    def bind(self, scope: RunScope, key: str) -> None:
        """Keep ``scope``'s pages under ``key``: every replica that binds a scope to the same key
        serves the same pages. Ending the scope here leaves them (another replica may carry on);
        :meth:`end_key` forgets them."""
        with self._lock:
            self._keys[scope] = key

    def _key_of(self, scope: RunScope) -> str:
        with self._lock:
            key = self._keys.get(scope)
            if key is None:
                key = self._keys[scope] = "x" + secrets.token_hex(16)
                scope.on_end(lambda: self._end_quietly(key))
            return key

    def _end_quietly(self, key: str) -> None:
        with contextlib.suppress(StateUnavailable):  # else the pages go at their age
            self.end_key(key)

    # -- RunStoreBackend -------------------------------------------------------------------

    def get(self, scope: RunScope, key: Hashable) -> V | None:
        data = self.state.run_sync(
            lambda _c: self._get(args=[self.prefix, self._key_of(scope), _digest(key)])
        )
        return None if data is None else self.decode(data)

    def put(
        self,
        scope: RunScope,
        key: Hashable,
        value: V,
        size: int,
        fingerprint: Fingerprint | None = None,
    ) -> bool:
        if scope.ended:
            return False
        print_text = (
            "" if fingerprint is None else f"{fingerprint.length}:{fingerprint.digest.hex()}"
        )
        data = self.encode(value)
        counted = max(size, len(data)) if self.count_reported else len(data)
        try:
            kept = self.state.run_sync(
                lambda _c: self._put(args=[
                    self.prefix, self._key_of(scope), _digest(key), data, self.budget,
                    self.max_entries, int(self.max_age * 1000), print_text,
                    self.max_prints_per_run, int(self.prints_ttl * 1000), counted,
                ])
            )
        except StateUnavailable:
            return False  # forgetting is always safe: the page is fetched again
        return bool(kept)

    def fingerprint(self, scope: RunScope, key: Hashable) -> Fingerprint | None:
        run = self._key_of(scope)
        text = self.state.run_sync(
            lambda c: c.hget(f"{self.prefix}fp:{run}", _digest(key))
        )
        if text is None:
            return None
        length, _, digest = text.decode("ascii").partition(":")
        return Fingerprint(int(length), bytes.fromhex(digest))

    def end_run(self, scope: RunScope) -> None:
        with self._lock:
            key = self._keys.pop(scope, None)
        if key is not None:
            self._end_quietly(key)

    # -- the fleet's own operations --------------------------------------------------------

    def end_key(self, key: str) -> None:
        """Forget the pages and fingerprints of the run kept under ``key``."""
        self.state.run_sync(lambda _c: self._end(args=[self.prefix, key]))

    def totals(self) -> tuple[int, int]:
        """Bytes and pages the store holds now, over the whole fleet."""
        raw = self.state.run_sync(lambda c: c.hgetall(f"{self.prefix}total"))
        return int(raw.get(b"size", 0)), int(raw.get(b"count", 0))


def page_store(state: SharedState) -> RedisRunStore[Held]:
    """The continuation store of a fleet: pages, under the in-process store's limits."""
    return RedisRunStore(state, encode=encode_held, decode=decode_held)


def encode_robots(kept: KeptRobots) -> bytes:
    """A site's kept robots.txt rules as the bytes Redis holds."""
    return json.dumps(list(kept), ensure_ascii=False).encode("utf-8", "surrogatepass")


def decode_robots(data: bytes) -> KeptRobots:
    verdict, source, read_at = json.loads(data.decode("utf-8", "surrogatepass"))
    return KeptRobots(None if verdict is None else bool(verdict), str(source), float(read_at))


def robots_store(state: SharedState) -> RedisRunStore[KeptRobots]:
    """The robots.txt rules of a fleet: per run, under the in-process store's limits (the same
    budget, counted by the same estimate of a parsed file's size, the same entry count and
    age), shared fairly between the runs that hold rules."""
    return RedisRunStore(
        state, encode=encode_robots, decode=decode_robots, budget=ROBOTS_BUDGET,
        max_entries=ROBOTS_ENTRIES, max_age=ROBOTS_MAX_AGE, max_prints_per_run=0,
        prefix="runvil:rb:", count_reported=True,
    )
