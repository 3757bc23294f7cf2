"""Admission rules: which targets a caller may request, and which addresses it may then dial.

The guarded connector enforces one dial semantics for everyone: connect only to the addresses of
a fresh :class:`~runvil._net.permit.DialPermit`. What differs between callers is how the permit
is decided, and that is a rule passed in as a parameter:

* :data:`PUBLIC_WEB` (``web/fetch``): any target the fetch's own URL admission approved (those
  checks, and their spec messages, live in :mod:`runvil.web._fetch.admission`); every address
  goes through the blocked table (:mod:`runvil._net.addresses`).
* :data:`NAMED_PRIVATE` (``web/fetch``, for a host the operator listed in ``private_hosts``):
  the blocked table, except that private, CGNAT, loopback and unique-local addresses are allowed
  (:data:`~runvil._net.addresses.PRIVATE_HOST_RANGES`); link-local, the metadata address,
  multicast, broadcast and every IPv4-in-IPv6 form stay refused.
* :class:`EndpointLocked` (``web/search``): only the ``host:port`` pairs a provider declared,
  over ``https`` only; addresses through the blocked table too, except for an endpoint the
  operator declared private (``search.allow_private``, or listed in ``private_hosts``): its
  addresses are judged as a named private host's, and plain ``http`` is allowed for it.
* :func:`operator_endpoints` (the model clients): only the endpoints the operator configured, any
  address they resolve to (a local model server on ``127.0.0.1`` is the common case, and the
  operator named it), over ``http`` or ``https``.

Whatever the rule, a resolver answer that is not an IP address is never dialled, and an IP
literal target needs no lookup: it is its own answer, judged like any other.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, KeysView, Sequence
from typing import Protocol

from runvil._net.addresses import allowed_addresses, is_ip_address
from runvil._net.hostnames import host_key
from runvil._net.network import Network
from runvil._net.permit import DialPermit

__all__ = [
    "NAMED_PRIVATE",
    "PUBLIC_WEB",
    "AddressRule",
    "EndpointLocked",
    "NamedPrivate",
    "NoAllowedAddress",
    "PublicWeb",
    "approve",
    "operator_endpoints",
]


class NoAllowedAddress(Exception):
    """Every address a host resolved to is refused by the rule (or it resolved to none): nothing
    may be dialled. The fetch turns this into the hard ``host {host} has no allowed address``."""

    def __init__(self, host: str, answers: Sequence[str] = ()) -> None:
        super().__init__(host)
        self.host = host
        self.answers = tuple(answers)


class AddressRule(Protocol):
    """What :func:`approve` needs of a rule: the answers for ``host`` that may be dialled."""

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]: ...


class PublicWeb:
    """The fetch's rule: every answer judged by the blocked table.

    Its verdicts are remembered per answer: the table is fixed and its verdict on an address
    never changes, so an answer seen once need not be judged again. An answer with any blocked
    address is never remembered, so its debug log lines are written on every lookup. The memo is
    bounded by count and by entry size: a name is the model's choice and its answer its DNS
    server's, which can list thousands of addresses; such an answer is judged every time.

    A remembered answer is handed back as the tuple the memo holds, not the one just built to
    look it up: the permit keeps it while its request waits, and a shared tuple is one object
    fewer alive per request for Python's collector to count (docs/benchmarks.md).
    """

    __slots__ = ("_limit", "_longest", "_memo")

    def __init__(self, limit: int = 4096, longest: int = 16) -> None:
        self._memo: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._limit = limit
        self._longest = longest

    @property
    def _all_allowed(self) -> KeysView[tuple[str, ...]]:
        """The answers remembered as allowed whole."""
        return self._memo.keys()

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]:
        key = tuple(answers)
        known = self._memo.get(key)
        if known is not None:
            return known
        allowed = allowed_addresses(host, key)
        if len(allowed) != len(key):
            return tuple(allowed)
        if len(key) > self._longest:
            return key
        if len(self._memo) >= self._limit:
            self._memo.clear()
        self._memo[key] = key
        return key


#: The one public-web rule (its memo of judged answers is shared by every fetch in the process).
PUBLIC_WEB = PublicWeb()


class NamedPrivate:
    """The rule for a host the operator named private: a public answer or one in
    :data:`~runvil._net.addresses.PRIVATE_HOST_RANGES` may be dialled, nothing else.

    Used only for a target the operator's list names (the fetch decides that per hop, the search
    egress per declared endpoint); it is the one place that exception is applied.
    """

    __slots__ = ("logger",)

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]:
        if self.logger is None:
            return tuple(allowed_addresses(host, answers, private_host=True))
        return tuple(allowed_addresses(host, answers, self.logger, private_host=True))


#: The named-private rule with the fetch's logger.
NAMED_PRIVATE = NamedPrivate()


class EndpointLocked:
    """Only the declared ``(host, port)`` endpoints, over ``schemes``.

    Their addresses go through the blocked table, except for the endpoints in ``private`` (the
    operator declared them private): those are judged by the named-private rule and may also be
    reached over plain ``http``. ``allow_private`` lifts the table for every endpoint (any
    address the name resolves to): the model clients' rule, whose endpoints the operator wrote
    down one by one.

    The address exception is looked up by host (a rule judges a lookup, which has no port): a
    provider declares one endpoint per host, so this is the endpoint's own exception.
    """

    __slots__ = ("_private_hosts", "allow_private", "endpoints", "logger", "private", "schemes")

    def __init__(
        self,
        endpoints: Iterable[tuple[str, int]],
        *,
        allow_private: bool = False,
        private: Iterable[tuple[str, int]] = (),
        schemes: Iterable[str] = ("https",),
        logger: logging.Logger,
    ) -> None:
        self.endpoints = frozenset((host_key(host), port) for host, port in endpoints)
        self.private = frozenset((host_key(host), port) for host, port in private) & self.endpoints
        self._private_hosts = frozenset(host for host, _port in self.private)
        self.allow_private = allow_private
        self.schemes = frozenset(schemes)
        self.logger = logger

    def admits(self, scheme: str, host: str, port: int | None) -> bool:
        """Whether a request to ``scheme://host:port`` is one this rule was made for."""
        if port is None:
            return False
        endpoint = (host_key(host), port)
        if endpoint not in self.endpoints:
            return False
        return scheme in self.schemes or (scheme == "http" and endpoint in self.private)

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]:
        if self.allow_private:
            return tuple(answer for answer in answers if is_ip_address(answer))
        private = host_key(host) in self._private_hosts
        return tuple(allowed_addresses(host, answers, self.logger, private_host=private))


