"""The Gateway provider: the project's own search endpoint, which holds the vendor key.

``POST {url}`` with ``Authorization: Bearer {key}`` and a JSON body of the call's arguments
(absent scalars and empty domain lists left out, so the gateway's own defaults apply). A 2xx body
has the tool's own output shape. Every message below is fixed by seed 001, and the checks run in
its order: status, then size (256 KiB, before any parsing), then UTF-8, then the JSON shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from runvil._errors import ToolErrorKind
from runvil._net import Network
from runvil._net.client import Transport
from runvil._net.hostnames import PrivateHosts
from runvil._net.secrets import Secrets
from runvil.web._search.egress import Egress
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    filter_domains,
    malformed,
    quote_body,
    unreadable_error,
)
from runvil.web._search.providers._config import endpoint_url
from runvil.web._search.providers._json import decode_json_text

#: A successful body larger than this is rejected whole (seed 001).
MAX_RESPONSE_BYTES = 262_144
#: The fixed per-call deadline (seed 001); a prompt cannot change it.
DEADLINE = 30.0


class GatewayProvider:
    """Search through a runvil gateway at ``url`` with the gateway ``key``."""

    name = "gateway"

    def __init__(
        self,
        url: str,
        key: str,
        network: Network | None = None,
        *,
        allow_private: bool = False,
        timeout: float = DEADLINE,
        private_hosts: Iterable[str] = (),
        proxy: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        if not key or not key.strip():
            raise ValueError("the gateway key must not be empty")
        listed = PrivateHosts.parse(private_hosts)
        parsed, endpoint = endpoint_url(
            url, what="the gateway URL", allow_http=allow_private, private_hosts=listed
        )
        self._url = str(parsed)
        self._key = key
        self._secrets = Secrets([key])
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
            max_bytes=MAX_RESPONSE_BYTES,
        )

    def __repr__(self) -> str:
        return f"GatewayProvider(endpoints={list(self.endpoints)!r})"

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        response = await self._egress.send(
            "POST",
            self._url,
            headers={"Authorization": f"Bearer {self._key}", "Accept": "application/json"},
            json=request_body(request),
        )
        if not response.ok:
            if response.body is None:
                raise unreadable_error(response.status)
            quoted = quote_body(response.body, self._secrets)
            raise ProviderError(
                ToolErrorKind.Backend,
                f"backend returned {response.status}: {quoted}",
                untrusted=True,
            )
        assert response.body is not None
        try:
            text = response.body.decode("utf-8")
        except UnicodeDecodeError:
            raise ProviderError(
                ToolErrorKind.Backend, "response body was not valid UTF-8"
            ) from None
        return filter_domains(parse_results(text), request)


def request_body(request: SearchRequest) -> dict[str, Any]:
    """The call's arguments as the gateway receives them: unset scalars and empty lists are left
    out (so an omitted count gets the gateway's default and an empty list sends no filter)."""
    body: dict[str, Any] = {"query": request.query}
    for key in ("count", "freshness", "country", "search_lang", "safesearch"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.include_domains:
        body["include_domains"] = list(request.include_domains)
    if request.exclude_domains:
        body["exclude_domains"] = list(request.exclude_domains)
    return body


def parse_results(text: str) -> list[SearchResult]:
    """Rows from a gateway body in the tool's own shape. Not JSON, no ``results`` array, a row
    that is not an object or has no string ``url``, or a known field of the wrong type is
    ``malformed search response``; unknown fields are ignored."""
    try:
        document = decode_json_text(text)
    except ValueError:
        raise malformed() from None
    if not isinstance(document, dict) or not isinstance(document.get("results"), list):
        raise malformed()
    rows: list[SearchResult] = []
    for row in document["results"]:
        if not isinstance(row, dict) or not isinstance(row.get("url"), str):
            raise malformed()
        snippets = row.get("extra_snippets")
        if snippets is None:
            snippets = []
        if not isinstance(snippets, list) or not all(isinstance(s, str) for s in snippets):
            raise malformed()
        rows.append(
            SearchResult(
                title=_string(row, "title") or "",
                url=row["url"],
                description=_string(row, "description") or "",
                age=_string(row, "age"),
                site_name=_string(row, "site_name"),
                extra_snippets=tuple(snippets),
            )
        )
    return rows


def _string(row: dict[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None or isinstance(value, str):
        return value
    raise malformed()
