"""Which of a provider's rows a model is shown: web addresses only, inside the operator's lists.

A search result is a suggestion the model may act on (fetch it, cite it, hand it to a user). Two
kinds of row are dropped before the output is built, for every provider:

* a row whose url is not an ``http`` or ``https`` URL with a host, read by the WHATWG parser as a
  browser and ``web/fetch`` read it: ``javascript:``, ``data:``, ``file:``, ``mailto:``, an
  opaque or relative string, and every spelling of those (``JavaScript:``, a leading space, a
  tab inside the scheme). Nothing a model could do with such a url is a web search's business,
  and a ``javascript:`` or ``data:`` url handed on to a user's browser is an attack;
* when the operator set ``allowed_domains`` / ``blocked_domains`` (the fetch policy's lists, off
  by default), a row whose host those lists refuse, by the very rule the fetch applies to every
  hop (:func:`runvil._net.hostnames.domain_refused`): a model is not pointed at a site it may
  not read.

The url itself is never rewritten: a row is shown exactly as the provider gave it, or not at
all. Rows keep their order. The empty-url check (the whole response refused, naming the first
such row's index in the provider's order) runs before this, so its index is the provider's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ada_url import URL, HostType

from runvil._net.hostnames import domain_entry, domain_refused
from runvil.web._search.provider import SearchResult

__all__ = ["DomainLists", "shown_rows"]

#: The schemes a shown row's url may have.
WEB_SCHEMES = frozenset({"http:", "https:"})


class DomainLists:
    """The operator's ``allowed_domains`` and ``blocked_domains`` as the search tool applies
    them. Entries are host names, read by the host parser (``Bücher.Example.`` is
    ``xn--bcher-kva.example``); ``ValueError`` names a bad one."""

    __slots__ = ("allowed", "blocked")

    def __init__(self, allowed: Iterable[str] = (), blocked: Iterable[str] = ()) -> None:
        self.allowed = _entries(allowed, "allowed_domains")
        self.blocked = _entries(blocked, "blocked_domains")

    def __bool__(self) -> bool:
        return bool(self.allowed or self.blocked)

    def __repr__(self) -> str:
        return f"DomainLists(allowed={list(self.allowed)!r}, blocked={list(self.blocked)!r})"


def _entries(entries: Iterable[str], setting: str) -> tuple[str, ...]:
    if isinstance(entries, str):
        raise ValueError(f"{setting} must be a list of host names, not {entries!r}")
    return tuple(domain_entry(entry, setting) for entry in entries)


#: No lists: every web row is shown (the default).
NO_DOMAIN_LISTS = DomainLists()


def shown_rows(
    results: Sequence[SearchResult], lists: DomainLists = NO_DOMAIN_LISTS
) -> list[SearchResult]:
    """The rows a model is shown, in the provider's order (see the module docstring)."""
    return [row for row in results if _shown(row.url, lists)]


def _shown(url: object, lists: DomainLists) -> bool:
    if not isinstance(url, str):
        return True  # not a string: the renderer refuses the response; never hidden here
    try:
        parsed = URL(url)
    except UnicodeError:
        return True  # not valid Unicode: the renderer refuses the response, as it always did
    except ValueError:
        return False
    if parsed.protocol not in WEB_SCHEMES:
        return False
    host: str = parsed.hostname
    if not host:
        return False
    if not lists:
        return True
    if parsed.host_type != HostType.DEFAULT:
        return not lists.allowed  # an IP literal is below no allowed domain, blocked by none
    return not domain_refused(host, lists.allowed, lists.blocked)
