"""The aiohttp client session that can only reach what the current hop's permit approved.

aiohttp does the HTTP; this module decides where it may connect. Each hop runs with a
:class:`~runvil.web.fetch.network.DialPermit` in a context variable (set by
:func:`permitted`), and three independent checks consult it:

1. **The resolver hook.** aiohttp never does DNS itself: when it needs a new connection it asks
   :class:`_PermitResolver`, which answers with the permit's approved addresses, already routed,
   in answer order, and refuses any host or port the permit was not made for. DNS caching is off,
   so every new connection asks again.
2. **The socket factory.** Just before ``connect()``, every socket's destination is checked
   against the permit. Nothing that slipped past the resolver (an IP-literal URL, which aiohttp
   never sends to a resolver) can be dialled.
3. **The pool check.** A kept-alive connection is reused only when its peer is one of the current
   hop's approved addresses. A connection approved on an earlier call is closed instead of
   reused if the name has since moved, so pooling never bypasses a fresh lookup.

Requests go out through :func:`send_get`, which drives the session's connector, request class and
response parser directly instead of through ``ClientSession.get`` (see its docstring for why).

The session is anonymous by construction: no proxy (``trust_env=False``, whatever
``HTTPS_PROXY`` says), a cookie jar that keeps nothing, no default credentials, a fixed
``User-Agent``, and no automatic decompression (bodies go through our bounded decoders).
"""

from __future__ import annotations

import functools
import math
import socket
from contextvars import ContextVar
from typing import Any, cast

import aiohttp
from aiohttp import hdrs
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ClientRequest, ClientResponse
from aiohttp.helpers import TimerNoop
from aiohttp.streams import StreamReader
from yarl import URL

from runvil.web.fetch.network import DialPermit, DialRefused, Network, normalise_endpoint
from runvil.web.fetch.policy import FetchPolicy

#: Content codings our bounded decoders handle (and so the only ones we advertise).
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
#: What the fetch can turn into text, best first; anything is still accepted and judged later.
ACCEPT = (
    "text/html,application/xhtml+xml,application/json;q=0.9,application/xml;q=0.9,"
    "text/*;q=0.8,*/*;q=0.1"
)

_PERMIT: ContextVar[DialPermit | None] = ContextVar("runvil_fetch_permit", default=None)


class permitted:
    """Run the enclosed requests under ``permit`` (and only it).

    Lowercase because it reads like the function it replaced. A plain class rather than
    ``contextlib.contextmanager``: it is entered once per hop, and the generator machinery cost
    more than the context-variable set and reset it wraps.
    """

    __slots__ = ("_permit", "_token")

    def __init__(self, permit: DialPermit) -> None:
        self._permit = permit

    def __enter__(self) -> None:
        self._token = _PERMIT.set(self._permit)

    def __exit__(self, *exc_info: object) -> None:
        _PERMIT.reset(self._token)


def _current_permit() -> DialPermit:
    permit = _PERMIT.get()
    if permit is None:
        raise DialRefused("no dial permit for this request")
    return permit


class _PermitResolver(AbstractResolver):
    """Answers aiohttp's lookups from the hop's permit instead of from DNS."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        permit = _current_permit()
        if host.rstrip(".") != permit.host.rstrip(".") or port != permit.port:
            raise DialRefused(f"request for {host}:{port} under a permit for another target")
        permit.connections_opened += 1
        return [
            ResolveResult(
                hostname=host,
                host=ip,
                port=dial_port,
                family=socket.AF_INET6 if ":" in ip else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
            )
            for ip, dial_port in permit.routed()
        ]

    async def close(self) -> None:
        return None


def _checked_socket(addr_info: Any) -> socket.socket:
    """aiohttp's ``socket_factory``: the final check before any ``connect()``."""
    family, type_, proto, _canonname, sockaddr = addr_info
    permit = _current_permit()
    if not permit.allows(str(sockaddr[0]), int(sockaddr[1])):
        raise DialRefused(f"connection to {sockaddr[0]}:{sockaddr[1]} is not approved")
    return socket.socket(family=family, type=type_, proto=proto)


class _ResponseHandler(ResponseHandler):
    """aiohttp's client protocol, plus one fix: a body that turns malformed fails its reader.

    When the HTTP parser rejects bytes in the middle of a body (a broken chunk header), aiohttp
    3.14 closes the connection and records the error on the protocol, but the body's reader is
    never told and waits until the whole-request deadline. Handing the reader the error too
    turns a 20-second stall into an immediate body-read failure.
    """

    #: The connection's peer as a normalised ``(ip, port)``, learnt once: it never changes.
    peer: tuple[str, int] | None = None

    def set_exception(self, exc: BaseException, *args: Any, **kwargs: Any) -> None:
        payload = getattr(self, "_payload", None)
        if isinstance(payload, StreamReader) and not payload.is_eof() and not payload.exception():
            payload.set_exception(aiohttp.ClientPayloadError("malformed response body"), exc)
        super().set_exception(exc, *args, **kwargs)


