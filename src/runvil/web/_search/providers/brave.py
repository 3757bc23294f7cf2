"""Brave Search API (``GET https://api.search.brave.com/res/v1/web/search``).

The key travels in the ``X-Subscription-Token`` header, never in the URL. Arguments map almost
one to one (``count``, ``freshness``, ``safesearch`` share Brave's own values); ``country`` and
``search_lang`` are translated into Brave's enums where a translation exists and left out where
none does, because Brave answers any other value with a 422 that would fail the whole search.
Descriptions are requested without highlight markup (``text_decorations=false``) and cleaned of
any that still arrives; ``meta_url.hostname`` becomes ``site_name``; ``extra_snippets`` are
requested and passed on when the plan delivers them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runvil._net.secrets import Secrets
from runvil.web._search.egress import EgressResponse, retry_on_status
from runvil.web._search.provider import SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    clean_text,
    malformed,
    optional_text,
    query_with_operators,
    string_list,
)
from runvil.web._search.providers._json import decode_json
from runvil.web._search.providers._keyed import KeyedProvider

URL = "https://api.search.brave.com/res/v1/web/search"
ENDPOINT = "api.search.brave.com:443"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Brave's documented ``country`` values (anything else is a 422).
COUNTRIES = _words(
    "ALL AR AU AT BE BR CA CL DK FI FR DE HK IN ID IT JP KR MY MX NL NZ NO CN PL PT PH RU SA ZA "
    "ES SE CH TW TR GB US"
)
#: Brave's documented ``search_lang`` values.
LANGUAGES = _words(
    "ar eu bn bg ca zh-hans zh-hant hr cs da nl en en-gb et fi fr gl de gu he hi hu is it jp kn "
    "ko lv lt ms ml mr nb pl pt-br pt-pt pa ro ru sr sk sl es sv ta te th tr uk vi"
)
#: Common codes Brave spells differently.
COUNTRY_ALIASES = {"UK": "GB"}
LANGUAGE_ALIASES = {
    "ja": "jp",
    "zh": "zh-hans",
    "zh-cn": "zh-hans",
    "zh-tw": "zh-hant",
    "pt": "pt-pt",
    "no": "nb",
    "en-us": "en",
    "iw": "he",
}


class BraveProvider(KeyedProvider):
    """Search with the Brave Search API and ``api_key`` (a subscription token)."""

    name = "brave"
    vendor = "Brave"
    endpoints: Sequence[str] = (ENDPOINT,)

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        response = await self._egress.send(
            "GET",
            URL,
            params=query_params(request),
            headers={"Accept": "application/json", "X-Subscription-Token": self._key},
            retry_if=_retryable,
        )
        return self._answer(response, request)

    def _parse_results(self, document: Any) -> list[SearchResult]:
        return parse_results(document)

    def _error_detail(self, body: bytes) -> str | None:
        return _error_detail(body, self._secrets)


def query_params(request: SearchRequest) -> dict[str, str]:
    params = {"q": query_with_operators(request)}
    if request.count is not None:
        params["count"] = str(request.count)
    if request.freshness is not None:
        params["freshness"] = request.freshness
    if request.country is not None:
        country = request.country.strip().upper()
        country = COUNTRY_ALIASES.get(country, country)
        if country in COUNTRIES:
            params["country"] = country
    if request.search_lang is not None:
        lang = request.search_lang.strip().lower().replace("_", "-")
        lang = LANGUAGE_ALIASES.get(lang, lang)
        if lang not in LANGUAGES and "-" in lang:
            lang = LANGUAGE_ALIASES.get(lang.split("-", 1)[0], lang.split("-", 1)[0])
        if lang in LANGUAGES:
            params["search_lang"] = lang
    if request.safesearch is not None:
        params["safesearch"] = request.safesearch
    params["text_decorations"] = "false"
    params["extra_snippets"] = "true"
    params["result_filter"] = "web"
    return params


def parse_results(document: Any) -> list[SearchResult]:
    """Rows of ``web.results``; a body without ``web`` is a search that found nothing."""
    if not isinstance(document, dict):
        raise malformed()
    web = document.get("web")
    if web is None:
        return []
    if not isinstance(web, dict):
        raise malformed()
    rows = web.get("results", [])
    if not isinstance(rows, list):
        raise malformed()
    results: list[SearchResult] = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("url"), str):
            raise malformed()
        meta = row.get("meta_url")
        results.append(
            SearchResult(
                title=clean_text(row.get("title")),
                url=row["url"].strip(),
                description=clean_text(row.get("description")),
                age=optional_text(row.get("age")),
                site_name=optional_text(meta.get("hostname")) if isinstance(meta, dict) else None,
                extra_snippets=string_list(row.get("extra_snippets")),
            )
        )
    return results


def _retryable(response: EgressResponse) -> bool:
    """429 and 5xx, except a monthly quota (``QUOTA_LIMITED``): waiting a few seconds cannot
    help that one, so it fails at once."""
    if response.status == 429 and response.body and b"QUOTA_LIMITED" in response.body:
        return False
    return retry_on_status(response)


def _error_detail(body: bytes, secrets: Secrets | None = None) -> str | None:
    """``{detail} ({code})`` from Brave's ``ErrorResponse`` envelope (``error`` object, or the
    ``errors`` list its docs show), plus the first validation error's field and message.

    Each of Brave's own strings has ``secrets`` redacted, a cut-off tail included, before they
    are put together: a key the vendor shortened at the end of its ``detail`` would otherwise
    sit in the middle of the text, where no tail check can see it.
    """
    secrets = secrets if secrets is not None else Secrets(())
    try:
        document = decode_json(body)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    error = document.get("error")
    if error is None and isinstance(document.get("errors"), list) and document["errors"]:
        error = document["errors"][0]
    if not isinstance(error, dict):
        return None
    detail = _field(error.get("detail"), secrets)
    code = _field(error.get("code"), secrets)
    if not detail and not code:
        return None
    text = detail or code or ""
    if detail and code:
        text = f"{detail} ({code})"
    meta = error.get("meta")
    problems = meta.get("errors") if isinstance(meta, dict) else None
    if isinstance(problems, list) and problems and isinstance(problems[0], dict):
        first = problems[0]
        loc = first.get("loc")
        where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
        msg = _field(first.get("msg"), secrets) or ""
        if where or msg:
            text += f": {where}: {msg}" if where and msg else f": {where or msg}"
    return text  # quoted (secrets redacted, then cut at 2000 characters) by the caller


def _field(value: object, secrets: Secrets) -> str | None:
    """One of Brave's error strings, secrets redacted (a trailing partial one too)."""
    if not isinstance(value, str):
        return None
    return secrets.redact_tail(secrets.redact(value))
