"""What every provider shares: domain filters, hostnames, error texts, JSON bodies, secrets.

Error text a vendor sent back is quoted through :func:`quote_body` / :func:`quote_text`, which
redact the request's secrets (:class:`~runvil._net.secrets.Secrets`) *before* cutting the quote
and redact a trailing partial secret after it, so no cut can leave a prefix of a key behind.

Each vendor honours ``include_domains``/``exclude_domains`` differently (Tavily natively but
loosely, Brave, SearXNG and DuckDuckGo only through ``site:`` operators), so every provider also
filters the rows itself with :func:`filter_domains`: the caller's filters hold whatever the
vendor did with them.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ada_url

from runvil._errors import ToolErrorKind
from runvil._net.secrets import Secrets
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult

#: Error bodies quoted in messages are cut to this many bytes, then escaped (seed 001).
ERROR_BODY_QUOTE_BYTES = 2000
#: Brave's documented limits on ``q``; operators count too, so they are added only if they fit.
MAX_QUERY_CHARS = 400
MAX_QUERY_WORDS = 50


def malformed(detail: str | None = None) -> ProviderError:
    """``malformed search response``: the vendor answered 2xx with a body of the wrong shape."""
    return ProviderError(ToolErrorKind.Backend, "malformed search response")


def result_rows(document: Any) -> list[dict[str, Any]]:
    """The ``results`` array of a vendor's JSON answer, each row an object with a string ``url``.

    Tavily and SearXNG both answer ``{"results": [{"url": ..., ...}]}``; anything else is a
    malformed response rather than an empty result list, so the model is never handed a
    wrong-shaped answer as "nothing found".
    """
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise malformed()
    rows: list[dict[str, Any]] = document["results"]
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("url"), str):
            raise malformed()
    return rows


def rows_as_results(
    document: Any, age_field: str, age: Callable[[object], str | None]
) -> list[SearchResult]:
    """The rows of a ``{"results": [...]}`` answer as results, for the vendors that share that
    shape (Tavily, SearXNG): ``title``, ``url``, ``content`` as the description, the vendor's
    own date field read by ``age``, and the url's hostname as the site name."""
    results: list[SearchResult] = []
    for row in result_rows(document):
        url = row["url"].strip()
        results.append(
            SearchResult(
                title=clean_text(row.get("title")),
                url=url,
                description=clean_text(row.get("content")),
                age=age(row.get(age_field)),
                site_name=hostname_of(url) if url else None,
            )
        )
    return results


def hostname_of(url: str) -> str | None:
    """The ASCII (punycode) hostname of ``url``, lowercase, without a trailing dot; ``None`` when
    the url does not parse or has no host."""
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return None
    host = parsed.hostname
    if not host:
        return None
    host = host.lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or None


def normal_domain(entry: str) -> str:
    """A domain-list entry as a comparable hostname: lowercase ASCII (IDN to punycode), without
    a leading ``*.``/``.`` or a trailing dot."""
    entry = entry.strip().lower()
    if entry.startswith("*."):
        entry = entry[2:]
    entry = entry.lstrip(".").rstrip(".")
    try:
        converted: bytes | str = ada_url.idna_to_ascii(entry)
    except (ValueError, UnicodeError):
        converted = b""
    if isinstance(converted, bytes):
        converted = converted.decode("ascii", "replace")
    return (converted or entry).rstrip(".")


def host_matches(host: str, domains: Iterable[str]) -> bool:
    """``host`` is one of ``domains`` or a subdomain of one (``docs.rs`` matches ``rs``-style
    suffixes only at a dot boundary: ``evil-docs.rs`` does not match ``docs.rs``)."""
    return any(host == d or host.endswith("." + d) for d in domains if d)


def filter_domains(
    results: Iterable[SearchResult], request: SearchRequest
) -> list[SearchResult]:
    """Keep rows from ``include_domains`` (when given) and drop rows from ``exclude_domains``.

    A row with a blank url is kept so the tool can reject the whole response as malformed, as
    the spec requires; a row whose url has no hostname never matches an include list.
    """
    include = [normal_domain(d) for d in request.include_domains]
    exclude = [normal_domain(d) for d in request.exclude_domains]
    if not include and not exclude:
        return list(results)
    kept: list[SearchResult] = []
    for row in results:
        if not row.url.strip():
            kept.append(row)
            continue
        host = hostname_of(row.url.strip())
        if include and (host is None or not host_matches(host, include)):
            continue
        if exclude and host is not None and host_matches(host, exclude):
            continue
        kept.append(row)
    return kept


