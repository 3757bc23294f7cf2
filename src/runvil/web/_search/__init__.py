"""``web/search``: argument checking and rendering around a pluggable search provider.

``WebSearch(provider)`` is the tool; ``provider_from_env()`` picks a provider the way the CLI
and the MCP server read the environment. Providers live in :mod:`runvil.web._search.providers`.
The public names are re-exported by :mod:`runvil.web`; they load on first use here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runvil._lazy import lazy_exports

if TYPE_CHECKING:
    from runvil.web._search.config import provider_from_env as provider_from_env
    from runvil.web._search.provider import ProviderError as ProviderError
    from runvil.web._search.provider import SearchProvider as SearchProvider
    from runvil.web._search.provider import SearchRequest as SearchRequest
    from runvil.web._search.provider import SearchResult as SearchResult
    from runvil.web._search.tool import WebSearch as WebSearch

_EXPORTS: dict[str, str] = {
    "provider_from_env": "runvil.web._search.config",
    **dict.fromkeys(
        ("ProviderError", "SearchProvider", "SearchRequest", "SearchResult"),
        "runvil.web._search.provider",
    ),
    "WebSearch": "runvil.web._search.tool",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
