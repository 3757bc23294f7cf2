"""What a search provider is: the request it receives, the rows it returns, how it fails.

The ``web/search`` tool checks arguments and renders results; everything between (which vendor,
which HTTP request, which key) belongs to a :class:`SearchProvider` the host supplies. Keeping the
seam this narrow is what lets a provider be a small file and lets the tool hold one set of rules
for every vendor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from runvil._errors import KindedError, ToolErrorKind
from runvil._net.hostnames import has_empty_label, host_key

Freshness = Literal["pd", "pw", "pm", "py"]
SafeSearch = Literal["off", "moderate", "strict"]

FRESHNESS_VALUES: tuple[Freshness, ...] = ("pd", "pw", "pm", "py")
SAFESEARCH_VALUES: tuple[SafeSearch, ...] = ("off", "moderate", "strict")


@dataclass(frozen=True)
class SearchRequest:
    """One accepted call's eight arguments, exactly as the caller passed them.

    Absent scalars are ``None`` (so a provider can leave them out and let the vendor's own
    default apply) and absent domain lists are empty tuples. The request is hashable, which is
    what the tool's memo of identical searches keys on.
    """

    query: str
    count: int | None = None
    freshness: Freshness | None = None
    country: str | None = None
    search_lang: str | None = None
    safesearch: SafeSearch | None = None
    include_domains: tuple[str, ...] = ()
    exclude_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchResult:
    """One result row. ``age``, ``site_name`` and ``extra_snippets`` are optional because only
    some vendors report them; the tool leaves them out of the output when they are empty."""

    title: str
    url: str
    description: str
    age: str | None = None
    site_name: str | None = None
    extra_snippets: Sequence[str] = ()


class ProviderError(KindedError):
    """A failed search. ``kind`` is :attr:`ToolErrorKind.Transport` (the request or the response
    never made it) or :attr:`ToolErrorKind.Backend` (the vendor answered, but with an error or a
    body the provider cannot use). The tool reports it as ``web_search: {message}``.

    It has :class:`~runvil.ToolError`'s shape (``kind``, ``message``, ``str``, ``repr``) without
    being one: a provider error that escaped the tool must not pass for the tool's own failure.

    ``untrusted`` marks a message that quotes the backend's own text (its error body, its
    engine names); the tool's ``ToolError`` keeps the mark, and faces envelope such messages.
    """

    def __init__(self, kind: ToolErrorKind, message: str, *, untrusted: bool = False) -> None:
        if kind not in (ToolErrorKind.Transport, ToolErrorKind.Backend):
            raise ValueError(f"ProviderError kind must be Transport or Backend, not {kind.value}")
        super().__init__(kind, message, untrusted=untrusted)


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that can run a search.

    ``endpoints`` declares every ``host:port`` the provider talks to; its HTTP client refuses any
    other target. An in-process provider that reaches no network declares none.
    """

    @property
    def name(self) -> str: ...

    @property
    def endpoints(self) -> Sequence[str]: ...

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]: ...


def parse_endpoint(endpoint: str) -> tuple[str, int]:
    """Split a ``host:port`` declaration (``[v6]:port`` for IPv6) into a lowercase host and a port.

    Raises ``ValueError`` for anything else, so a provider with a broken declaration fails when
    it is handed to :class:`~runvil.web._search.WebSearch`, not on its first search.
    """
    host, sep, port_text = endpoint.rpartition(":")
    if not sep or not host or not port_text.isascii() or not port_text.isdigit():
        raise ValueError(f"search endpoint {endpoint!r} is not host:port")
    port = int(port_text)
    if not 0 < port < 65536:
        raise ValueError(f"search endpoint {endpoint!r} has port out of range")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or any(c in host for c in "/[]@ \t\r\n?#") or has_empty_label(host):
        raise ValueError(f"search endpoint {endpoint!r} has an invalid host")
    return host_key(host), port