def query_with_operators(request: SearchRequest) -> str:
    """The query with ``site:`` / ``-site:`` operators for the domain lists, for vendors that
    have no filter parameter. The operators are left out when the result would break the
    vendor's 400-character or 50-word limit; the post-filter still applies either way."""
    parts: list[str] = [request.query]
    include = [normal_domain(d) for d in request.include_domains]
    if len(include) == 1:
        parts.append(f"site:{include[0]}")
    elif include:
        parts.append("(" + " OR ".join(f"site:{d}" for d in include) + ")")
    parts.extend(f"-site:{normal_domain(d)}" for d in request.exclude_domains)
    combined = " ".join(parts)
    if len(combined) > MAX_QUERY_CHARS or len(combined.split()) > MAX_QUERY_WORDS:
        return request.query
    return combined


def quote_body(body: bytes, secrets: Secrets | None = None) -> str:
    """An error body as quoted in ``backend returned {code}: {body}``: ``secrets`` redacted,
    then the first 2000 bytes (cut on a UTF-8 boundary), a trailing partial secret redacted,
    invalid bytes replaced, control characters escaped so the message stays on one line;
    ``(empty body)`` when there is nothing."""
    if not body:
        return "(empty body)"
    if secrets:
        body = secrets.redact_bytes(body)
    cut = body[:ERROR_BODY_QUOTE_BYTES]
    if len(body) > ERROR_BODY_QUOTE_BYTES:
        # Back off over a multi-byte sequence the cut split (at most three continuation bytes).
        for back in range(1, 4):
            lead = cut[-back]
            if lead & 0xC0 != 0x80:
                width = 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2 if lead >= 0xC0 else 1
                if width > back:
                    cut = cut[:-back]
                break
    text = cut.decode("utf-8", "replace")
    if secrets:
        text = secrets.redact_tail(text)
    return escape_controls(text)


def quote_text(text: str, secrets: Secrets | None = None) -> str:
    """A vendor's own error text (decoded from its error envelope) as quoted in a message:
    ``secrets`` redacted, the first 2000 characters, a trailing partial secret redacted, control
    characters escaped."""
    secrets = secrets if secrets is not None else Secrets(())
    return escape_controls(secrets.cut(text, ERROR_BODY_QUOTE_BYTES))


def escape_controls(text: str) -> str:
    """Newline, carriage return and tab as ``\\n``, ``\\r``, ``\\t``; every other control
    character as ``\\u{xxxx}`` (four lowercase hex digits)."""
    out: list[str] = []
    for c in text:
        if c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif unicodedata.category(c) == "Cc":
            out.append(f"\\u{{{ord(c):04x}}}")
        else:
            out.append(c)
    return "".join(out)


def backend_error(status: int, detail: str) -> ProviderError:
    """``backend returned {status}: {detail}`` (Backend), ``detail`` already quoted/escaped.
    Untrusted: ``detail`` is the backend's own text."""
    return ProviderError(
        ToolErrorKind.Backend, f"backend returned {status}: {detail}", untrusted=True
    )


def unreadable_error(status: int) -> ProviderError:
    return ProviderError(
        ToolErrorKind.Backend, f"backend returned {status}, and its error body could not be read"
    )


def looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype", b"<html", b"<head", b"<body", b"<title", b"<?xml"))


def describe_error_body(body: bytes, secrets: Secrets | None = None) -> str:
    """How a vendor's unrecognised error body is quoted: an HTML page is summarised rather than
    echoed (challenge pages are large and carry third-party text), anything else quoted."""
    if looks_like_html(body):
        return "(an HTML error page)"
    return quote_body(body, secrets)


_STRONG = re.compile(r"</?strong>", re.IGNORECASE)


def clean_text(value: object) -> str:
    """A vendor text field as plain text: highlight tags dropped, entities decoded, runs of
    whitespace collapsed. Non-strings become empty."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_STRONG.sub("", value)).split())


def optional_text(value: object) -> str | None:
    text = clean_text(value)
    return text or None


def string_list(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    items: Sequence[Any] = value
    return tuple(t for t in (clean_text(v) for v in items) if t)


def truncate(results: list[SearchResult], count: int | None) -> list[SearchResult]:
    return results if count is None else results[:count]
