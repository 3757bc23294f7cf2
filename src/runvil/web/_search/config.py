"""The one search provider factory, and what the environment says about providers.

:func:`provider_from_settings` turns :class:`SearchSettings` (a provider name and what it needs)
into a provider object; it is the only place a provider is built from configuration. The
command line reaches it through ``runvil.toml``, flags and the environment (which setting wins is
its business); :func:`provider_from_env` is the library's shortcut that reads the environment
alone. Both read the variables from the tables below, so the environment means the same thing to
each:

``RUNVIL_SEARCH_PROVIDER`` names one outright (``brave``, ``tavily``, ``searxng``, ``gateway``,
``duckduckgo``) and its settings must then be present. Without it the first configured one wins:
``BRAVE_API_KEY``, then ``TAVILY_API_KEY``, then ``SEARXNG_URL``, then the gateway
(``RUNVIL_SEARCH_GATEWAY_URL`` with ``RUNVIL_SEARCH_GATEWAY_KEY``), else DuckDuckGo, which needs
nothing. Empty values count as unset. A half-configured gateway is an error rather than a silent
fall-back, because an operator who set one of the two meant to use it.

This module imports no provider until one is built, so reading a configuration stays light.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runvil._net import Network
    from runvil.web._search.provider import SearchProvider

__all__ = [
    "CHOICE_ENV",
    "DETECTION_ORDER",
    "KEY_ENV",
    "PRIVATE_ENV",
    "PROVIDER_NAMES",
    "URL_ENV",
    "SearchSettings",
    "provider_from_env",
    "provider_from_settings",
]

#: Every provider, in the order the environment picks one when nothing names one.
PROVIDER_NAMES = ("brave", "tavily", "searxng", "gateway", "duckduckgo")
#: The variable that names the provider outright.
CHOICE_ENV = "RUNVIL_SEARCH_PROVIDER"
#: The variable that marks a SearXNG endpoint on a private network as intended.
PRIVATE_ENV = "RUNVIL_SEARXNG_ALLOW_PRIVATE"
#: Where each keyed provider's key is read from.
KEY_ENV: Mapping[str, str] = {
    "brave": "BRAVE_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "gateway": "RUNVIL_SEARCH_GATEWAY_KEY",
}
#: Where each provider with a configurable endpoint reads its URL from.
URL_ENV: Mapping[str, str] = {"searxng": "SEARXNG_URL", "gateway": "RUNVIL_SEARCH_GATEWAY_URL"}
#: Which variable, when set, picks which provider, first match winning.
DETECTION_ORDER: tuple[tuple[str, str], ...] = (
    ("brave", KEY_ENV["brave"]),
    ("tavily", KEY_ENV["tavily"]),
    ("searxng", URL_ENV["searxng"]),
    ("gateway", URL_ENV["gateway"]),
    ("gateway", KEY_ENV["gateway"]),
)
_TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass(frozen=True)
class SearchSettings:
    """The search provider a host supplies, with what that provider needs: a key (Brave,
    Tavily, the Gateway), a URL (SearXNG, the Gateway), and whether a SearXNG endpoint may be on
    a private network. ``provider`` ``"none"`` means no provider at all."""

    provider: str
    api_key: str | None = None
    url: str | None = None
    allow_private: bool = False
    private_hosts: tuple[str, ...] = ()
    """The operator's named private hosts (``[fetch] private_hosts``): a SearXNG or gateway URL
    whose host and port are listed may be on a private address and use ``http``, as with
    ``allow_private``."""
    proxy: str | None = field(default=None, repr=False)
    """The egress proxy search requests go through (``[search] proxy``, else ``[fetch] proxy``):
    a proxy URL or ``"env"``; ``None`` is direct. Kept out of ``repr``: it may hold a
    password."""


def provider_from_settings(
    settings: SearchSettings, *, network: Network | None = None
) -> SearchProvider | None:
    """The provider ``settings`` describe, speaking through ``network`` (``None``: the real
    one), or ``None`` for ``"none"``.

    Raises ``ValueError``: for a setting the provider needs but did not get, and with the
    provider's own words for one it refuses (``the SearXNG URL must be an https URL ...``);
    never with a key in it.
    """
    from runvil.web._search import providers as p

    name = settings.provider
    if name == "none":
        return None
    proxy = settings.proxy
    if name == "duckduckgo":
        return p.DuckDuckGoProvider(network=network, proxy=proxy)
    if name == "brave":
        key = _needed(settings.api_key, name, "an API key")
        return p.BraveProvider(key, network=network, proxy=proxy)
    if name == "tavily":
        key = _needed(settings.api_key, name, "an API key")
        return p.TavilyProvider(key, network=network, proxy=proxy)
    if name == "searxng":
        url = _needed(settings.url, name, "a URL")
        return p.SearxngProvider(
            url,
            allow_private=settings.allow_private,
            network=network,
            private_hosts=settings.private_hosts,
            proxy=proxy,
        )
    if name == "gateway":
        url, key = _needed(settings.url, name, "a URL"), _needed(settings.api_key, name, "a key")
        return p.GatewayProvider(
            url, key, network=network, private_hosts=settings.private_hosts, proxy=proxy
        )
    raise ValueError(f"unknown search provider {name!r}")


def _needed(value: str | None, provider: str, what: str) -> str:
    if value is None:
        raise ValueError(f"the {provider} search provider needs {what}")
    return value


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

    chosen = get(CHOICE_ENV)
    if chosen is None:
        chosen = next((name for name, var in DETECTION_ORDER if get(var)), "duckduckgo")
    chosen = chosen.lower()
    if chosen not in PROVIDER_NAMES:
        raise ValueError(f"{CHOICE_ENV} must be one of {', '.join(PROVIDER_NAMES)}, not {chosen!r}")

    def required(variables: Mapping[str, str]) -> str | None:
        if chosen not in variables:
            return None
        value = get(variables[chosen])
        if value is None:
            raise ValueError(f"the {chosen} search provider needs {variables[chosen]} to be set")
        return value

    # The gateway's URL is asked for before its key, as its documentation lists them.
    url = required(URL_ENV)
    key = required(KEY_ENV)
    allow_private = chosen == "searxng" and (get(PRIVATE_ENV) or "").lower() in _TRUE
    settings = SearchSettings(chosen, api_key=key, url=url, allow_private=allow_private)
    try:
        provider = provider_from_settings(settings, network=network)
    except ValueError as exc:
        where = URL_ENV.get(chosen)
        if where is None:
            raise
        hint = ""
        if chosen == "searxng" and not allow_private:
            hint = f" ({PRIVATE_ENV}=1 marks a LAN instance)"
        raise ValueError(f"{where}: {exc}{hint}") from None
    assert provider is not None  # "none" is not among PROVIDER_NAMES
    return provider
