"""The fetch policy: every limit a ``web/fetch`` call runs under.

``FetchPolicy()`` is the specification's default policy and the only one a Pack or a prompt ever
gets. An embedding application, or a test that needs a one-second timeout, may build another in
Python; nothing a model or a prompt says can change it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
