"""Choosing the search provider from the environment.

``RUNVIL_SEARCH_PROVIDER`` names one outright (``brave``, ``tavily``, ``searxng``, ``gateway``,
``duckduckgo``) and its settings must then be present. Without it the first configured one wins:
``BRAVE_API_KEY``, then ``TAVILY_API_KEY``, then ``SEARXNG_URL``, then the gateway
(``RUNVIL_SEARCH_GATEWAY_URL`` with ``RUNVIL_SEARCH_GATEWAY_KEY``), else DuckDuckGo, which needs
nothing. Empty values count as unset. A half-configured gateway is an error rather than a silent
fall-back, because an operator who set one of the two meant to use it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from runvil._net import Network
from runvil.web.search.provider import SearchProvider
from runvil.web.search.providers import (
    BraveProvider,
    DuckDuckGoProvider,
    GatewayProvider,
    SearxngProvider,
    TavilyProvider,
)

PROVIDER_NAMES = ("brave", "tavily", "searxng", "gateway", "duckduckgo")
_TRUE = frozenset({"1", "true", "yes", "on"})


def provider_from_env(
    environ: Mapping[str, str] | None = None, *, network: Network | None = None
) -> SearchProvider:
    """The provider the environment configures (``os.environ`` unless ``environ`` is given).

    Raises ``ValueError`` with a message naming the variable at fault; never one holding a key.
    """
    env = os.environ if environ is None else environ

    def get(name: str) -> str | None:
        value = env.get(name, "").strip()
        return value or None

    chosen = get("RUNVIL_SEARCH_PROVIDER")
    gateway_url, gateway_key = get("RUNVIL_SEARCH_GATEWAY_URL"), get("RUNVIL_SEARCH_GATEWAY_KEY")
    if chosen is None:
        if get("BRAVE_API_KEY"):
            chosen = "brave"
        elif get("TAVILY_API_KEY"):
            chosen = "tavily"
        elif get("SEARXNG_URL"):
            chosen = "searxng"
        elif gateway_url or gateway_key:
            chosen = "gateway"
        else:
            chosen = "duckduckgo"
    chosen = chosen.lower()

    def required(name: str) -> str:
        value = get(name)
        if value is None:
            raise ValueError(f"the {chosen} search provider needs {name} to be set")
        return value

    if chosen == "brave":
        return BraveProvider(required("BRAVE_API_KEY"), network=network)
    if chosen == "tavily":
        return TavilyProvider(required("TAVILY_API_KEY"), network=network)
    if chosen == "searxng":
        allow_private = (get("RUNVIL_SEARXNG_ALLOW_PRIVATE") or "").lower() in _TRUE
        url = required("SEARXNG_URL")
        try:
            return SearxngProvider(url, allow_private, network=network)
        except ValueError as exc:
            hint = "" if allow_private else " (RUNVIL_SEARXNG_ALLOW_PRIVATE=1 marks a LAN instance)"
            raise ValueError(f"SEARXNG_URL: {exc}{hint}") from None
    if chosen == "gateway":
        url, key = required("RUNVIL_SEARCH_GATEWAY_URL"), required("RUNVIL_SEARCH_GATEWAY_KEY")
        try:
            return GatewayProvider(url, key, network=network)
        except ValueError as exc:
            raise ValueError(f"RUNVIL_SEARCH_GATEWAY_URL: {exc}") from None
    if chosen == "duckduckgo":
        return DuckDuckGoProvider(network=network)
    raise ValueError(
        f"RUNVIL_SEARCH_PROVIDER must be one of {', '.join(PROVIDER_NAMES)}, not {chosen!r}"
    )
