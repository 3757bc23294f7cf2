"""The operator's host rules for one fetch tool: named private hosts and the domain lists.

A :class:`FetchPolicy` holds them as plain lists of names (what ``runvil.toml`` holds);
:class:`HostRules` is the same lists read once, when the tool is built, into matchers the
admission checks (:mod:`runvil.web._fetch.admission`) consult on every hop. A policy that sets
none of them has no ``HostRules`` at all (:func:`host_rules` returns ``None``), so the default
fetch runs exactly the checks it always ran.

Domain lists: a host matches a listed domain when it equals it or is a subdomain of it, compared
after the WHATWG host parse (lowercase, punycode) and without a trailing dot, so
``docs.example.com`` matches ``example.com`` and ``badexample.com`` does not. A ``blocked_domains``
match always refuses; a non-empty ``allowed_domains`` refuses every host that matches none.
Names are compared in the one spelling of :func:`runvil._net.hostnames.host_key`; a name with
an empty label never reaches the lists (admission refuses it wherever host rules apply), and
were one to, the lists would refuse it.
"""

from __future__ import annotations

from collections.abc import Iterable

from runvil._net.addresses import INVALID, private_host_may_use
from runvil._net.hostnames import PrivateHosts, domain_entry, domain_refused
from runvil.web._fetch.policy import FetchPolicy

__all__ = [
    "NOT_AN_IP_ADDRESS",
    "HostRules",
    "host_rules",
    "lists_private_host",
    "may_serve_a_private_host",
]

#: The table row of a refused answer that is not an IP address (``FetchOutcome.refused``).
NOT_AN_IP_ADDRESS = INVALID


def lists_private_host(private_hosts: Iterable[str], host: str) -> bool:
    """Whether a ``private_hosts`` list names ``host`` on some port (what a hint that explains
    a refusal asks)."""
    return PrivateHosts.parse(private_hosts).names(host)


def may_serve_a_private_host(ip: str) -> bool:
    """Whether a named private host could be dialled at ``ip`` (public, private, CGNAT,
    loopback or unique local): a refused answer in such a row is a host of the operator's own
    network, not one no fetch may reach."""
    return private_host_may_use(ip)


class HostRules:
    """What a policy's ``private_hosts``, ``allowed_domains`` and ``blocked_domains`` say."""

    __slots__ = ("allowed", "blocked", "private")

    def __init__(
        self,
        private: PrivateHosts,
        allowed: tuple[str, ...] = (),
        blocked: tuple[str, ...] = (),
    ) -> None:
        self.private = private
        self.allowed = allowed
        self.blocked = blocked

    def domain_refused(self, host: str) -> bool:
        """Whether the domain lists refuse ``host`` (a WHATWG host)."""
        return domain_refused(host, self.allowed, self.blocked)


def host_rules(policy: FetchPolicy) -> HostRules | None:
    """The policy's host rules, or ``None`` when it sets none (the default policy)."""
    if not (policy.private_hosts or policy.allowed_domains or policy.blocked_domains):
        return None
    return HostRules(
        PrivateHosts.parse(policy.private_hosts),
        tuple(domain_entry(d, "allowed_domains") for d in policy.allowed_domains),
        tuple(domain_entry(d, "blocked_domains") for d in policy.blocked_domains),
    )
