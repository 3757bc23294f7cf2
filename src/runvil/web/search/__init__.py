"""``web/search``: argument checking and rendering around a pluggable search provider.

``WebSearch(provider)`` is the tool; ``provider_from_env()`` picks a provider the way the CLI
and the MCP server do. Providers live in :mod:`runvil.web.search.providers`.
"""

from runvil.web.search.config import provider_from_env
from runvil.web.search.provider import (
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
)
from runvil.web.search.tool import WebSearch

__all__ = [
    "ProviderError",
    "SearchProvider",
    "SearchRequest",
    "SearchResult",
    "WebSearch",
    "provider_from_env",
]
