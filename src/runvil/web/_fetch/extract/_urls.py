"""Absolute URLs for links and images, resolved against the page's address.

A relative ``href`` resolves against the page's ``<base href>`` when it declares one (itself
resolved against the final URL, as a browser does), otherwise against the final URL of the
fetch. Only ``http``, ``https`` and ``mailto`` URLs are printed: anything else (``javascript:``,
``vbscript:``, ``data:``, ``file:``, ``ftp:``, an app's own scheme...) resolves to ``None`` so
only the link's text is printed. Characters that could end or change a markdown link destination
(spaces and other whitespace, controls, parentheses, angle brackets, backslashes) are
percent-encoded, so the URL stays one URL and means what it meant.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

_PRINTED = ("http://", "https://", "mailto:")
_CONTROL = "".join(chr(code) for code in range(0x21)) + "\x7f"
_ESCAPES = str.maketrans(
    {
        **{chr(code): f"%{code:02X}" for code in range(0x21)},
        "\x7f": "%7F",
        "(": "%28",
        ")": "%29",
        "<": "%3C",
        ">": "%3E",
    }
)


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
        result: str | None = None
        if cleaned:
            plain = "/." not in cleaned and "\\" not in cleaned
            if plain and cleaned.startswith(("https://", "http://")):
                joined: str | None = cleaned  # already absolute: skip urljoin, the costly part
            elif plain and origin and cleaned[0] == "/" and cleaned[1:2] != "/":
                joined = origin + cleaned  # root-relative, the other common case
            else:
                joined = _join(base, cleaned)
            if joined and joined[:8].lower().startswith(_PRINTED):
                result = joined.translate(_ESCAPES)
                if "\\" in result:
                    result = _backslashes(result)
        cache[href] = result
        return result

    return resolve


def _backslashes(url: str) -> str:
    """Backslashes as a browser reads them: a ``/`` in an http(s) URL before its query, else
    ``%5C`` (a backslash before punctuation would be a markdown escape)."""
    split = min((url.find(mark) for mark in "?#" if mark in url), default=len(url))
    head, rest = url[:split], url[split:]
    if not head.lower().startswith("mailto:"):
        head = head.replace("\\", "/")
    return (head + rest).replace("\\", "%5C")


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
