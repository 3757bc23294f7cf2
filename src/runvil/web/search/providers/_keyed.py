"""What the keyed vendors (Brave, Tavily) share: a non-empty API key, an endpoint-locked egress,
and the same reading of an answer (vendor error, JSON body, the domain filter).

The key is held privately and never shown: ``repr`` names only the provider, so a provider that
ends up in a log line or a traceback cannot leak its credential.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runvil._net import Network
from runvil.web.search.egress import DEFAULT_TIMEOUT, Egress, EgressResponse
from runvil.web.search.provider import ProviderError, SearchRequest, SearchResult
from runvil.web.search.providers._common import (
    backend_error,
    decode_json,
    describe_error_body,
    escape_controls,
    filter_domains,
    malformed,
    redact,
    unreadable_error,
)


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
    ) -> None:
        if not api_key or not api_key.strip():
            raise ValueError(f"the {self.vendor} API key must not be empty")
        self._key = api_key
        self._egress = Egress(self.endpoints, network=network, timeout=timeout)

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
        echoed back."""
        if response.body is None:
            return unreadable_error(response.status)
        detail = self._error_detail(response.body)
        text = escape_controls(detail) if detail else describe_error_body(response.body)
        return backend_error(response.status, redact(text, self._key))

    def _parse_results(self, document: Any) -> list[SearchResult]:
        """The vendor's result rows from its decoded JSON answer."""
        raise NotImplementedError

    def _error_detail(self, body: bytes) -> str | None:
        """The vendor's own error text from an error body, if it has one."""
        raise NotImplementedError
