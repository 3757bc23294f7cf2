"""Admission rules: which targets a caller may request, and which addresses it may then dial.

The guarded connector enforces one dial semantics for everyone: connect only to the addresses of
a fresh :class:`~runvil._net.permit.DialPermit`. What differs between callers is how the permit
is decided, and that is a rule passed in as a parameter:

* :data:`PUBLIC_WEB` (``web/fetch``): any target the fetch's own URL admission approved (those
  checks, and their spec messages, live in :mod:`runvil.web.fetch.admission`); every address
  goes through the blocked table (:mod:`runvil._net.addresses`).
* :class:`EndpointLocked` (``web/search``): only the ``host:port`` pairs a provider declared,
  over ``https`` only; addresses through the blocked table too, unless the operator declared the
  endpoint private (``allow_private``: a self-hosted SearXNG on the LAN), which also allows
  plain ``http`` for it.
* :func:`operator_endpoints` (the model clients): only the endpoints the operator configured, any
  address they resolve to (a local model server on ``127.0.0.1`` is the common case, and the
  operator named it), over ``http`` or ``https``.

Whatever the rule, a resolver answer that is not an IP address is never dialled, and an IP
literal target needs no lookup: it is its own answer, judged like any other.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Protocol

from runvil._net.addresses import allowed_addresses, is_ip_address
from runvil._net.network import Network
from runvil._net.permit import DialPermit

__all__ = [
    "PUBLIC_WEB",
    "AddressRule",
    "EndpointLocked",
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
    """

    __slots__ = ("_all_allowed", "_limit", "_longest")

    def __init__(self, limit: int = 4096, longest: int = 16) -> None:
        self._all_allowed: set[tuple[str, ...]] = set()
        self._limit = limit
        self._longest = longest

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]:
        key = tuple(answers)
        if key in self._all_allowed:
            return key
        allowed = allowed_addresses(host, key)
        if len(allowed) != len(key):
            return tuple(allowed)
        if len(key) > self._longest:
            return key
        if len(self._all_allowed) >= self._limit:
            self._all_allowed.clear()
        self._all_allowed.add(key)
        return key


#: The one public-web rule (its memo of judged answers is shared by every fetch in the process).
PUBLIC_WEB = PublicWeb()


class EndpointLocked:
    """Only the declared ``(host, port)`` endpoints, over ``schemes``; the blocked table applies
    to their addresses unless ``allow_private`` (the operator's explicit, named exception)."""

    __slots__ = ("allow_private", "endpoints", "logger", "schemes")

    def __init__(
        self,
        endpoints: Iterable[tuple[str, int]],
        *,
        allow_private: bool = False,
        schemes: Iterable[str] = ("https",),
        logger: logging.Logger,
    ) -> None:
        self.endpoints = frozenset((host.lower().rstrip("."), port) for host, port in endpoints)
        self.allow_private = allow_private
        self.schemes = frozenset(schemes)
        self.logger = logger

    def admits(self, scheme: str, host: str, port: int | None) -> bool:
        """Whether a request to ``scheme://host:port`` is one this rule was made for."""
        return (
            scheme in self.schemes
            and port is not None
            and (host.lower().rstrip("."), port) in self.endpoints
        )

    def allowed(self, host: str, answers: Sequence[str]) -> tuple[str, ...]:
        if self.allow_private:
            return tuple(answer for answer in answers if is_ip_address(answer))
        return tuple(allowed_addresses(host, answers, self.logger))


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
