"""Turning a call's JSON arguments into a :class:`SearchRequest`, or the specified refusal.

Two stages, in the spec's order. *Parsing* checks shape: exactly the eight keys, each with its
JSON type (null counts as absent), ``freshness`` and ``safesearch`` from their closed sets. Any
shape mistake is the single message ``web_search: invalid arguments``, with the reason kept only
as the exception's ``__cause__`` so the model is not handed a parser's wording. *Bounds* then
report the first broken rule by name: query emptiness, query length, count, country, search_lang,
include_domains, exclude_domains (each list's size before its entries).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any, cast

from runvil._errors import ToolError, ToolErrorKind
from runvil.web._search.provider import (
    FRESHNESS_VALUES,
    SAFESEARCH_VALUES,
    Freshness,
    SafeSearch,
    SearchRequest,
)

MAX_QUERY_CHARS = 400
MAX_COUNT = 20
MAX_CODE_CHARS = 128
MAX_DOMAINS = 20
MAX_HOSTNAME_CHARS = 128

ARGUMENT_KEYS = (
    "query",
    "count",
    "freshness",
    "country",
    "search_lang",
    "safesearch",
    "include_domains",
    "exclude_domains",
)


class ArgumentShapeError(ValueError):
    """Why the arguments did not parse. Kept as the ``__cause__`` of the invalid-arguments
    ToolError for the operator's logs; never shown in the message."""


def _invalid(field: str, why: str) -> ArgumentShapeError:
    return ArgumentShapeError(f"{field}: {why}")


def _refuse(message: str) -> ToolError:
    return ToolError(ToolErrorKind.InvalidArguments, f"web_search: {message}")


def parse_arguments(arguments: object) -> SearchRequest:
    """Parse and bound-check ``arguments`` (a mapping, or JSON text of an object)."""
    try:
        request = _parse(arguments)
    except ArgumentShapeError as exc:
        raise _refuse("invalid arguments") from exc
    _check_bounds(request)
    return request


def _parse(arguments: object) -> SearchRequest:
    if isinstance(arguments, (str, bytes, bytearray)):
        try:
            arguments = json.loads(arguments)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ArgumentShapeError("arguments are not JSON") from exc
    if not isinstance(arguments, Mapping):
        raise ArgumentShapeError("arguments must be a JSON object")
    args: Mapping[Any, Any] = arguments
    for key in args:
        if key not in ARGUMENT_KEYS:
            raise ArgumentShapeError(f"unknown argument {key!r}")

    query = _optional_string(args, "query")
    if query is None:
        raise _invalid("query", "missing")
    return SearchRequest(
        query=query,
        count=_optional_count(args),
        freshness=cast(Freshness | None, _optional_choice(args, "freshness", FRESHNESS_VALUES)),
        country=_optional_string(args, "country"),
        search_lang=_optional_string(args, "search_lang"),
        safesearch=cast(SafeSearch | None, _optional_choice(args, "safesearch", SAFESEARCH_VALUES)),
        include_domains=_string_list(args, "include_domains"),
        exclude_domains=_string_list(args, "exclude_domains"),
    )


def _optional_string(args: Mapping[Any, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(key, f"expected a string, got {type(value).__name__}")
    _check_unicode(key, value)
    return value


def _check_unicode(key: str, value: str) -> None:
    """A string holding an unpaired surrogate (JSON ``"\\ud800"`` decodes to one) is not
    Unicode text: a strict JSON parser refuses it, so it is a shape error here too, before any
    provider is asked to search for text that cannot be encoded."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _invalid(key, "the string is not valid Unicode") from None


def _optional_count(args: Mapping[Any, Any]) -> int | None:
    value = args.get("count")
    if value is None:
        return None
    # bool is an int subclass in Python but not a JSON integer; a float (even 5.0) is not one
    # either, matching a strict JSON integer parse.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid("count", f"expected a non-negative integer, got {type(value).__name__}")
    if value < 0:
        raise _invalid("count", "expected a non-negative integer, got a negative one")
    return value


def _optional_choice(args: Mapping[Any, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = _optional_string(args, key)
    if value is not None and value not in allowed:
        raise _invalid(key, f"expected one of {', '.join(allowed)}")
    return value


def _string_list(args: Mapping[Any, Any], key: str) -> tuple[str, ...]:
    value = args.get(key)
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise _invalid(key, f"expected an array of strings, got {type(value).__name__}")
    items: list[Any] | tuple[Any, ...] = value
    for item in items:
        if not isinstance(item, str):
            raise _invalid(key, f"expected strings, got an item of {type(item).__name__}")
        _check_unicode(key, item)
    return tuple(cast("list[str] | tuple[str, ...]", items))


def _check_bounds(request: SearchRequest) -> None:
    if not request.query.strip():
        raise _refuse("query must not be empty")
    if len(request.query) > MAX_QUERY_CHARS:
        raise _refuse(f"query exceeds {MAX_QUERY_CHARS} characters")
    if request.count is not None and not 1 <= request.count <= MAX_COUNT:
        raise _refuse(f"count must be between 1 and {MAX_COUNT}")
    for name, value in (("country", request.country), ("search_lang", request.search_lang)):
        if value is not None and (not value.strip() or len(value) > MAX_CODE_CHARS):
            raise _refuse(f"{name} must be 1..={MAX_CODE_CHARS} characters")
    for name, domains in (
        ("include_domains", request.include_domains),
        ("exclude_domains", request.exclude_domains),
    ):
        if len(domains) > MAX_DOMAINS:
            raise _refuse(f"{name} may list at most {MAX_DOMAINS} hostnames")
        if not all(is_bare_hostname(entry) for entry in domains):
            raise _refuse(f"{name} contains an invalid hostname")


def is_bare_hostname(entry: str) -> bool:
    """The spec's rule for a domain-list entry: not blank, at most 128 characters, and free of
    ``/``, whitespace and control characters."""
    if not entry.strip() or len(entry) > MAX_HOSTNAME_CHARS:
        return False
    return not any(
        c == "/" or c.isspace() or unicodedata.category(c) == "Cc" for c in entry
    )
