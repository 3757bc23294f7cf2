"""What the keyed vendors (Brave, Tavily) share: a non-empty API key and an endpoint-locked egress.

The key is held privately and never shown: ``repr`` names only the provider, so a provider that
ends up in a log line or a traceback cannot leak its credential.
"""

from __future__ import annotations

from collections.abc import Sequence

from runvil.web.fetch.network import Network
from runvil.web.search.egress import DEFAULT_TIMEOUT, Egress


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
