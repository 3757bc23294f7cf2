"""Absolute URLs for links and images, resolved against the page's address.

A relative ``href`` resolves against the page's ``<base href>`` when it declares one (itself
resolved against the final URL, as a browser does), otherwise against the final URL of the
fetch. Links a model cannot follow (``javascript:``, ``vbscript:``, ``data:``) resolve to
``None`` so only their text is printed. Spaces and parentheses are percent-encoded so the URL
cannot end a markdown link early.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin

_UNFOLLOWABLE = ("javascript:", "vbscript:", "data:")
_CONTROL = "".join(chr(code) for code in range(0x21)) + "\x7f"
_ESCAPES = str.maketrans({" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E"})


def make_resolver(base_url: str, base_href: str | None) -> Callable[[str], str | None]:
    """Return ``resolve(href) -> absolute URL | None``, memoised for repeated links."""
    base = base_url
    if base_href:
        joined = _join(base_url, base_href)
        if joined is not None and joined.startswith(("http://", "https://")):
            base = joined
    cache: dict[str, str | None] = {}

    def resolve(href: str) -> str | None:
        found = cache.get(href, "")
        if found != "":
            return found
        cleaned = href.strip(_CONTROL).replace("\t", "").replace("\n", "").replace("\r", "")
        result: str | None
        if not cleaned or cleaned[:11].lower().replace(" ", "").startswith(_UNFOLLOWABLE):
            result = None
        else:
            if cleaned.startswith(("https://", "http://")) and "/." not in cleaned:
                joined: str | None = cleaned  # already absolute: skip urljoin, the costly part
            else:
                joined = _join(base, cleaned)
            result = joined.translate(_ESCAPES) if joined else None
        cache[href] = result
        return result

    return resolve


def _join(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href)
    except ValueError:
        return None
