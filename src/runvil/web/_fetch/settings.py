"""The operator's network settings as the faces read and explain them.

Configuration (``runvil.toml``, variables, flags) and the command line's hints need a few of the
egress package's rules: how a ``private_hosts`` list or a proxy setting is checked, how a proxy is
shown without its password, which addresses a named private host may use. Only the web tools
and the model clients import :mod:`runvil._net` (docs/egress.md), so the faces get them here,
from the fetch they configure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from runvil._net.addresses import INVALID, private_host_may_use
from runvil._net.hostnames import PrivateHosts
from runvil._net.proxy import env_proxies, masked, proxy_setting

__all__ = [
    "INVALID_ADDRESS",
    "check_env_proxies",
    "check_private_hosts",
    "check_proxy",
    "listed_on_any_port",
    "may_serve_a_private_host",
    "shown_proxy",
]

#: The range the address table reports for an answer that is not an IP address.
INVALID_ADDRESS = INVALID


def check_private_hosts(entries: Iterable[str], setting: str) -> tuple[str, ...]:
    """A ``private_hosts`` list in its normal written form; ``ValueError`` naming ``setting``
    and the first bad entry."""
    return PrivateHosts.parse(entries, setting=setting).entries


def check_proxy(value: object) -> str | None:
    """A proxy setting: ``None`` (direct), ``"env"`` or the URL; ``ValueError`` that never quotes
    the value."""
    return proxy_setting(value)


def check_env_proxies(env: Mapping[str, str]) -> None:
    """The proxy variables ``"env"`` reads; ``ValueError`` naming a bad one, never its value."""
    env_proxies(env)


def shown_proxy(value: str | None) -> str | None:
    """A proxy setting with its credentials masked."""
    return masked(value)


def may_serve_a_private_host(ip: str) -> bool:
    """Whether a named private host could be dialled at ``ip`` (public, private, CGNAT,
    loopback or unique local)."""
    return private_host_may_use(ip)


def listed_on_any_port(private_hosts: Iterable[str], host: str) -> bool:
    """Whether ``private_hosts`` names ``host`` on some port."""
    return PrivateHosts.parse(private_hosts).names(host)
