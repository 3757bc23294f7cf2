"""The fetch policy: every limit a ``web/fetch`` call runs under.

``FetchPolicy()`` is the specification's default policy: what ``WebFetch()``, ``Host()`` and the
Pack in prompt files run under. An embedding application, an operator's settings (``runvil.toml``,
flags), or a test that needs a one-second timeout may choose another; nothing a model or a prompt
says can change it. The reading extensions (continuation, PDFs, robots.txt) are fields here, off
in the default.
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

    def __post_init__(self) -> None:
        if self.pdf_max_pages < 1:
            raise ValueError("pdf_max_pages must be at least 1")
