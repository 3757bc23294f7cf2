"""Absolute URLs for links and images, resolved against the page's address.

A relative ``href`` resolves against the page's ``<base href>`` when it declares one (itself
resolved against the final URL, as a browser does), otherwise against the final URL of the
fetch. Links a model cannot follow (``javascript:``, ``vbscript:``, ``data:``) resolve to
``None`` so only their text is printed. Spaces and parentheses are percent-encoded so the URL
cannot end a markdown link early.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

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
    origin = _origin(base)

    def resolve(href: str) -> str | None:
        found = cache.get(href, "")
        if found != "":
            return found
        cleaned = href.strip(_CONTROL).replace("\t", "").replace("\n", "").replace("\r", "")
        result: str | None
        if not cleaned or cleaned[:11].lower().replace(" ", "").startswith(_UNFOLLOWABLE):
            result = None
        else:
            plain = "/." not in cleaned and "\\" not in cleaned
            if plain and cleaned.startswith(("https://", "http://")):
                joined: str | None = cleaned  # already absolute: skip urljoin, the costly part
            elif plain and origin and cleaned[0] == "/" and cleaned[1:2] != "/":
                joined = origin + cleaned  # root-relative, the other common case
            else:
                joined = _join(base, cleaned)
            result = joined.translate(_ESCAPES) if joined else None
        cache[href] = result
        return result

    return resolve


def _origin(base: str) -> str:
    """``scheme://host[:port]`` of an http(s) base, or ``""`` when the base is anything else."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def _join(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href)
    except ValueError:
        return None
