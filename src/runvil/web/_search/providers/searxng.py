"""A SearXNG instance's JSON API (``GET {base_url}/search?format=json``).

SearXNG is usually self-hosted, often on the LAN: ``allow_private=True`` is the operator saying
"this address is mine" (as is naming its host and port in ``private_hosts``), which lets that
one endpoint resolve to a private address and be reached over plain ``http``. ``freshness``
maps to ``time_range``, ``safesearch`` to 0/1/2, ``search_lang`` (with ``country``) to
``language`` (``en-US``); SearXNG has no result count, so ``count`` truncates the merged list.
The domain lists travel as ``site:`` operators and are enforced here. When nothing came back
and upstream engines failed (CAPTCHAs, timeouts), the search fails with the engines' reasons
instead of pretending the web has no answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from runvil._errors import ToolErrorKind
from runvil._net import Network
from runvil._net.client import Transport
from runvil._net.hostnames import PrivateHosts
from runvil.web._search.egress import DEFAULT_TIMEOUT, Egress, EgressResponse
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    backend_error,
    clean_text,
    describe_error_body,
    escape_controls,
    filter_domains,
    looks_like_html,
    malformed,
    query_with_operators,
    rows_as_results,
    truncate,
    unreadable_error,
)
from runvil.web._search.providers._config import endpoint_url
from runvil.web._search.providers._json import decode_json

TIME_RANGES = {"pd": "day", "pw": "week", "pm": "month", "py": "year"}
SAFESEARCH = {"off": "0", "moderate": "1", "strict": "2"}

_LANG = re.compile(r"[a-z]{2,3}")
_REGION = re.compile(r"[a-z]{2}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class SearxngProvider:
    """Search a SearXNG instance at ``base_url`` (its JSON format must be enabled)."""

    name = "searxng"

    def __init__(
        self,
        base_url: str,
        allow_private: bool = False,
        network: Network | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        private_hosts: Iterable[str] = (),
        proxy: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        listed = PrivateHosts.parse(private_hosts)
        parsed, endpoint = endpoint_url(
            base_url, what="the SearXNG URL", allow_http=allow_private, private_hosts=listed
        )
        path = parsed.path
        if not path.endswith("/search"):
            path = path.rstrip("/") + "/search"
        self._url = str(parsed.with_path(path).with_query(None))
        self.endpoints: Sequence[str] = (endpoint,)
        self._egress = Egress(
            self.endpoints,
            network=network,
            allow_private=allow_private,
            allow_http=allow_private,
            private_hosts=listed,
            proxy=proxy,
            transport=transport,
            timeout=timeout,
        )

    def __repr__(self) -> str:
        return f"SearxngProvider(endpoints={list(self.endpoints)!r})"

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        response = await self._egress.send(
            "GET", self._url, params=query_params(request), headers={"Accept": "application/json"}
        )
        if not response.ok:
            raise _error(response)
        try:
            document = decode_json(response.body)
        except ValueError:
            raise malformed() from None
        results = parse_results(document)
        return truncate(filter_domains(results, request), request.count)


def query_params(request: SearchRequest) -> dict[str, str]:
    params = {"q": query_with_operators(request), "format": "json"}
    if request.freshness is not None:
        params["time_range"] = TIME_RANGES[request.freshness]
    if request.safesearch is not None:
        params["safesearch"] = SAFESEARCH[request.safesearch]
    language = _language(request.search_lang, request.country)
    if language is not None:
        params["language"] = language
    return params


def _language(search_lang: str | None, country: str | None) -> str | None:
    """SearXNG's ``language``: ``en``, or ``en-US`` when a country is given too. Codes SearXNG
    would refuse with a 400 are left out rather than failing the search."""
    if search_lang is None:
        return None
    lang, _, region = search_lang.strip().lower().replace("_", "-").partition("-")
    if not _LANG.fullmatch(lang):
        return None
    if not region and country is not None:
        region = country.strip().lower()
    if region == "uk":
        region = "gb"
    return f"{lang}-{region.upper()}" if _REGION.fullmatch(region) else lang


def parse_results(document: Any) -> list[SearchResult]:
    results = rows_as_results(document, "publishedDate", _age)
    if not results:
        failed = _unresponsive(document.get("unresponsive_engines"))
        if failed:
            raise ProviderError(  # untrusted: the engine names are the instance's text
                ToolErrorKind.Backend, f"search engines did not respond: {failed}", untrusted=True
            )
    return results


def _age(value: object) -> str | None:
    """``publishedDate`` is an ISO timestamp; the date part is the readable age."""
    if not isinstance(value, str) or not value.strip():
        return None
    match = _ISO_DATE.match(value.strip())
    return match.group(0) if match else clean_text(value) or None


def _unresponsive(value: object) -> str:
    if not isinstance(value, list):
        return ""
    parts: list[str] = []
    for item in value[:10]:
        if isinstance(item, list) and len(item) >= 2:
            parts.append(f"{item[0]} ({item[1]})")
        elif isinstance(item, str):
            parts.append(item)
    return escape_controls(", ".join(parts))[:1000]


def _error(response: EgressResponse) -> ProviderError:
    if response.body is None:
        return unreadable_error(response.status)
    if response.status == 403 and looks_like_html(response.body):
        return backend_error(
            403, "the instance refuses format=json (list json under search.formats in its "
            "settings.yml)"
        )
    try:
        document = decode_json(response.body)
    except ValueError:
        document = None
    if isinstance(document, dict) and isinstance(document.get("error"), str):
        return backend_error(response.status, escape_controls(document["error"])[:2000])
    return backend_error(response.status, describe_error_body(response.body))