class _GuardedConnector(aiohttp.TCPConnector):
    """A TCP connector whose pooled connections are reused only for an approved peer."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._factory = cast(
            "functools.partial[ResponseHandler]",
            functools.partial(_ResponseHandler, loop=self._loop),
        )

    async def connect(
        self, req: ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout
    ) -> aiohttp.connector.Connection:
        permit = _current_permit()
        while True:
            opened_before = permit.connections_opened
            conn = await super().connect(req, traces, timeout)
            if _peer_allowed(conn.protocol, permit):
                return conn
            conn.close()
            if permit.connections_opened != opened_before:
                # A brand-new connection that fails the check: never retry in a loop.
                raise DialRefused("new connection reached an address that was not approved")


def _peer_allowed(protocol: ResponseHandler | None, permit: DialPermit) -> bool:
    if protocol is None:
        return False
    peer = getattr(protocol, "peer", None)
    if peer is None:
        transport = protocol.transport
        address = transport.get_extra_info("peername") if transport is not None else None
        if not isinstance(address, tuple) or len(address) < 2:
            return False
        try:
            peer = normalise_endpoint((str(address[0]), int(address[1])))
        except ValueError:
            return False
        if isinstance(protocol, _ResponseHandler):
            protocol.peer = peer
    return peer in permit.routed()


def open_session(network: Network, policy: FetchPolicy) -> aiohttp.ClientSession:
    """A client session for fetches under ``policy``; call inside the running event loop.

    Keep-alive pooling stays on (a TLS handshake per fetch would cost more CPU than the whole
    rest of the fetch), guarded by the pool check above. ``limit=0`` because aiohttp counts the
    wait for a pool slot against the connect timeout, which would turn load into false timeouts.
    Connection attempts go through the approved addresses one at a time in answer order
    (``happy_eyeballs_delay=None``), so the first that connects wins.
    """
    connector = _GuardedConnector(
        resolver=_PermitResolver(),
        use_dns_cache=False,
        ssl=network.ssl_context,
        socket_factory=_checked_socket,
        happy_eyeballs_delay=None,
        limit=0,
        limit_per_host=0,
    )
    return aiohttp.ClientSession(
        connector=connector,
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
        auto_decompress=False,
        raise_for_status=False,
        request_class=_request_class(policy.user_agent),
        # connect covers TCP + TLS on each hop; the whole-request limit is a timer on the fetch
        # task. ceil_threshold=inf keeps aiohttp from rounding the limit up.
        timeout=aiohttp.ClientTimeout(
            total=None, connect=policy.connect_timeout, ceil_threshold=math.inf
        ),
    )


def _request_class(user_agent: str) -> type[ClientRequest]:
    """A request class whose automatic headers are the fetch's own.

    Every request carries ``User-Agent``, ``Accept`` and ``Accept-Encoding``. As session default
    headers they would be copied into a fresh header map and then re-added one by one on every
    request; as the request class's automatic headers aiohttp sets them directly, as it sets its
    own defaults. ``skip_auto_headers`` is never passed, so they are always sent.
    """

    class _FetchRequest(ClientRequest):
        DEFAULT_HEADERS = {  # noqa: RUF012 - aiohttp's own name and shape
            hdrs.ACCEPT: ACCEPT,
            hdrs.ACCEPT_ENCODING: ACCEPT_ENCODING,
            hdrs.USER_AGENT: user_agent,
        }

    return _FetchRequest


#: The request timer for a session without a total timeout (the fetch's deadline is its own); it
#: holds no state, so every request shares one.
_NO_TIMER = TimerNoop()


async def send_get(
    session: aiohttp.ClientSession, url: URL, headers: dict[str, str] | None
) -> ClientResponse:
    """Send ``GET url`` over ``session``'s guarded connector; return the response, head read.

    This is what ``ClientSession.get(url, allow_redirects=False)`` does for a fetch, minus the
    per-request machinery a fetch never uses: cookie filtering, proxy and netrc lookup, auth,
    URL rebuilding, tracing, middlewares, redirect handling and a total-timeout handle. Measured
    on ``bench/fetch.py``, that machinery cost more CPU than every check the fetch adds
    (docs/benchmarks.md). What is left is aiohttp's own core, unchanged: the session's
    connector (with its permit checks and pool), its request class and its response parser
    limits, the connect timeout mapped to ``ConnectionTimeoutError`` as aiohttp maps it, and
    aiohttp's single retry of a request whose connection the server dropped (most often a
    pooled connection that had gone stale); a connection that could not be made is not retried.

    It reads a few of the session's private attributes; aiohttp is pinned to the 3.14 series
    (pyproject.toml), and every network test goes through here.
    """
    connector = session.connector
    if connector is None or session.closed:
        raise aiohttp.ClientConnectionError("the fetch session is closed")
    timeout = session.timeout
    retry_stale_connection = True
    while True:
        request = session._request_class(
            hdrs.METH_GET,
            url,
            headers=headers,
            loop=session._loop,
            response_class=session._response_class,
            session=session,
            timer=_NO_TIMER,
        )
        try:
            return await _exchange_once(session, connector, request, timeout)
        except aiohttp.ClientConnectorError:
            raise  # no connection was made, so none was stale (aiohttp retries none either)
        except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
            if not retry_stale_connection:
                raise
            retry_stale_connection = False


async def _exchange_once(
    session: aiohttp.ClientSession,
    connector: aiohttp.BaseConnector,
    request: ClientRequest,
    timeout: aiohttp.ClientTimeout,
) -> ClientResponse:
    """One attempt: a connection (pooled or new), the request, the response head."""
    try:
        connection = await connector.connect(request, traces=[], timeout=timeout)
    except TimeoutError as exc:
        raise aiohttp.ConnectionTimeoutError(f"Connection timeout to host {request.url}") from exc
    protocol = connection.protocol
    assert protocol is not None  # a connection handed out by the connector is open
    protocol.set_response_params(
        timer=_NO_TIMER,
        read_until_eof=True,
        auto_decompress=False,
        read_timeout=timeout.sock_read,
        read_bufsize=session._read_bufsize,
        timeout_ceil_threshold=connector._timeout_ceil_threshold,
        max_line_size=session._max_line_size,
        max_field_size=session._max_field_size,
        max_headers=session._max_headers,
    )
    try:
        response = await request.send(connection)
        try:
            await response.start(connection)
        except BaseException:
            response.close()
            raise
    except BaseException:
        connection.close()
        raise
    return response
