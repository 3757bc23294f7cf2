"""Building the tool's output text from a provider's rows.

The output is compact JSON, ``{"query":...,"results":[...]}``, with UTF-8 kept as is. Each row
has ``title``, ``url`` and ``description`` first (empty strings when missing), then ``age``,
``site_name`` and ``extra_snippets`` only when they hold something. No other field ever reaches
the caller, whatever the provider's rows carry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from runvil._errors import ToolError, ToolErrorKind
from runvil.web._search.provider import SearchResult


class RenderError(Exception):
    """A provider returned rows the tool cannot serialise (wrong types, unpaired surrogates)."""


def check_urls(results: Sequence[SearchResult]) -> None:
    """Reject the whole response when any row's url is empty or whitespace, naming the first
    such row (zero-based), before any output is built. Something that is not a sequence of
    rows at all is a :class:`RenderError`."""
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise RenderError(f"the provider returned {type(results).__name__}, not a sequence")
    for index, row in enumerate(results):
        if not hasattr(row, "url"):
            raise RenderError(f"result {index} is a {type(row).__name__}, not a SearchResult")
        url = row.url
        if url is None or (isinstance(url, str) and not url.strip()):
            raise ToolError(
                ToolErrorKind.Backend,
                f"web_search: malformed search response: result {index} has an empty url",
            )


def render(query: str, results: Sequence[SearchResult]) -> str:
    """The compact JSON text for ``results``; raises :class:`RenderError` if it cannot be built."""
    rows = [_row(result) for result in results]
    text = json.dumps(
        {"query": query, "results": rows}, ensure_ascii=False, separators=(",", ":")
    )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # an unpaired surrogate, e.g. from a JSON "\ud800" escape
        raise RenderError("the results hold text that is not valid Unicode") from exc
    return text


def _row(result: SearchResult) -> dict[str, Any]:
    title = _text(result.title, "title")
    url = _text(result.url, "url")
    description = _text(result.description, "description")
    row: dict[str, Any] = {"title": title, "url": url, "description": description}
    age = _text(result.age, "age")
    if age:
        row["age"] = age
    site_name = _text(result.site_name, "site_name")
    if site_name:
        row["site_name"] = site_name
    snippets = result.extra_snippets
    if isinstance(snippets, (str, bytes)) or not isinstance(snippets, Sequence):
        raise RenderError("extra_snippets must be a sequence of strings")
    kept = [s for s in (_text(s, "extra_snippets") for s in snippets) if s.strip()]
    if kept:
        row["extra_snippets"] = kept
    return row


def _text(value: object, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RenderError(f"{field} must be a string, not {type(value).__name__}")
    return value
