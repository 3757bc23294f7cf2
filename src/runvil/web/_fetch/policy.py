"""The fetch policy: every limit a ``web/fetch`` call runs under.

``FetchPolicy()`` is the specification's default policy: what ``WebFetch()``, ``Host()`` and the
Pack in prompt files run under. An embedding application, an operator's settings (``runvil.toml``,
the environment, flags; docs/configuration.md), or a test that needs a one-second timeout may
choose another; nothing a model or a prompt says can change it. The operator's network settings
and the reading extensions (continuation, PDFs, robots.txt) are fields here, empty or off in the
default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from runvil._net.hostnames import PrivateHosts, normal_host
from runvil._net.proxy import proxy_setting
from runvil._net.trust import check_ca_bundle

if TYPE_CHECKING:
    from runvil.web._fetch.continuation import Held
    from runvil.web._fetch.runstore import RunStoreBackend

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
    render_timeout: float = 10.0
    """Seconds an HTML page has to render once its body has arrived, waiting for room included.
    Past them the page comes back as plain text (``extraction: raw-html``), so a result arrives
    within ``timeout + render_timeout``. Not in the specification, which leaves rendering time
    open; the worst 8 MiB page renders in about two seconds of CPU."""

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
    ca_bundle: str | None = None
    """A PEM file of CA certificates (a company's own CA) trusted in addition to the public
    roots, for every request of the fetch: pages, redirects, robots.txt and the tunnels of
    ``proxy``. The file is read when the policy is made, so a missing or unreadable one raises
    ``ValueError`` at once. ``Network(ca_bundle=...)`` does the same for search and model
    requests too."""

    # -- reading more (runvil's extensions, all off in the seeds' default policy) ------------
    # docs/fetch.md, "Reading more". The faces turn continuation and pdf on (docs/configuration.md).
    continuation: bool = False
    """Offer the ``start_index`` argument, and keep each page's whole text for the run so a
    model can read on past ``max_chars`` (``next_start_index`` in the header)."""
    pdf: bool = False
    """Return PDFs (``application/pdf``, or ``application/octet-stream`` starting ``%PDF-``) as
    text, converted in a worker process under the byte cap, ``timeout`` and ``pdf_max_pages``."""
    pdf_max_pages: int = 200
    """Pages of a PDF converted at most; a longer PDF comes back cut (``truncated: true``)."""
    robots: bool = False
    """Before a page, fetch its site's robots.txt (through the same guard) and refuse what it
    disallows for the User-Agent's product token (RFC 9309)."""
    page_store: RunStoreBackend[Held] | None = field(default=None, repr=False, compare=False)
    """Where continuation keeps each run's pages: ``None`` is the process's own store; a face
    running as one of several replicas passes a store they share (docs/deploy.md)."""

    def __post_init__(self) -> None:
        if self.pdf_max_pages < 1:
            raise ValueError("pdf_max_pages must be at least 1")
        for name in ("private_hosts", "allowed_domains", "blocked_domains"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (tuple, list, frozenset, set)):
                raise ValueError(f"{name} must be a list of host names, not {value!r}")
            object.__setattr__(self, name, tuple(value))
        PrivateHosts.parse(self.private_hosts)
        object.__setattr__(self, "proxy", proxy_setting(self.proxy))
        if self.ca_bundle is not None:
            object.__setattr__(self, "ca_bundle", check_ca_bundle(self.ca_bundle))
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
