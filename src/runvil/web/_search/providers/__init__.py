"""Search providers: each one speaks one vendor's API through the endpoint-locked egress client."""

from runvil.web._search.providers.brave import BraveProvider
from runvil.web._search.providers.duckduckgo import DuckDuckGoProvider
from runvil.web._search.providers.gateway import GatewayProvider
from runvil.web._search.providers.searxng import SearxngProvider
from runvil.web._search.providers.tavily import TavilyProvider

__all__ = [
    "BraveProvider",
    "DuckDuckGoProvider",
    "GatewayProvider",
    "SearxngProvider",
    "TavilyProvider",
]
