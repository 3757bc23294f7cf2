"""The one egress client: a request in, a bounded response or a typed network error out.

The fetch (and its robots.txt reads), the search providers and the model clients all send their
requests through :class:`EgressClient`. What differs between them is a parameter of the request:

* the **admission rule** (:mod:`runvil._net.rules`) that turns the host's lookup into a permit;
* the method, the URL, the request's own headers and body;
* the **read plan** (:class:`ReadPlan`): the cap on the *decoded* body, whether a body over it is
  cut or refused, and whether an unreadable body is an error; or a function of the response head
  that returns the plan (the fetch judges status, type and declared length on the head alone, so
  a response it refuses costs no body download);
* a **deadline** (event-loop time) for the lookup, the exchange and the body, or none when the
  caller bounds the whole call itself;
* the **secrets** the request carries, handed back with the response for quoting what the
  server echoed (:mod:`runvil._net.secrets`).

What is the same for all of them is here once: the lookup and its permit, the guarded send,
the checks on the transfer and content codings, the declared and the decoded length, the
bounded decoders, the connection returned to the pool only after a body read to its end, and
the one vocabulary of failures (:mod:`runvil._net.errors`).

Below the client is a **transport**: :class:`GuardedTransport` in production (the guarded
session of :mod:`runvil._net.connector`, one keep-alive pool per event loop), or a
:class:`~runvil._net.mock.MockTransport` in tests of the search providers and the model
clients, which answers at the response level, above the guard. The guard's own tests keep real
servers on loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

import aiohttp
from aiohttp import hdrs
from multidict import CIMultiDictProxy
from yarl import URL

from runvil._net.body import BodyBuffer, read_decoded
from runvil._net.connector import open_session, send, untrusted_reason
from runvil._net.decoding import BodyDecodeError, BodyDecoder, UnsupportedEncoding, make_decoder
from runvil._net.errors import (
    BodyTooLarge,
    BodyUnreadable,
    CertificateFailed,
    ConnectFailed,
    LookupFailed,
    RequestFailed,
    TimedOut,
)
from runvil._net.network import Network
from runvil._net.permit import DialRefused
from runvil._net.proxy import Proxies
from runvil._net.rules import AddressRule, approve

if TYPE_CHECKING:
    from runvil._net.secrets import Secrets

__all__ = ["EgressClient", "GuardedTransport", "Head", "ReadPlan", "Response", "Transport"]

RawHeaders = tuple[tuple[bytes, bytes], ...]


class ReadPlan:
    """How the body of one response is read.

    ``limit``: the cap on the decoded body. ``keep_prefix``: a body over it keeps its first
    ``limit`` bytes (the response says ``cut``) instead of raising
    :class:`~runvil._net.errors.BodyTooLarge`; without it, a declared ``Content-Length`` over
    the cap is refused before any body byte is read. ``keep_unreadable``: a body that cannot be
    read (it broke off, or its coding is unknown or corrupt) comes back as ``body=None`` instead
    of raising (the search providers read an error status's body that way). ``read=False``: the
    body is not read at all (a redirect); the connection goes back to the pool only when the
    body is already over.

    A caller may subclass it to carry what it learnt from the head (the fetch does); the
    response hands the plan back. A plain slotted class: the fetch makes one per hop.
    """

    __slots__ = ("keep_prefix", "keep_unreadable", "limit", "read")

    def __init__(
        self,
        limit: int,
        *,
        keep_prefix: bool = False,
        keep_unreadable: bool = False,
        read: bool = True,
    ) -> None:
        self.limit = limit
        self.keep_prefix = keep_prefix
        self.keep_unreadable = keep_unreadable
        self.read = read


class _Content(Protocol):
    async def readchunk(self) -> tuple[bytes, bool]: ...
    def at_eof(self) -> bool: ...


class Head(Protocol):
    """A response whose head has been read: what a judge sees and the transport returns.
    aiohttp's ``ClientResponse`` is one; so is the mock transport's response."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> CIMultiDictProxy[str]: ...
    @property
    def raw_headers(self) -> RawHeaders: ...
    @property
    def content_length(self) -> int | None: ...
    @property
    def content(self) -> Any: ...
    def release(self) -> Any: ...
    def close(self) -> None: ...


Judge = Callable[[Head], ReadPlan]


class Response:
    """A response read under its plan: status, head, the decoded body (``None`` when not read,
    or unreadable under ``keep_unreadable``), whether it was cut at the cap, the plan it was
    read by, and the secrets its request carried."""

    __slots__ = ("body", "cut", "headers", "plan", "raw_headers", "secrets", "status")

    def __init__(
        self,
        status: int,
        headers: CIMultiDictProxy[str],
        raw_headers: RawHeaders,
        body: bytes | None,
        cut: bool,
        plan: ReadPlan,
        secrets: Secrets | None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.raw_headers = raw_headers
        self.body = body
        self.cut = cut
        self.plan = plan
        self.secrets = secrets

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Transport(Protocol):
    """What sends a request and returns its head: the guarded one, or a test's mock."""

    async def open(
        self,
        rule: AddressRule,
        host: str,
        port: int,
        method: str,
        url: URL,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        deadline: float | None,
    ) -> Head: ...

    def start(self) -> None:
        """Make what the requests share (a pool) in the running event loop, ahead of them."""

    async def aclose(self) -> None: ...


class EgressClient:
    """Sends requests over one transport (by default the guarded one, with ``headers`` on every
    request, ``connect_timeout`` per connection and the operator's ``proxies``).

    ``retry_dropped`` keeps aiohttp's single resend of a request whose connection the server
    dropped before answering (the fetch's GETs); the search providers and model clients turn it
    off, so a reset is a failure and their own retry rules are the only ones.
    """

    __slots__ = ("transport",)

    def __init__(
        self,
        network: Network | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float | None = None,
        proxies: Proxies | None = None,
        retry_dropped: bool = True,
        transport: Transport | None = None,
    ) -> None:
        self.transport: Transport = (
            transport
            if transport is not None
            else GuardedTransport(
                network if network is not None else Network(),
                headers=headers or {},
                connect_timeout=connect_timeout,
                proxies=proxies,
                retry_dropped=retry_dropped,
            )
        )

    def start(self) -> None:
        """Open the transport's pool now, in the running event loop (a request would on first
        use)."""
        self.transport.start()

    async def aclose(self) -> None:
        """Close the transport's pool; a later request opens a new one."""
        await self.transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def request(
        self,
        rule: AddressRule,
        url: URL,
        read: ReadPlan | Judge,
        *,
        method: str = hdrs.METH_GET,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        deadline: float | None = None,
        host: str | None = None,
        port: int | None = None,
        secrets: Secrets | None = None,
    ) -> Response:
        """Send one request and read its response under ``read`` (a plan, or a function of the
        head that returns one and may raise to refuse it).

        ``host``/``port``: what the lookup and the permit are for, when the caller's own parse
        of the URL differs from yarl's (the fetch's WHATWG host keeps a trailing dot). Redirects
        are never followed. Raises :class:`~runvil._net.network.DnsError`,
        :class:`~runvil._net.rules.NoAllowedAddress`, :class:`~runvil._net.proxy.ProxyRefused`,
        :class:`~runvil._net.decoding.UnsupportedEncoding` or one of
        :mod:`runvil._net.errors`; whatever the judge raises passes through.
        """
        response = await self.transport.open(
            rule,
            url.raw_host or "" if host is None else host,
            (url.port or 0) if port is None else port,
            method,
            url,
            headers,
            body,
            deadline,
        )
        try:
            plan = read if isinstance(read, ReadPlan) else read(response)
            data: bytes | None = None
            cut = False
            if not plan.read:
                if response.content.at_eof():
                    response.release()  # nothing left to read: keep the connection
            else:
                # The body read is inlined here (not a coroutine of its own): every time the
                # body's next piece wakes the fetch, each frame of the chain is re-entered.
                decoder = _checked_decoder(response, plan)
                if decoder is not False:
                    buffer = BodyBuffer(plan.limit, plan.keep_prefix)
                    ended = response.content.at_eof
                    try:
                        if deadline is None:
                            complete = await read_decoded(response, decoder, buffer, ended)
                        else:
                            async with asyncio.timeout_at(deadline):
                                complete = await read_decoded(response, decoder, buffer, ended)
                    except (aiohttp.ClientError, OSError, BodyDecodeError) as exc:  # +Timeout
                        if not plan.keep_unreadable:
                            raise BodyUnreadable(type(exc).__name__) from exc
                    else:
                        if not complete and not buffer.cut:
                            raise BodyTooLarge(plan.limit)
                        if complete:
                            response.release()  # read to its end: back to the pool
                        data, cut = buffer.joined(), buffer.cut
            return Response(
                response.status,
                response.headers,
                response.raw_headers,
                data,
                cut,
                plan,
                secrets,
            )
        finally:
            response.close()  # no-op after a complete read released the connection


def _checked_decoder(response: Head, plan: ReadPlan) -> BodyDecoder | Literal[False] | None:
    """The body's decoder (``None``: no coding) after the checks on the head, in order: the
    declared length (when a body over the cap is refused), then the transfer and content
    codings. ``False``: the codings cannot be read and ``plan`` keeps an unreadable body as
    ``None``."""
    if not plan.keep_prefix:  # a body kept up to the cap needs no declared length
        declared = response.content_length
        if declared is not None and declared > plan.limit:
            raise BodyTooLarge(plan.limit)
    try:
        return _decoder(response.raw_headers)
    except UnsupportedEncoding:
        if plan.keep_unreadable:
            return False
        raise


#: The lengths of the two field names :func:`_decoder` looks for.
_CODING_NAME_LENGTHS = frozenset((len(b"content-encoding"), len(b"transfer-encoding")))


def _decoder(raw: RawHeaders) -> BodyDecoder | None:
    """The decoder for the head's content coding (``None``: no coding), from the raw head in
    one pass. A transfer coding other than ``chunked`` (aiohttp undoes only that one; anything
    else would arrive still encoded, delimited by the close), a coding the decoders do not
    know, or two stacked codings raise :class:`UnsupportedEncoding`. Repeated lines are
    combined with ``", "``, as HTTP defines a repeated field."""
    coding: bytes | None = None
    transfer: bytes | None = None
    for key, value in raw:
        if len(key) not in _CODING_NAME_LENGTHS:
            continue  # most lines (Date, Server, Content-Type, ...): no lowercased copy
        name = key.lower()
        if name == b"content-encoding":
            coding = value if coding is None else coding + b", " + value
        elif name == b"transfer-encoding":
            transfer = value if transfer is None else transfer + b", " + value
    if transfer is not None and transfer.strip(b" \t").lower() != b"chunked":
        raise UnsupportedEncoding(transfer.decode("latin-1"))
    return None if coding is None else make_decoder(coding.decode("latin-1"))


class GuardedTransport:
    """The production transport: the host's lookup judged by the request's rule into a fresh
    permit, and the request sent over the guarded session (:mod:`runvil._net.connector`),
    which dials only that permit's addresses.

    The session is one keep-alive pool, opened inside the running event loop on first use; a
    pool left behind by another loop is let go (it cannot be closed from this one).
    """

    __slots__ = (
        "_loop",
        "_session",
        "connect_timeout",
        "headers",
        "network",
        "proxies",
        "retry_dropped",
    )

    def __init__(
        self,
        network: Network,
        *,
        headers: Mapping[str, str],
        connect_timeout: float | None = None,
        proxies: Proxies | None = None,
        retry_dropped: bool = True,
    ) -> None:
        self.network = network
        self.headers = dict(headers)
        self.connect_timeout = connect_timeout
        self.proxies = proxies
        self.retry_dropped = retry_dropped
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def session(self) -> aiohttp.ClientSession:
        """The pool of the running event loop (opened on first use)."""
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            if session is not None and not session.closed:
                session.detach()
            session = self._session = open_session(
                self.network.ssl_context,
                headers=self.headers,
                connect_timeout=self.connect_timeout,
                proxies=self.proxies,
            )
            self._loop = loop
        return session

    def start(self) -> None:
        self.session()

    async def aclose(self) -> None:
        """Close the pool; a later request opens a new one."""
        session, self._session, self._loop = self._session, None, None
        if session is not None and not session.closed:
            await session.close()

    async def open(
        self,
        rule: AddressRule,
        host: str,
        port: int,
        method: str,
        url: URL,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        deadline: float | None,
    ) -> aiohttp.ClientResponse:
        session = self.session()
        try:
            if deadline is None:
                permit = await approve(self.network, rule, host, port)
            else:
                limit = deadline
                if self.connect_timeout is not None:
                    limit = min(deadline, asyncio.get_running_loop().time() + self.connect_timeout)
                async with asyncio.timeout_at(limit):
                    permit = await approve(self.network, rule, host, port)
        except OSError as exc:  # TimeoutError (the deadline's, or the resolver's) included
            raise LookupFailed(type(exc).__name__) from exc
        try:
            if deadline is None:
                return await send(
                    session, url, headers, method=method, body=body,
                    retry_dropped=self.retry_dropped, permit=permit,
                )
            async with asyncio.timeout_at(deadline):
                return await send(
                    session, url, headers, method=method, body=body,
                    retry_dropped=self.retry_dropped, permit=permit,
                )
        except aiohttp.ServerTimeoutError as exc:
            raise TimedOut(type(exc).__name__) from exc
        except aiohttp.ClientConnectorCertificateError as exc:
            raise CertificateFailed(type(exc).__name__, *untrusted_reason(exc)) from exc
        except aiohttp.ClientConnectorError as exc:
            raise ConnectFailed(type(exc).__name__) from exc
        except (aiohttp.ClientError, OSError, DialRefused, ValueError) as exc:
            raise RequestFailed(type(exc).__name__) from exc  # the deadline's TimeoutError too
