"""What the keyed vendors (Brave, Tavily) share: a non-empty API key, an endpoint-locked egress,
and the same reading of an answer (vendor error, JSON body, the domain filter).

The key is held privately and never shown: ``repr`` names only the provider, so a provider that
ends up in a log line or a traceback cannot leak its credential; and anything the vendor echoes
back is quoted with the key redacted before the quote is cut (:mod:`runvil._net.secrets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runvil._net import Network
from runvil._net.client import Transport
from runvil._net.secrets import Secrets
from runvil.web._search.egress import DEFAULT_TIMEOUT, Egress, EgressResponse
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    backend_error,
    describe_error_body,
    filter_domains,
    malformed,
    quote_text,
    unreadable_error,
)
from runvil.web._search.providers._json import decode_json


class KeyedProvider:
    """Base for providers that authenticate with one API key."""

    name: str
    vendor: str
    """The vendor's name as users know it, for the empty-key error."""
    endpoints: Sequence[str]

    def __init__(
        self,
        api_key: str,
        network: Network | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        proxy: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        if not api_key or not api_key.strip():
            raise ValueError(f"the {self.vendor} API key must not be empty")
        self._key = api_key
        self._secrets = Secrets([api_key])
        self._egress = Egress(
            self.endpoints, network=network, timeout=timeout, proxy=proxy, transport=transport
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _answer(self, response: EgressResponse, request: SearchRequest) -> list[SearchResult]:
        """Turn the vendor's answer into filtered rows, or raise its error."""
        if not response.ok:
            raise self._error(response)
        try:
            document = decode_json(response.body)
        except ValueError:
            raise malformed() from None
        return filter_domains(self._parse_results(document), request)

    def _error(self, response: EgressResponse) -> ProviderError:
        """``backend returned {code}: {detail}``, with the key scrubbed from anything the vendor
        echoed back (before the quote is cut, and a cut-off tail of it after)."""
        if response.body is None:
            return unreadable_error(response.status)
        detail = self._error_detail(response.body)
        if detail:
            return backend_error(response.status, quote_text(detail, self._secrets))
        return backend_error(response.status, describe_error_body(response.body, self._secrets))

    def _parse_results(self, document: Any) -> list[SearchResult]:
        """The vendor's result rows from its decoded JSON answer."""
        raise NotImplementedError

    def _error_detail(self, body: bytes) -> str | None:
        """The vendor's own error text from an error body, if it has one."""
        raise NotImplementedError
