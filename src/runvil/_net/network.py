"""The network seam: how runvil resolves names, where it dials and which CAs it trusts.

Everything that touches the outside world (a fetch, a search provider, a model endpoint) goes
through a :class:`Network`. In production it is the system resolver, the identity route and the
system trust store. Tests inject a fake resolver, a route map that sends public-looking addresses
to loopback servers, and a test CA, so the whole path (admission rules included) runs for real
without any traffic leaving the machine.

An admission rule always judges what ``resolve`` returned, *before* ``route`` is applied: a
route only says where an already approved address is physically reached.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from runvil._net.trust import ca_bundle_path, trust_ca_bundle

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
    """Resolver, route map and TLS trust used by every fetch, search and model request.

    ``ca_bundle``: a PEM file of CA certificates (a company's own CA) trusted in addition to
    what ``ssl_context`` trusts (the public roots by default). It is loaded into
    ``ssl_context`` when the Network is made, so a missing or unreadable file raises
    ``ValueError`` there and then. (A context you pass in gains the bundle's CAs too.)
    """

    resolve: Resolve = system_resolve
    route: Route = identity_route
    ssl_context: ssl.SSLContext = field(default_factory=_default_ssl_context)
    ca_bundle: str | None = None

    def __post_init__(self) -> None:
        if self.ca_bundle is not None:
            path = ca_bundle_path(self.ca_bundle)
            object.__setattr__(self, "ca_bundle", path)
            trust_ca_bundle(self.ssl_context, path)


def with_ca_bundle(network: Network, ca_bundle: str | None) -> Network:
    """``network``, trusting ``ca_bundle`` too (``network`` itself when there is none, or when
    it trusts that file already)."""
    if ca_bundle is None or network.ca_bundle == ca_bundle_path(ca_bundle):
        return network
    return dataclasses.replace(network, ca_bundle=ca_bundle)
