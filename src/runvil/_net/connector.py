"""The guarded aiohttp session: it can only reach what the current request's permit approved.

aiohttp does the HTTP; this module decides where it may connect, for every caller alike (fetch,
search providers, model clients). Each request has a :class:`~runvil._net.permit.DialPermit`:
handed to :func:`send` with the request (the request carries it), or else the one in force in a
context variable (set by :class:`~runvil._net.permit.permitted`). Three independent checks
consult it:

1. **The lookup hook.** aiohttp never does DNS itself: when it needs a new connection it asks
   the connector's host lookup, which answers with the permit's approved addresses, already
   routed, in answer order, and refuses any host or port the permit was not made for. That
   includes an IP-literal URL, which aiohttp would otherwise dial as written, unrouted.
2. **The socket factory.** Just before ``connect()``, every socket's destination is checked
   against the permit. Nothing that slipped past the lookup hook can be dialled.
3. **The pool check.** A kept-alive connection is reused only when its peer is one of the current
   request's approved addresses. A connection approved on an earlier request is closed instead
   of reused if the name has since moved, so pooling never bypasses a fresh lookup.

Requests go out through :func:`send`, which drives the session's connector, request class and
response parser directly instead of through ``ClientSession.request`` (see its docstring for
why). Connection attempts go through the approved addresses one at a time, in answer order; the
first that connects wins.

The session is anonymous by construction: no proxy from the environment (``trust_env=False``,
whatever ``HTTPS_PROXY`` says; the operator's proxy is a parameter, and even then every hop is
approved here first and the proxy only ever gets a CONNECT to an approved address, see
:mod:`runvil._net.proxy`), a cookie jar that keeps nothing, no default credentials, fixed automatic
headers, and no automatic decompression (bodies go through the bounded decoders of
:mod:`runvil._net.decoding`).

This is the one module in runvil that touches aiohttp's private API (the protocol factory, the
host lookup, the session's request machinery). aiohttp is pinned to the 3.14 series
(pyproject.toml), and every network test goes through here.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import socket
from collections.abc import Mapping, Sequence
from ssl import SSLContext
from typing import Any, cast

import aiohttp
from aiohttp import hdrs
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.client_exceptions import cert_errors, ssl_errors
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ClientRequest, ClientResponse
from aiohttp.helpers import TimerNoop, ceil_timeout
from aiohttp.streams import StreamReader
from multidict import istr
from yarl import URL

from runvil._net.hostnames import host_key
from runvil._net.permit import (
    DialPermit,
    DialRefused,
    current_permit,
    normalise_endpoint,
    permitted,
)
from runvil._net.proxy import Proxies

__all__ = ["UNTRUSTED_LINE", "open_session", "send", "untrusted_reason"]

log = logging.getLogger("runvil.net")
#: The debug line for a refused server certificate: host, port, the verifier's reason, its
#: OpenSSL verify code (``None`` when the handshake gave none).
UNTRUSTED_LINE = "TLS certificate of %s:%s refused: %s (verify code %s)"


class _NoResolver(AbstractResolver):
    """The resolver aiohttp is given so it never builds its own: every lookup goes through the
    connector's permit hook instead, so one that reached here would be a bypass."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        raise DialRefused(f"lookup of {host}:{port} outside the permit hook")

    async def close(self) -> None:
        return None


def _checked_socket(addr_info: Any) -> socket.socket:
    """aiohttp's ``socket_factory``: the final check before any ``connect()``."""
    family, type_, proto, _canonname, sockaddr = addr_info
    permit = current_permit()
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


class _PermittedRequest(ClientRequest):
    """aiohttp's request, carrying the permit it may be dialled under.

    ``None`` (a request made through the session's own methods) means the permit in force in the
    context. :func:`send` sets it, so a request needs no context variable set and reset around
    it: the connector reads the permit from the request it is serving.
    """

    dial_permit: DialPermit | None = None


def _permit_of(req: ClientRequest) -> DialPermit:
    """The permit ``req`` is served under: its own, else the context's (:class:`DialRefused`
    when there is neither)."""
    permit = getattr(req, "dial_permit", None)
    return permit if permit is not None else current_permit()


