"""Turns an effective :class:`~runvil.config.Config` into the objects a face runs with.

Why a module of its own: the CLI, the MCP server and ``runvil run`` must build the same search
provider, network and policy from the same configuration, or one face would quietly behave
differently from another. Nothing here decides a setting; :mod:`runvil.config` does that.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from runvil.config import Config, ConfigError, SearchSettings
from runvil.test_seam import seam_from_env
from runvil.web import Network
from runvil.web.fetch.policy import FetchPolicy

if TYPE_CHECKING:
    from runvil.web.search import SearchProvider


def network_and_policy() -> tuple[Network | None, FetchPolicy]:
    """The real network and the default policy, or the test seam's when it is set."""
    seam = seam_from_env()
    if seam is None:
        return None, FetchPolicy()
    policy = dataclasses.replace(FetchPolicy(), **dict(seam.policy))
    return seam.network, policy


def search_provider(settings: SearchSettings, network: Network | None) -> SearchProvider | None:
    """The configured search provider, or None when the configuration says ``none``.
    A provider that refuses its settings (a bad URL) is a :class:`ConfigError`."""
    try:
        return _search_provider(settings, network)
    except ValueError as err:
        raise ConfigError(f"search provider {settings.provider}: {err}") from None


def _search_provider(settings: SearchSettings, network: Network | None) -> SearchProvider | None:
    from runvil.web.search import providers as p

    kw: dict[str, Any] = {"network": network}
    name = settings.provider
    if name == "none":
        return None
    if name == "duckduckgo":
        return p.DuckDuckGoProvider(**kw)
    if name == "brave":
        return p.BraveProvider(_need(settings.api_key, name), **kw)
    if name == "tavily":
        return p.TavilyProvider(_need(settings.api_key, name), **kw)
    if name == "searxng":
        return p.SearxngProvider(
            _need(settings.url, name), allow_private=settings.allow_private, **kw
        )
    if name == "gateway":
        return p.GatewayProvider(
            _need(settings.url, name), _need(settings.api_key, name), **kw
        )
    raise ConfigError(f"unknown search provider {name!r}")


def _need(value: str | None, provider: str) -> str:
    if value is None:
        raise ConfigError(f"search provider {provider} is not fully configured")
    return value


def describe(config: Config) -> dict[str, Any]:
    """The effective configuration as plain data with every secret masked (``runvil config``)."""
    from runvil.config import masked

    search: dict[str, Any] = {"provider": config.search.provider}
    if config.search.api_key is not None:
        search["api_key"] = masked(config.search.api_key)
    if config.search.url is not None:
        search["url"] = config.search.url
    if config.search.allow_private:
        search["allow_private"] = True
    providers = {
        name: {"api": p.api, "base_url": p.base_url, "api_key_env": p.api_key_env}
        for name, p in config.providers.items()
    }
    return {
        "file": str(config.file) if config.file is not None else None,
        "web": config.web,
        "envelope": config.envelope,
        "approval": config.approval,
        "search": search,
        "models": dict(config.models),
        "providers": providers,
        "sources": dict(config.sources),
    }
