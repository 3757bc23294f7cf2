"""The network seam: how a fetch resolves names, where it dials and which CAs it trusts.

Everything that touches the outside world goes through a :class:`Network`. In production it is
the system resolver, the identity route and the system trust store. Tests inject a fake resolver,
a route map that sends public-looking addresses to loopback servers, and a test CA, so the whole
fetch path (policy checks included) runs for real without any traffic leaving the machine.

The address policy always judges what ``resolve`` returned, *before* ``route`` is applied: a
route only says where an already approved address is physically reached.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from runvil.web.fetch.addresses import allowed_addresses

Resolve = Callable[[str], Awaitable[list[str]]]
Route = Callable[[str, int], tuple[str, int]]


class DnsError(Exception):
    """A name lookup failed (NXDOMAIN, SERVFAIL, timeout). Not an ``OSError`` on purpose: aiohttp
    would otherwise relabel it as its own DNS error."""


async def system_resolve(host: str) -> list[str]:
    """Resolve ``host`` with the system resolver, returning addresses in answer order.

    A lookup that fails raises :class:`DnsError`; an answer with no address returns ``[]``.
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno in _NO_ADDRESS_ERRNOS:
            return []
        raise DnsError(host) from exc
    except (OSError, UnicodeError) as exc:
        raise DnsError(host) from exc
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


_NO_ADDRESS_ERRNOS = frozenset(
    errno
    for errno in (getattr(socket, "EAI_NODATA", None), getattr(socket, "EAI_ADDRFAMILY", None))
    if errno is not None
)


def identity_route(ip: str, port: int) -> tuple[str, int]:
    """Dial an approved address exactly where it is."""
    return ip, port


def _default_ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()


@dataclass(frozen=True)
class Network:
    """Resolver, route map and TLS trust used by every fetch and search request."""

    resolve: Resolve = system_resolve
    route: Route = identity_route
    ssl_context: ssl.SSLContext = field(default_factory=_default_ssl_context)


class NoAllowedAddress(Exception):
    """Every address a host resolved to is blocked (or it resolved to none): nothing may be
    dialled. The fetch turns this into the hard ``host {host} has no allowed address``."""

    def __init__(self, host: str) -> None:
        super().__init__(host)
        self.host = host


class DialRefused(Exception):
    """A connection attempt outside the current hop's approved addresses.

    Raised by the last-line checks in :mod:`runvil.web.fetch.connector` (the resolver hook, the
    socket factory, the pooled-connection check). It is deliberately not an ``OSError``, so no
    layer of aiohttp can mistake it for a routine connect failure and try the next address.
    """


class DialPermit:
    """The addresses one hop may connect to: its host's checked answer, in answer order.

    A permit is made fresh for every hop of every call (no approval is ever cached, which is what
    defeats DNS rebinding) and is consulted by every connection the hop opens or reuses. The
    route is applied lazily, once per permit, and only to approved addresses. A slotted class:
    one lives for every fetch in flight.
    """

    __slots__ = ("_routed", "addresses", "connections_opened", "host", "port", "route")

    def __init__(self, host: str, port: int, addresses: tuple[str, ...], route: Route) -> None:
        self.host = host
        self.port = port
        self.addresses = addresses
        self.route = route
        self.connections_opened = 0
        self._routed: tuple[tuple[str, int], ...] | None = None

    def __repr__(self) -> str:
        return f"DialPermit(host={self.host!r}, port={self.port}, addresses={self.addresses!r})"

    def routed(self) -> tuple[tuple[str, int], ...]:
        """Where each approved address is physically dialled, in answer order."""
        if self._routed is None:
            self._routed = tuple(
                normalise_endpoint(self.route(ip, self.port)) for ip in self.addresses
            )
        return self._routed

    def allows(self, host: str, port: int) -> bool:
        """Whether a socket to ``(host, port)`` reaches one of this hop's approved addresses."""
        try:
            endpoint = normalise_endpoint((host, port))
        except ValueError:
            return False
        return endpoint in self.routed()


@functools.lru_cache(maxsize=1024)
def normalise_endpoint(endpoint: tuple[str, int]) -> tuple[str, int]:
    """``(ip, port)`` with the IP in canonical text, so ``::1`` and ``0:0::1`` compare equal.

    A route must return an IP address: a name here would be looked up by the socket layer,
    behind the policy's back, so it is refused with ``ValueError``. Cached: the same few
    endpoints are checked on every fetch, and parsing an address is most of a check's cost.
    """
    host, port = endpoint
    return str(ipaddress.ip_address(str(host).split("%", 1)[0])), int(port)


async def approve_host(network: Network, host: str, port: int) -> DialPermit:
    """Resolve ``host`` once and keep only the answers the blocked table allows.

    Raises :class:`DnsError` when the lookup fails and :class:`NoAllowedAddress` when no answer
    may be dialled. The lookup has no timer of its own: a resolver reports its own timeouts as
    :class:`DnsError` (the system resolver does), and the whole-request deadline bounds one that
    never answers.
    """
    answers = await network.resolve(host)
    key = tuple(answers)
    if key not in _ALL_ALLOWED:
        allowed = allowed_addresses(host, answers)
        if not allowed:
            raise NoAllowedAddress(host)
        if len(allowed) == len(key):
            _remember_all_allowed(key)
        else:
            key = tuple(allowed)
    return DialPermit(host=host, port=port, addresses=key, route=network.route)


#: Answers whose every address the blocked table allows. The table is fixed and its verdict on an
#: address never changes, so an answer seen once need not be judged again; an answer with any
#: blocked address is never remembered, so its debug log lines are written on every lookup.
#: Bounded by count and by entry size: a name is the model's choice and its answer its DNS
#: server's, which can list thousands of addresses; such an answer is judged every time.
_ALL_ALLOWED: set[tuple[str, ...]] = set()
_ALL_ALLOWED_LIMIT = 4096
_ALL_ALLOWED_LONGEST = 16


def _remember_all_allowed(answer: tuple[str, ...]) -> None:
    if len(answer) > _ALL_ALLOWED_LONGEST:
        return
    if len(_ALL_ALLOWED) >= _ALL_ALLOWED_LIMIT:
        _ALL_ALLOWED.clear()
    _ALL_ALLOWED.add(answer)
