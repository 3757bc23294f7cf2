"""A fetch's outcome as a typed value, for Python programs (``await WebFetch().fetch(url)``).

A model reads the tool's text: the provenance header, then the page, or a failure message in
its place. A Python program should not have to parse that, so :meth:`WebFetch.fetch
<runvil.web._fetch.tool.WebFetch.fetch>` returns a :class:`FetchResult` instead. It is made *from*
the tool's text, by the one grammar the header has (docs/fetch.md), so the two can never
disagree: ``fetch`` and ``call`` are the same call, read two ways.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FetchResult", "parse_result"]

#: The provenance header: ``url``, ``truncated``, ``next_start_index`` (continuation only, when
#: truncated), ``extraction``, then a blank line. A soft failure never starts with ``url: ``.
_HEADER = re.compile(
    r"url: (?P<url>[^\n]*)\n"
    r"truncated: (?P<truncated>true|false)\n"
    r"(?:next_start_index: (?P<next>[0-9]+)\n)?"
    r"extraction: (?P<extraction>[a-z-]+)\n"
    r"(?:\n|\Z)"
)

#: ``error_kind`` of a soft failure (as in the CLI's ``--json``).
SOFT = "Soft"


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One fetch, read for a program.

    On success ``ok`` is True, ``text`` is the page's text (without the header), ``url`` the
    final URL, ``truncated`` and ``extraction`` are the header's, and ``next_start_index`` says
    where to read on (``start_index=``) when the policy offers continuation and text remains.
    On failure ``ok`` is False, ``text`` is empty, and ``message`` is the exact text a model
    would read; ``error_kind`` is ``"Soft"`` for a soft failure (a 404, a timeout, a refused
    redirect: the call's result text) and the hard failure's kind (``"InvalidArguments"``,
    ``"Other"``) otherwise.
    """

    ok: bool
    text: str = ""
    url: str | None = None
    truncated: bool = False
    extraction: str | None = None
    error_kind: str | None = None
    message: str | None = None
    next_start_index: int | None = None

    @classmethod
    def failure(cls, error_kind: str, message: str) -> FetchResult:
        return cls(ok=False, error_kind=error_kind, message=message)


def parse_result(text: str) -> FetchResult:
    """Read the tool's result text: a page after its header, or a soft failure."""
    match = _HEADER.match(text)
    if match is None:
        return FetchResult.failure(SOFT, text)
    following = match.group("next")
    return FetchResult(
        ok=True,
        text=text[match.end() :],
        url=match.group("url"),
        truncated=match.group("truncated") == "true",
        extraction=match.group("extraction"),
        next_start_index=int(following) if following is not None else None,
    )
