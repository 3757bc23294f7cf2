"""The fetch policy: every limit a ``web/fetch`` call runs under.

``FetchPolicy()`` is the specification's default policy and the only one a Pack or a prompt ever
gets. An embedding application, or a test that needs a one-second timeout, may build another in
Python, and an operator sets fields through ``runvil.toml``, the environment or flags
(docs/configuration.md); nothing a model or a prompt says can change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runvil._net.hostnames import PrivateHosts, normal_host
from runvil._net.proxy import proxy_setting

#: What the spec allows under the default policy; not configurable because no Pack may loosen it.
ALLOWED_SCHEMES: frozenset[str] = frozenset({"https"})
ALLOWED_PORTS: frozenset[int] = frozenset({80, 443})


@dataclass(frozen=True)
class FetchPolicy:
    """Limits for one fetch. Defaults are the spec's default fetch policy."""

    connect_timeout: float = 5.0
    """Seconds each hop has to open its TCP connection (TLS handshake included)."""
    timeout: float = 20.0
    """Seconds for the whole request, every redirect hop and the body included."""
    max_redirects: int = 5
    """Redirect hops followed; the next one is refused."""
    max_bytes: int = 8_388_608
    """Cap on the decoded body, in bytes (a body of exactly this size is accepted)."""
    max_chars: int = 40_000
    """Ceiling on returned characters; ``max_chars`` arguments above it are lowered to it."""
    user_agent: str = "harness-webfetch/0.0"
    """The User-Agent header every request carries."""

    # -- the operator's network (docs/company-network.md) -----------------------------------
    # Every field below is empty by default, and empty means exactly the behaviour above.
    private_hosts: tuple[str, ...] = ()
    """Host names that may resolve to private, CGNAT, loopback or unique-local addresses and may
    be fetched over ``http`` too: ``wiki.corp.example``, ``*.corp.example`` (subdomains only),
    ``localhost:8080`` (that port only). Never link-local, multicast, broadcast or unspecified
    addresses; never an IP-literal URL; and a redirect reaches a listed host only from one."""
    allowed_domains: tuple[str, ...] = ()
    """When not empty, only hosts equal to or below one of these domains are fetched."""
    blocked_domains: tuple[str, ...] = ()
    """Hosts equal to or below one of these domains are never fetched."""
    proxy: str | None = field(default=None, repr=False)
    """The egress proxy: ``http://[user:password@]host:port``, or ``"env"`` to read
    ``HTTPS_PROXY`` and friends (ignored otherwise). Each hop is still resolved and judged here;
    the proxy only ever gets a CONNECT to an approved address (docs/company-network.md). Kept
    out of ``repr``: it may hold a password."""

    def __post_init__(self) -> None:
        for name in ("private_hosts", "allowed_domains", "blocked_domains"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (tuple, list, frozenset, set)):
                raise ValueError(f"{name} must be a list of host names, not {value!r}")
            object.__setattr__(self, name, tuple(value))
        PrivateHosts.parse(self.private_hosts)
        object.__setattr__(self, "proxy", proxy_setting(self.proxy))
        for name in ("allowed_domains", "blocked_domains"):
            for entry in getattr(self, name):
                domain_entry(entry, name)


def domain_entry(entry: object, setting: str = "allowed_domains") -> str:
    """A ``allowed_domains`` / ``blocked_domains`` entry as the host parser writes it; raises
    ``ValueError`` naming the entry for anything that is not a domain name."""
    if not isinstance(entry, str):
        raise ValueError(f"{setting} entry {entry!r} is not a string")
    if entry.strip().startswith(("*.", ".")):
        bare = entry.strip().lstrip("*.")
        raise ValueError(
            f"{setting} entry {entry!r}: write the domain itself ({bare}); it covers every "
            "subdomain"
        )
    try:
        return normal_host(entry.strip())
    except ValueError as err:
        raise ValueError(f"{setting} entry {entry!r} is {err}") from None