class _GuardedConnector(aiohttp.TCPConnector):
    """A TCP connector that dials only the request's permitted addresses and reuses a pooled
    connection only for an approved peer."""

    def __init__(self, *, proxies: Proxies | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._proxies = proxies
        self._factory = cast(
            "functools.partial[ResponseHandler]",
            functools.partial(_ResponseHandler, loop=self._loop),
        )

    async def _resolve_host(
        self, host: str, port: int, traces: Sequence[Any] | None = None
    ) -> list[ResolveResult]:
        """The lookup hook: the permit's routed addresses instead of DNS, names and IP literals
        alike (aiohttp's own version dials an IP literal as written)."""
        permit = current_permit()
        if host_key(host) != host_key(permit.host) or port != permit.port:
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

    async def _create_connection(
        self, req: ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout
    ) -> ResponseHandler:
        """A new connection. The lookup hook and the socket factory are not told which request
        they serve, so the request's permit is put in force around them here (and only here:
        a request served from the pool sets no context variable)."""
        with permitted(_permit_of(req)):
            try:
                return await super()._create_connection(req, traces, timeout)
            except aiohttp.ClientConnectorCertificateError as exc:
                _log_untrusted(req, exc)
                raise

    # -- the proxy hook (runvil._net.proxy): the one place a tunnel replaces a direct dial -------

    async def _wrap_create_connection(
        self,
        *args: Any,
        addr_infos: list[Any],
        req: ClientRequest,
        timeout: aiohttp.ClientTimeout,
        client_error: type[Exception] = aiohttp.ClientConnectorError,
        **kwargs: Any,
    ) -> tuple[asyncio.Transport, ResponseHandler]:
        """A direct dial, unless the operator's proxy serves this request: then a CONNECT
        tunnel to the permit's approved addresses (:meth:`Proxies.open`), and TLS (when the
        request is ``https``) through it with the host name the request carries."""
        proxy = None
        if self._proxies is not None:
            proxy = self._proxies.proxy_for(req.url.scheme, req.url.raw_host or "")
        if proxy is None:
            return await super()._wrap_create_connection(
                *args, addr_infos=addr_infos, req=req, timeout=timeout,
                client_error=client_error, **kwargs,
            )
        assert self._proxies is not None
        # Every approved address is tried below, in order; the caller's loop must not try them
        # again one by one.
        addr_infos.clear()
        try:
            async with ceil_timeout(timeout.sock_connect, ceil_threshold=timeout.ceil_threshold):
                sock, peer = await self._proxies.open(proxy, current_permit())
                if kwargs.get("ssl") and self._ssl_shutdown_timeout:
                    kwargs["ssl_shutdown_timeout"] = self._ssl_shutdown_timeout
                try:
                    transport, protocol = await self._loop.create_connection(
                        *args, **kwargs, sock=sock
                    )
                except BaseException:
                    sock.close()
                    raise
        except cert_errors as exc:
            raise aiohttp.ClientConnectorCertificateError(req.connection_key, exc) from exc
        except ssl_errors as exc:
            raise aiohttp.ClientConnectorSSLError(req.connection_key, exc) from exc
        except OSError as exc:
            if exc.errno is None and isinstance(exc, TimeoutError):
                raise
            raise client_error(req.connection_key, exc) from exc
        if isinstance(protocol, _ResponseHandler):
            protocol.peer = normalise_endpoint(peer)
        return transport, protocol

    async def connect(
        self, req: ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout
    ) -> aiohttp.connector.Connection:
        permit = _permit_of(req)
        while True:
            opened_before = permit.connections_opened
            conn = await super().connect(req, traces, timeout)
            if _peer_allowed(conn.protocol, permit):
                return conn
            conn.close()
            if permit.connections_opened != opened_before:
                # A brand-new connection that fails the check: never retry in a loop.
                raise DialRefused("new connection reached an address that was not approved")


def _log_untrusted(req: ClientRequest, exc: aiohttp.ClientConnectorCertificateError) -> None:
    """Say why a server's certificate was refused (a debug line of ``runvil.net``): the
    caller's message is a plain network error, and this is how an operator learns that the fix
    may be a CA bundle (:mod:`runvil._net.trust`); the command line's hint reads the same
    reason from the client's :class:`~runvil._net.errors.CertificateFailed`."""
    reason, code = untrusted_reason(exc)
    log.debug(UNTRUSTED_LINE, req.url.raw_host or "", req.url.port, reason, code)


def untrusted_reason(exc: aiohttp.ClientConnectorCertificateError) -> tuple[str, int | None]:
    """Why a server's certificate was refused: the verifier's reason and its OpenSSL verify
    code (None when it gave none)."""
    cause = exc.certificate_error
    reason = getattr(cause, "verify_message", None) or str(cause)
    code = getattr(cause, "verify_code", None)
    return str(reason), code if isinstance(code, int) else None


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
    return permit.reaches(peer)


def open_session(
    ssl_context: SSLContext,
    *,
    headers: Mapping[str, str],
    connect_timeout: float | None = None,
    proxies: Proxies | None = None,
) -> aiohttp.ClientSession:
    """A guarded client session; call inside the running event loop.

    ``headers`` are sent on every request (a request's own headers of the same name win);
    ``connect_timeout`` bounds TCP + TLS for each connection, and is the only timer the session
    has: each caller puts its own deadline around the whole exchange.

    Keep-alive pooling stays on (a TLS handshake per request would cost more CPU than the whole
    rest of a fetch), guarded by the pool check above. ``limit=0`` because aiohttp counts the
    wait for a pool slot against the connect timeout, which would turn load into false timeouts.
    ``happy_eyeballs_delay=None``: the approved addresses are tried one at a time in answer order.
    ``proxies``: the operator's egress proxy (:mod:`runvil._net.proxy`); the approved addresses
    are then reached through CONNECT tunnels, and the connect timeout covers the tunnel too.
    """
    connector = _GuardedConnector(
        proxies=proxies,
        resolver=_NoResolver(),
        use_dns_cache=False,
        ssl=ssl_context,
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
        request_class=_request_class(headers),
        # ceil_threshold=inf keeps aiohttp from rounding the limit up.
        timeout=aiohttp.ClientTimeout(
            total=None, connect=connect_timeout, ceil_threshold=math.inf
        ),
    )


def _request_class(headers: Mapping[str, str]) -> type[ClientRequest]:
    """A request class whose automatic headers are ``headers``.

    As session default headers they would be copied into a fresh header map and then re-added
    one by one on every request; as the request class's automatic headers aiohttp sets them
    directly, as it sets its own defaults (which they replace). ``skip_auto_headers`` is never
    passed, so they are always sent, unless a request names the same header itself.
    """

    class _GuardedRequest(_PermittedRequest):
        DEFAULT_HEADERS = {istr(k): v for k, v in headers.items()}  # noqa: RUF012 - aiohttp's

    return _GuardedRequest


#: The request timer for a session without a total timeout (each caller's deadline is its own);
#: it holds no state, so every request shares one.
_NO_TIMER = TimerNoop()

#: aiohttp's trace hooks for a request: none (our sessions have no trace configs). aiohttp only
#: iterates the list, so every request shares this empty one instead of making its own: one
#: object fewer alive per request in flight (see :func:`send`).
_NO_TRACES: list[Any] = []


async def send(
    session: aiohttp.ClientSession,
    url: URL,
    headers: Mapping[str, str] | None = None,
    *,
    method: str = hdrs.METH_GET,
    body: bytes | None = None,
    retry_dropped: bool = True,
    permit: DialPermit | None = None,
) -> ClientResponse:
    """Send ``method url`` (with ``body``) over ``session``'s guarded connector; return the
    response with its head read. Redirects are never followed: a 3xx is returned as it is.

    This is what ``ClientSession.request(..., allow_redirects=False)`` does, minus the
    per-request machinery none of our callers uses: cookie filtering, proxy and netrc lookup,
    auth, URL rebuilding, tracing, middlewares, redirect handling and a total-timeout handle.
    Measured on ``bench/fetch.py``, that machinery cost more CPU than every check the fetch
    adds (docs/benchmarks.md). What is left is aiohttp's own core, unchanged: the session's
    connector (with its permit checks and pool), its request class and its response parser
    limits, and the connect timeout mapped to ``ConnectionTimeoutError`` as aiohttp maps it.

    ``retry_dropped`` is aiohttp's single resend of a request whose connection the server
    dropped before answering (most often a pooled connection that had gone stale); a connection
    that could not be made is never resent. The fetch keeps it (a GET); search providers and
    model clients turn it off, so a reset is a transport failure and their own retry rules are
    the only ones.

    ``permit`` is the request's dial permit; without one, the call must run under
    :class:`~runvil._net.permit.permitted`. Passing it is the cheaper way (a fetch does, on every
    hop): the request carries it, and the context variable is set only while a new connection is
    dialled. The session must come from :func:`open_session`.

    One attempt (a connection, the request, the response head) is written out inside the loop
    rather than as a coroutine of its own: every object a request keeps while it waits for its
    answer counts towards Python's young-generation threshold, and a fetch whose task ends a loop
    turn before its caller starts the next one lets those objects go all at once
    (docs/benchmarks.md, "Python's collector").
    """
    connector = session.connector
    if connector is None or session.closed:
        raise aiohttp.ClientConnectionError("the session is closed")
    timeout = session.timeout
    while True:
        request = session._request_class(
            method,
            url,
            headers=headers,
            data=body,
            loop=session._loop,
            response_class=session._response_class,
            session=session,
            timer=_NO_TIMER,
            traces=_NO_TRACES,
        )
        if permit is not None:
            cast("_PermittedRequest", request).dial_permit = permit
        try:
            try:
                connection = await connector.connect(request, _NO_TRACES, timeout)
            except TimeoutError as exc:
                raise aiohttp.ConnectionTimeoutError(
                    f"Connection timeout to host {request.url}"
                ) from exc
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
        except aiohttp.ClientConnectorError:
            raise  # no connection was made, so none was stale (aiohttp resends none either)
        except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
            if not retry_dropped:
                raise
            retry_dropped = False
