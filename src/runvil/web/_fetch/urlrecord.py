"""The few WHATWG URL record fields admission reads, from one ada-url parse.

Admission runs on every fetch and every redirect hop, so its parse is on the hot path.
``ada_url.parse_url`` copies each field out through its own binding call and builds a dict; ada's
C API also reports where each component sits in the serialised href (``ada_get_components``),
so one copy of the href and a few slices give the same fields. Measured on the benchmark's URLs:
1.4 us per URL against 4.2 us for ``parse_url`` with the same fields.

The offsets are byte offsets into the UTF-8 href. A WHATWG serialisation is always ASCII (every
component percent-encodes or punycodes what is not), so they are character offsets as well.
Should an href ever not be ASCII, or an ada-url release drop these C functions, the record comes
from ``parse_url`` instead; the tests hold both paths to the same answers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ada_url import parse_url

__all__ = ["UrlRecord", "parse_record"]

try:
    from ada_url.ada_adapter import ffi as _ffi  # type: ignore[attr-defined]
    from ada_url.ada_adapter import lib as _lib  # type: ignore[attr-defined]

    _FAST = all(
        hasattr(_lib, name)
        for name in (
            "ada_parse",
            "ada_parse_with_base",
            "ada_is_valid",
            "ada_free",
            "ada_get_href",
            "ada_get_components",
            "ada_get_host_type",
            "ada_has_credentials",
        )
    )
except ImportError:  # pragma: no cover - an ada-url without its cffi module
    _FAST = False

# ada reports an absent component offset (no port, no query, no fragment) as uint32 max.
_OMITTED = 0xFFFFFFFF
_FIELDS = ("href", "username", "password", "port", "hostname", "pathname", "host_type")


class UrlRecord(NamedTuple):
    """The parsed URL, in ada-url's (WHATWG) terms."""

    href: str
    """The serialised URL, fragment included."""
    has_credentials: bool
    """A non-empty username or password."""
    port: str
    """The written port; ``""`` when absent or the scheme's default."""
    hostname: str
    """The host, brackets kept on an IPv6 literal."""
    pathname: str
    host_type: int
    """``ada_url.HostType``: 0 a domain, 1 IPv4, 2 IPv6."""


def parse_record(raw: str, base: str | None = None) -> UrlRecord | None:
    """Parse ``raw`` (relative to ``base`` when given) with the WHATWG algorithm; None when it
    is not a valid absolute URL.

    A lone surrogate cannot be encoded to UTF-8, so such a string is invalid rather than being
    silently repaired to U+FFFD: the URL that is checked must be the URL that was given.
    """
    try:
        data = raw.encode()
        base_data = None if base is None else base.encode()
    except UnicodeEncodeError:
        return None
    if _FAST:
        try:
            return _parse_fast(data, base_data)
        except _Unsliceable:  # pragma: no cover - the WHATWG serialiser never gets here
            pass
    return _parse_slow(raw, base)


class _Unsliceable(Exception):
    """The href is not ASCII, so ada's byte offsets are not character offsets."""


def _parse_fast(data: bytes, base: bytes | None) -> UrlRecord | None:
    if base is None:
        url = _lib.ada_parse(data, len(data))
    else:
        url = _lib.ada_parse_with_base(data, len(data), base, len(base))
    try:
        if not _lib.ada_is_valid(url):
            return None
        serialised = _lib.ada_get_href(url)
        href: str = _ffi.buffer(serialised.data, serialised.length)[:].decode()
        if not href.isascii():  # pragma: no cover - the WHATWG serialiser never does this
            raise _Unsliceable
        parts: Any = _lib.ada_get_components(url)
        credentials = bool(_lib.ada_has_credentials(url))
        host_type = int(_lib.ada_get_host_type(url))
        host_start: int = parts.host_start
        host_end: int = parts.host_end
        port: int = parts.port
        path_start: int = parts.pathname_start
        search_start: int = parts.search_start
        hash_start: int = parts.hash_start
    finally:
        _lib.ada_free(url)
    if host_start < host_end and href[host_start] == "@":
        host_start += 1  # with credentials, host_start is the "@" that ends them
    if search_start != _OMITTED:
        path_end = search_start
    elif hash_start != _OMITTED:
        path_end = hash_start
    else:
        path_end = len(href)
    return UrlRecord(
        href=href,
        has_credentials=credentials,
        port="" if port == _OMITTED else str(port),
        hostname=href[host_start:host_end],
        pathname=href[path_start:path_end],
        host_type=host_type,
    )


def _parse_slow(raw: str, base: str | None) -> UrlRecord | None:
    """The same record through ``ada_url.parse_url``: one binding call per field."""
    from ada_url import join_url

    try:
        if base is not None:
            raw = join_url(base, raw)
        fields: dict[str, Any] = dict(parse_url(raw, attributes=_FIELDS))
    except ValueError:  # also UnicodeEncodeError, a ValueError subclass
        return None
    return UrlRecord(
        href=fields["href"],
        has_credentials=bool(fields["username"] or fields["password"]),
        port=fields["port"],
        hostname=fields["hostname"],
        pathname=fields["pathname"],
        host_type=int(fields["host_type"]),
    )
