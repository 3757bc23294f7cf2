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

from runvil._net.hostnames import PrivateHosts
from runvil._net.hostnames import domain_entry as domain_entry  # the faces read entries here
from runvil._net.proxy import proxy_setting
from runvil._net.trust import check_ca_bundle

if TYPE_CHECKING:
    from runvil.web._fetch.continuation import Held
    from runvil.web._fetch.robots import KeptRobots
    from runvil.web._fetch.runstore import RunStoreBackend

#: What the spec allows under the default policy; not configurable because no Pack may loosen it.
ALLOWED_SCHEMES: frozenset[str] = frozenset({"https"})
ALLOWED_PORTS: frozenset[int] = frozenset({80, 443})
#: When a headless browser renders a page (``FetchPolicy.browser``).
BROWSER_MODES: tuple[str, ...] = ("never", "auto", "always")


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
    robots_store: RunStoreBackend[KeptRobots] | None = field(
        default=None, repr=False, compare=False
    )
    """Where ``robots`` also keeps each run's rules, for replicas that share them
    (docs/deploy.md); ``None``: only the process's own store."""

    # -- pages that JavaScript builds (docs/fetch.md, "Pages that JavaScript builds") ---------
    # Off in the seeds' default policy: with "never" no browser is looked for, imported or started.
    browser: str = "never"
    """When a headless browser renders an HTML page: ``"never"``, ``"auto"`` (only a page whose
    static rendering looks like an empty app shell) or ``"always"``. The browser has no network
    of its own: every request it makes is answered through this fetch's guard."""
    browser_path: str | None = None
    """The Chromium executable; ``None`` looks in the usual places (Debian's ``chromium`` and
    ``chromium-headless-shell``)."""
    browser_timeout: float = 15.0
    """Seconds a page has in the browser, from its start to its DOM snapshot."""

    def __post_init__(self) -> None:
        user_agent_value(self.user_agent)
        if self.browser not in BROWSER_MODES:
            raise ValueError(
                f"browser must be one of {', '.join(BROWSER_MODES)}, not {self.browser!r}"
            )
        if not self.browser_timeout > 0:
            raise ValueError("browser_timeout must be a positive number of seconds")
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


#: The longest User-Agent a policy may set. Servers refuse long request heads (nginx answers 400
#: past 8 KiB of one header line by default), and a product token and a version need a few dozen.
MAX_USER_AGENT = 1024


def user_agent_value(value: object, setting: str = "user_agent") -> str:
    """The one rule for a User-Agent, wherever it is set (a ``FetchPolicy``, ``runvil.toml``, a
    variable, a flag): a string of printable ASCII (space to ``~``) of at most
    :data:`MAX_USER_AGENT` characters. A CR or LF would end the header (aiohttp then refuses the
    request, and every fetch failed as a misleading network error), a non-ASCII character went
    out as raw UTF-8, and a 64 KiB value was answered 400. Raises ``ValueError`` naming
    ``setting``, never quoting the value."""
    if not isinstance(value, str):
        raise ValueError(f"{setting} must be a string")
    if any(not " " <= c <= "~" for c in value):
        raise ValueError(f"{setting} must be printable ASCII (an HTTP header value)")
    if len(value) > MAX_USER_AGENT:
        raise ValueError(f"{setting} must be at most {MAX_USER_AGENT} characters")
    return value