def operator_endpoints(
    endpoints: Iterable[tuple[str, int]], *, logger: logging.Logger
) -> EndpointLocked:
    """The model clients' rule: the endpoints the operator configured, wherever they resolve."""
    return EndpointLocked(
        endpoints, allow_private=True, schemes=("http", "https"), logger=logger
    )


async def approve(network: Network, rule: AddressRule, host: str, port: int) -> DialPermit:
    """Resolve ``host`` once and keep only the answers ``rule`` allows, as a fresh permit.

    Raises the resolver's :class:`~runvil._net.network.DnsError` when the lookup fails and
    :class:`NoAllowedAddress` when no answer may be dialled. The lookup has no timer of its own:
    a resolver reports its own timeouts as ``DnsError`` (the system resolver does), and each
    caller's deadline bounds one that never answers.
    """
    # Cheap first: a name (what a fetch always has) neither holds a colon nor ends in a digit.
    if (":" in host or host[-1:] in _DIGITS) and is_ip_address(host):
        answers: Sequence[str] = (host,)
    else:
        answers = await network.resolve(host)
    allowed = rule.allowed(host, answers)
    if not allowed:
        raise NoAllowedAddress(host, answers)
    return DialPermit(host, port, allowed, network.route)


_DIGITS = frozenset("0123456789")
