"""The dial permit: the only addresses a request may connect to, and the context that carries it.

An admission rule (:mod:`runvil._net.rules`) turns a host's lookup into a :class:`DialPermit`;
the request then runs inside :class:`permitted`, and every check in the guarded connector
(:mod:`runvil._net.connector`) consults the permit of the request it serves. A permit is made
fresh for every request (every hop of a fetch): no approval is ever cached, which is what
defeats DNS rebinding.
"""

from __future__ import annotations

import functools
import ipaddress
from contextvars import ContextVar

from runvil._net.network import Route

__all__ = [
    "DialPermit",
    "DialRefused",
    "current_permit",
    "normalise_endpoint",
    "permitted",
]


class DialRefused(Exception):
    """A connection attempt outside the current request's approved addresses.

    Raised by the last-line checks in :mod:`runvil._net.connector` (the lookup hook, the socket
    factory, the pooled-connection check). It is deliberately not an ``OSError``, so no layer of
    aiohttp can mistake it for a routine connect failure and try the next address.
    """


class DialPermit:
    """The addresses one request may connect to: its host's checked answer, in answer order.

    Consulted by every connection the request opens or reuses. The route is applied lazily, and
    only to approved addresses: kept once a new connection needs it (:meth:`routed`), applied
    without keeping by the pool check before that (:meth:`reaches`). A slotted class: one lives
    for every request in flight.
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
        routed = self._routed
        if routed is None:
            # A list, not a generator: tuple(generator) builds a ten-slot tuple and shrinks it,
            # and with the cached endpoints inside, that left Python's collector counting one
            # allocation per request that was never given back, so it ran about 30 collections
            # per 2,000 fetches instead of 3 (and, in turn, full collections of the heap).
            route, port = self.route, self.port
            endpoints = [normalise_endpoint(route(ip, port)) for ip in self.addresses]
            routed = self._routed = tuple(endpoints)
        return routed

    def reaches(self, endpoint: tuple[str, int]) -> bool:
        """Whether ``endpoint`` (normalised) is where one of the approved addresses is dialled:
        ``endpoint in self.routed()``, with the same errors, but without keeping the routes.

        The pool check asks this of every request a kept-alive connection serves. A request
        that needs no new connection then leaves no routes behind on its permit: one object
        fewer alive while it waits for its answer, which is what Python's collector counts
        (docs/benchmarks.md, "Python's collector"). A new connection builds and keeps them
        (:meth:`routed`).
        """
        routed = self._routed
        if routed is not None:
            return endpoint in routed
        route, port = self.route, self.port
        found = False
        for ip in self.addresses:  # every address, so a route that names no address raises
            if normalise_endpoint(route(ip, port)) == endpoint:
                found = True
        return found

    def allows(self, host: str, port: int) -> bool:
        """Whether a socket to ``(host, port)`` reaches one of this request's approved addresses."""
        try:
            endpoint = normalise_endpoint((host, port))
        except ValueError:
            return False
        return endpoint in self.routed()


@functools.lru_cache(maxsize=1024)
def normalise_endpoint(endpoint: tuple[str, int]) -> tuple[str, int]:
    """``(ip, port)`` with the IP in canonical text, so ``::1`` and ``0:0::1`` compare equal.

    A route must return an IP address: a name here would be looked up by the socket layer,
    behind the rule's back, so it is refused with ``ValueError``. Cached: the same few endpoints
    are checked on every request, and parsing an address is most of a check's cost.
    """
    host, port = endpoint
    return str(ipaddress.ip_address(str(host).split("%", 1)[0])), int(port)


_PERMIT: ContextVar[DialPermit | None] = ContextVar("runvil_dial_permit", default=None)


class permitted:
    """Run the enclosed requests under ``permit`` (and only it).

    Lowercase because it reads like the function it replaced. A plain class rather than
    ``contextlib.contextmanager``: it is entered once per fetch hop, and the generator machinery
    cost more than the context-variable set and reset it wraps.
    """

    __slots__ = ("_permit", "_token")

    def __init__(self, permit: DialPermit) -> None:
        self._permit = permit

    def __enter__(self) -> None:
        self._token = _PERMIT.set(self._permit)

    def __exit__(self, *exc_info: object) -> None:
        _PERMIT.reset(self._token)


def current_permit() -> DialPermit:
    """The permit of the request being served; :class:`DialRefused` outside any."""
    permit = _PERMIT.get()
    if permit is None:
        raise DialRefused("no dial permit for this request")
    return permit
