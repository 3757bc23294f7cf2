"""Tavily Search API (``POST https://api.tavily.com/search``).

The key travels as ``Authorization: Bearer``, never in the URL or the body. ``count`` becomes
``max_results``, ``freshness`` becomes ``time_range`` (day/week/month/year), the domain lists go
in natively (and are still enforced here, since Tavily is known to let other domains through),
``country`` is translated from an ISO code to the English name Tavily expects. Tavily has no
language parameter and its ``safe_search`` is an Enterprise-only option, so ``search_lang`` and
``safesearch`` are not sent (docs/search.md says so). ``content`` becomes the description,
``published_date`` the age, and the url's hostname the ``site_name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runvil.web._search.provider import SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    normal_domain,
    optional_text,
    rows_as_results,
)
from runvil.web._search.providers._json import decode_json
from runvil.web._search.providers._keyed import KeyedProvider

URL = "https://api.tavily.com/search"
ENDPOINT = "api.tavily.com:443"

TIME_RANGES = {"pd": "day", "pw": "week", "pm": "month", "py": "year"}

#: ISO 3166 codes to the country names Tavily accepts (its ``country`` enum is English names).
COUNTRY_NAMES = {
    "ar": "argentina", "at": "austria", "au": "australia", "be": "belgium", "br": "brazil",
    "ca": "canada", "ch": "switzerland", "cl": "chile", "cn": "china", "co": "colombia",
    "cz": "czech republic", "de": "germany", "dk": "denmark", "eg": "egypt", "es": "spain",
    "fi": "finland", "fr": "france", "gb": "united kingdom", "gr": "greece", "hk": "hong kong",
    "hu": "hungary", "id": "indonesia", "ie": "ireland", "il": "israel", "in": "india",
    "it": "italy", "jp": "japan", "kr": "south korea", "mx": "mexico", "my": "malaysia",
    "ng": "nigeria", "nl": "netherlands", "no": "norway", "nz": "new zealand",
    "ph": "philippines", "pk": "pakistan", "pl": "poland", "pt": "portugal", "ro": "romania",
    "ru": "russia", "sa": "saudi arabia", "se": "sweden", "sg": "singapore", "th": "thailand",
    "tr": "turkey", "tw": "taiwan", "ua": "ukraine", "uk": "united kingdom",
    "us": "united states", "vn": "vietnam", "za": "south africa",
}


class TavilyProvider(KeyedProvider):
    """Search with the Tavily API and ``api_key`` (``tvly-...``)."""

    name = "tavily"
    vendor = "Tavily"
    endpoints: Sequence[str] = (ENDPOINT,)

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        response = await self._egress.send(
            "POST",
            URL,
            headers={
                "Authorization": f"Bearer {self._key}",
                "Accept": "application/json",
                "X-Client-Source": "runvil",
            },
            json=request_body(request),
        )
        return self._answer(response, request)

    def _parse_results(self, document: Any) -> list[SearchResult]:
        return parse_results(document)

    def _error_detail(self, body: bytes) -> str | None:
        return _error_detail(body)


def request_body(request: SearchRequest) -> dict[str, Any]:
    body: dict[str, Any] = {"query": request.query, "search_depth": "basic", "topic": "general"}
    if request.count is not None:
        body["max_results"] = request.count
    if request.freshness is not None:
        body["time_range"] = TIME_RANGES[request.freshness]
    if request.country is not None:
        code = request.country.strip().lower()
        name = COUNTRY_NAMES.get(code, code if code in COUNTRY_NAMES.values() else None)
        if name is not None:
            body["country"] = name
    if request.include_domains:
        body["include_domains"] = [normal_domain(d) for d in request.include_domains]
    if request.exclude_domains:
        body["exclude_domains"] = [normal_domain(d) for d in request.exclude_domains]
    return body


def parse_results(document: Any) -> list[SearchResult]:
    return rows_as_results(document, "published_date", optional_text)


def _error_detail(body: bytes) -> str | None:
    """The text of Tavily's ``{"detail": {"error": ...}}`` envelope (``detail`` may also be a
    plain string, or a FastAPI-style list of validation problems), or of the keyless
    ``{"error": {"message": ...}}`` form."""
    try:
        document = decode_json(body)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    detail = document.get("detail")
    if isinstance(detail, dict) and isinstance(detail.get("error"), str):
        return str(detail["error"])
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        first = detail[0]
        loc = first.get("loc")
        where = ".".join(str(p) for p in loc) if isinstance(loc, list) else ""
        msg = first.get("msg") if isinstance(first.get("msg"), str) else "invalid request"
        return f"{where}: {msg}" if where else str(msg)
    error = document.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return None
