"""The web tools: ``web/fetch`` and ``web/search``, and the network seam they share."""

from runvil.web.fetch.network import DnsError, Network
from runvil.web.search import (
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
    WebSearch,
)

__all__ = [
    "DnsError",
    "Network",
    "ProviderError",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "WebSearch",
]
