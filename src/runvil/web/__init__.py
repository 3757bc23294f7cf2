"""The web tools: ``web/fetch`` and ``web/search``, the web Pack, and the network seam they share.

Names are loaded on first use, so ``import runvil.web`` loads neither the HTTP stack nor the HTML
parser until a tool is built. docs/api.md lists this surface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runvil._lazy import lazy_exports

if TYPE_CHECKING:
    from runvil._net import DnsError as DnsError
    from runvil._net import Network as Network
    from runvil.web._fetch.extract import render_html as render_html
    from runvil.web._fetch.policy import FetchPolicy as FetchPolicy
    from runvil.web._fetch.result import FetchResult as FetchResult
    from runvil.web._fetch.tool import WebFetch as WebFetch
    from runvil.web._pack import WebPack as WebPack
    from runvil.web._pack import web_pack as web_pack
    from runvil.web._search.config import SearchSettings as SearchSettings
    from runvil.web._search.config import provider_from_env as provider_from_env
    from runvil.web._search.config import provider_from_settings as provider_from_settings
    from runvil.web._search.provider import ProviderError as ProviderError
    from runvil.web._search.provider import SearchProvider as SearchProvider
    from runvil.web._search.provider import SearchRequest as SearchRequest
    from runvil.web._search.provider import SearchResult as SearchResult
    from runvil.web._search.providers import BraveProvider as BraveProvider
    from runvil.web._search.providers import DuckDuckGoProvider as DuckDuckGoProvider
    from runvil.web._search.providers import GatewayProvider as GatewayProvider
    from runvil.web._search.providers import SearxngProvider as SearxngProvider
    from runvil.web._search.providers import TavilyProvider as TavilyProvider
    from runvil.web._search.tool import WebSearch as WebSearch

#: Each public name and the module it lives in.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("DnsError", "Network"), "runvil._net"),
    "FetchPolicy": "runvil.web._fetch.policy",
    "FetchResult": "runvil.web._fetch.result",
    "render_html": "runvil.web._fetch.extract",
    "WebFetch": "runvil.web._fetch.tool",
    **dict.fromkeys(("WebPack", "web_pack"), "runvil.web._pack"),
    **dict.fromkeys(
        ("SearchSettings", "provider_from_env", "provider_from_settings"),
        "runvil.web._search.config",
    ),
    **dict.fromkeys(
        ("ProviderError", "SearchProvider", "SearchRequest", "SearchResult"),
        "runvil.web._search.provider",
    ),
    **dict.fromkeys(
        (
            "BraveProvider", "DuckDuckGoProvider", "GatewayProvider", "SearxngProvider",
            "TavilyProvider",
        ),
        "runvil.web._search.providers",
    ),
    "WebSearch": "runvil.web._search.tool",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
