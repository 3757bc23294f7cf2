"""A fetch's outcome as a typed value, for Python programs (``await WebFetch().fetch(url)``).

A model reads the tool's text: the provenance header, then the page, or a failure message in
its place. A Python program should not have to parse that, so :meth:`WebFetch.fetch
<runvil.web._fetch.tool.WebFetch.fetch>` returns a :class:`FetchResult` instead. It is made *from*
the same :class:`~runvil.web._fetch.outcome.FetchOutcome` the tool's text is rendered from, so
the two can never disagree: ``fetch`` and ``call`` are the same call, read two ways.
"""

from __future__ import annotations

from dataclasses import dataclass

from runvil.web._fetch.outcome import SOFT, FetchOutcome

__all__ = ["SOFT", "FetchResult"]

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

    @classmethod
    def from_outcome(cls, outcome: FetchOutcome) -> FetchResult:
        """The fields of the fetch's own outcome (the value the tool's text is rendered from)."""
        if not outcome.ok:
            return cls.failure(outcome.error_kind or SOFT, outcome.message or "")
        return cls(
            ok=True,
            text=outcome.text,
            url=outcome.url,
            truncated=outcome.truncated,
            extraction=outcome.extraction,
            next_start_index=outcome.next_start_index,
        )
