"""The blocked address table: which resolved addresses the public-web rule never dials.

A URL's host name says nothing about where it leads, so the address check runs on what the
resolver answered, on every hop, right before connecting. The table is DESIGN.md's: every range
the 2025 IANA special-purpose registries mark as not globally reachable, plus the IPv4-in-IPv6
forms (``::/96``, ``::ffff:0:0/96``) as whole rows, so an internal IPv4 target cannot be reached
by writing it as IPv6.

One form sits outside the rows: an IPv4-translated address (``::ffff:0:0:0/96``, RFC 2765's
SIIT form, ``::ffff:0:a.b.c.d``) is judged by the IPv4 address it carries, against the IPv4
rows, so ``::ffff:0:7f00:1`` is blocked as ``127.0.0.0/8``. Nothing else is blocked.

Rows are checked in table order and the first match names the range in the debug log, which is
why ``::1`` reports ``::1/128`` rather than the wider ``::/96``.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence

__all__ = [
    "BLOCKED_RANGES",
    "INVALID",
    "PRIVATE_HOST_RANGES",
    "allowed_addresses",
    "blocked_range",
    "is_ip_address",
    "private_host_may_use",
]

#: Where a dropped answer is logged unless the caller names its own logger: the fetch's, as
#: DESIGN.md documents the line (``host {host} resolved to blocked address ...``).
FETCH_LOGGER = logging.getLogger("runvil.web.fetch")

#: DESIGN.md's table, in its order: 16 IPv4 rows, then the IPv6 rows.
BLOCKED_RANGES: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        # IPv4
        "0.0.0.0/8",  # this network
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared address space (CGNAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local (cloud metadata lives here)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation (TEST-NET-1)
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation (TEST-NET-2)
        "203.0.113.0/24",  # documentation (TEST-NET-3)
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved
        "255.255.255.255/32",  # limited broadcast (inside 240/4, listed because the spec names it)
        # IPv6
        "::/128",  # unspecified
        "::1/128",  # loopback
        "::ffff:0:0/96",  # IPv4-mapped
        "::/96",  # IPv4-compatible
        "64:ff9b::/96",  # NAT64 well-known prefix
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard-only
        "100:0:0:1::/64",  # dummy prefix
        "2001::/23",  # IETF protocol assignments (Teredo included)
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing SIDs
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)

_V4_ROWS = tuple((net, str(net)) for net in BLOCKED_RANGES if net.version == 4)
_V6_ROWS = tuple((net, str(net)) for net in BLOCKED_RANGES if net.version == 6)

#: IPv4-translated addresses (``::ffff:0:a.b.c.d``): judged by the IPv4 address in their low 32
#: bits. Not inside ``::ffff:0:0/96`` (the mapped form) nor ``::/96``, so no row catches them.
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")

#: The range reported for an answer that is not an IP address at all (fail closed).
INVALID = "invalid"


def blocked_range(ip: str) -> str | None:
    """The CIDR text of the first table row containing ``ip``, or None when it may be dialled.

    Anything that does not parse as an IP address is blocked with the range ``"invalid"``: a
    resolver answer the table cannot judge is never dialled.
    """
    try:
        address = ipaddress.ip_address(ip)
    except (ValueError, TypeError):
        return INVALID
    if address.version == 4:
        return _first_row(address, _V4_ROWS)
    if address in IPV4_TRANSLATED:
        assert isinstance(address, ipaddress.IPv6Address)
        return _first_row(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), _V4_ROWS)
    return _first_row(address, _V6_ROWS)


def _first_row(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    rows: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...],
) -> str | None:
    for network, cidr in rows:
        if address in network:
            return cidr
    return None


#: The rows a named private host (:mod:`runvil._net.hostnames`) may resolve into: private
#: (RFC 1918), shared (CGNAT), loopback and unique local, each in its native form only. Every
#: other row stays blocked for it too: link-local with the cloud metadata address, this-network
#: and unspecified, multicast, broadcast and reserved, and every IPv4-in-IPv6 form (mapped,
#: compatible, translated, NAT64, 6to4, Teredo), whatever IPv4 address it carries.
PRIVATE_HOST_RANGES: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "::1/128",
        "fc00::/7",
    )
)


def private_host_may_use(ip: str) -> bool:
    """Whether a named private host may be dialled at ``ip``: a public address, or one in
    :data:`PRIVATE_HOST_RANGES`. Anything that is not an IP address is refused."""
    cidr = blocked_range(ip)
    return cidr is None or (cidr != INVALID and _in_private_host_rows(ip))


def _in_private_host_rows(ip: str) -> bool:
    """``ip`` (a valid address) in a row of :data:`PRIVATE_HOST_RANGES`, in its own family: an
    IPv4-translated or -mapped form is IPv6 and so never inside an IPv4 row."""
    address = ipaddress.ip_address(ip)
    return any(address in network for network in PRIVATE_HOST_RANGES)


def is_ip_address(text: str) -> bool:
    """Whether ``text`` is an IP address (v4 dotted quad or v6, no zone, no brackets)."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def allowed_addresses(
    host: str,
    answers: Sequence[str],
    logger: logging.Logger = FETCH_LOGGER,
    *,
    private_host: bool = False,
) -> list[str]:
    """The answers for ``host`` that may be dialled, in answer order.

    ``private_host`` says the operator named ``host`` a private host: its answers in
    :data:`PRIVATE_HOST_RANGES` are allowed too. Each dropped answer is logged at DEBUG on
    ``logger`` with the range that blocked it; the model-facing message names only the host, so
    this log is where the detail lives.
    """
    allowed: list[str] = []
    for answer in answers:
        cidr = blocked_range(answer)
        if cidr is None or (private_host and cidr != INVALID and _in_private_host_rows(answer)):
            allowed.append(answer)
        else:
            logger.debug(
                "host %s resolved to blocked address %s in range %s", host, answer, cidr
            )
    return allowed
