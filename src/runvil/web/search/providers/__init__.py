"""Search providers: each one speaks one vendor's API through the endpoint-locked egress client."""

from runvil.web.search.providers.brave import BraveProvider
from runvil.web.search.providers.duckduckgo import DuckDuckGoProvider
from runvil.web.search.providers.gateway import GatewayProvider
from runvil.web.search.providers.searxng import SearxngProvider
from runvil.web.search.providers.tavily import TavilyProvider

__all__ = [
    "BraveProvider",
    "DuckDuckGoProvider",
    "GatewayProvider",
    "SearxngProvider",
    "TavilyProvider",
]
