"""The ``web/fetch`` arguments: their JSON schema and the checks a call's object must pass.

The arguments are one JSON object from Lua, a model or an MCP client. Only ``url``, ``max_chars``
and ``raw`` are read; any other key is ignored, and JSON ``null`` means the key is absent. The
checks run in the spec's order (url, max_chars, raw), then ``start_index`` when the policy has
``continuation`` (without it, ``start_index`` is an unknown key like any other), then the url's
length, and report only the first failure, each with its exact ``web_fetch:`` message and kind
InvalidArguments.

Why a length cap. Nothing else bounds what a caller may put in ``url``, and every later step
keeps a copy: the WHATWG parse, the request line, the HTTP library's per-URL caches (yarl keeps
the last 128 URLs it built), the result's provenance line and any message that names the URL.
A URL longer than :data:`MAX_URL_CHARS` is refused before any of that runs. The figure is the
request-line limit the web's servers enforce in practice (nginx and Apache answer 414 past about
8 KB; RFC 9110 asks for at least 8,000 octets), so a longer URL would rarely fetch anyway, while
the long URLs people do follow (tracking redirects, signed download links, search-result links)
are a few hundred to a few thousand characters. The check comes after the argument checks so
that each of their messages still answers exactly the inputs it answers in the seed: a call
with a long url and a bad ``max_chars`` still reads ``web_fetch: max_chars must be a positive
integer``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from runvil._errors import ToolError, ToolErrorKind

MISSING_URL = "web_fetch: missing url argument"
BAD_MAX_CHARS = "web_fetch: max_chars must be a positive integer"
BAD_RAW = "web_fetch: raw must be a boolean"
#: The longest ``url`` a call may pass, in characters (code points, as Python and Lua's
#: ``utf8.len`` count them).
MAX_URL_CHARS = 8192
URL_TOO_LONG = f"web_fetch: url is longer than {MAX_URL_CHARS} characters"
BAD_START_INDEX = "web_fetch: start_index must be a non-negative integer"

MAX_CHARS_DESCRIPTION = (
    "Maximum number of characters of text to return for this call. Clamped to the configured "
    "ceiling. Longer text is truncated on a character boundary and the result is flagged as "
    "truncated."
)
RAW_DESCRIPTION = (
    "Convert the whole HTML page to markdown instead of extracting the main article; use it "
    "for pages that are mostly a table or a list. Has no effect on non-HTML responses."
)
START_INDEX_DESCRIPTION = (
    "Character position to start from: pass the next_start_index of a truncated result to read "
    "the page on from where that result stopped."
)


class FetchRequest(NamedTuple):
    """A call's arguments after the checks: max_chars is already clamped to the ceiling.

    A named tuple: as immutable as a frozen dataclass and cheaper to build, once per call."""

    url: str
    max_chars: int
    raw: bool
    start_index: int = 0
    """Where the returned text starts (always 0 unless the policy offers continuation)."""


def offers_start_index(policy: Any) -> bool:
    """Whether a fetch under ``policy`` (a :class:`~runvil.web.FetchPolicy`) takes
    ``start_index``: only with ``continuation``. The one place that decides it, inside the tool
    (its schema and its argument checks); everything outside the tool asks :func:`reads_on` of
    the schema this decision made."""
    return bool(policy.continuation)


def parameters_schema(ceiling: int, *, continuation: bool = False) -> dict[str, Any]:
    """The JSON schema a model sees; ``max_chars`` publishes the policy's ceiling, and a policy
    with ``continuation`` adds ``start_index``."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The URL to fetch."},
            "max_chars": {
                "type": "integer",
                "minimum": 1,
                "maximum": ceiling,
                "description": MAX_CHARS_DESCRIPTION,
            },
            "raw": {"type": "boolean", "description": RAW_DESCRIPTION},
        },
        "required": ["url"],
    }
    if continuation:
        schema["properties"]["start_index"] = {
            "type": "integer",
            "minimum": 0,
            "description": START_INDEX_DESCRIPTION,
        }
    return schema


def reads_on(parameters: Mapping[str, Any]) -> bool:
    """Whether a ``web/fetch`` tool with the argument schema ``parameters`` reads on past its cut
    (it offers ``start_index``).

    The tool offers ``start_index`` exactly when its policy has ``continuation``, and this is the
    one question everything outside the tool asks about it: the MCP server's instructions, the
    command line's ``--start`` and :meth:`WebFetch.fetch` read the schema of the tool they
    serve, never a setting of their own.
    """
    properties = parameters.get("properties")
    return isinstance(properties, Mapping) and "start_index" in properties


def parse_arguments(
    arguments: object, ceiling: int, *, continuation: bool = False
) -> FetchRequest:
    """Check a call's arguments; raise :class:`ToolError` (InvalidArguments) on the first bad one.

    ``max_chars`` must be a JSON integer: ``true`` is not a number here (Python's ``bool`` is an
    ``int``, JSON's is not), and a float is refused even when integral (``5.0``), because the
    schema says integer and a model that sends a float has not followed it. A value above the
    ceiling is lowered to it. An arguments value that is not an object has no ``url``.
    ``start_index`` (read only with ``continuation``) follows the rule of ``max_chars``: a JSON
    integer, here 0 or more, with no upper bound (an index past the end reads nothing).
    """
    if not isinstance(arguments, Mapping):
        raise ToolError(ToolErrorKind.InvalidArguments, MISSING_URL)
    url = arguments.get("url")
    if not isinstance(url, str):
        raise ToolError(ToolErrorKind.InvalidArguments, MISSING_URL)

    max_chars = arguments.get("max_chars")
    if max_chars is None:
        limit = ceiling
    elif isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ToolError(ToolErrorKind.InvalidArguments, BAD_MAX_CHARS)
    else:
        limit = min(max_chars, ceiling)

    raw = arguments.get("raw")
    if raw is None:
        raw = False
    elif not isinstance(raw, bool):
        raise ToolError(ToolErrorKind.InvalidArguments, BAD_RAW)

    start = 0
    if continuation:
        given = arguments.get("start_index")
        if given is not None:
            if isinstance(given, bool) or not isinstance(given, int) or given < 0:
                raise ToolError(ToolErrorKind.InvalidArguments, BAD_START_INDEX)
            start = given

    if len(url) > MAX_URL_CHARS:
        raise ToolError(ToolErrorKind.InvalidArguments, URL_TOO_LONG)
    return FetchRequest(url=url, max_chars=limit, raw=raw, start_index=start)
