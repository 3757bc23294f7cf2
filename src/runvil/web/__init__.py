"""The web tools: ``web/fetch`` and ``web/search``, and the network seam they share."""

from runvil._net import DnsError, Network
from runvil.web.fetch.policy import FetchPolicy
from runvil.web.fetch.tool import WebFetch
from runvil.web.search import (
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
    WebSearch,
)

__all__ = [
    "DnsError",
    "FetchPolicy",
    "Network",
    "ProviderError",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "WebFetch",
    "WebSearch",
]
