"""provider_from_env: which provider the environment configures."""

from __future__ import annotations

import pytest

from runvil.web import SearchProvider
from runvil.web._search import provider_from_env
from runvil.web._search.providers import (
    BraveProvider,
    DuckDuckGoProvider,
    GatewayProvider,
    SearxngProvider,
    TavilyProvider,
)

GATEWAY = {
    "RUNVIL_SEARCH_GATEWAY_URL": "https://gateway.example/v1/web/search",
    "RUNVIL_SEARCH_GATEWAY_KEY": "rvgw-secret",
}


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({}, DuckDuckGoProvider),
        ({"BRAVE_API_KEY": "BSA-x"}, BraveProvider),
        ({"TAVILY_API_KEY": "tvly-x"}, TavilyProvider),
        ({"SEARXNG_URL": "https://searx.example.org"}, SearxngProvider),
        (GATEWAY, GatewayProvider),
        ({"BRAVE_API_KEY": "", "TAVILY_API_KEY": "  "}, DuckDuckGoProvider),
        # Precedence when several are configured: Brave, Tavily, SearXNG, gateway.
        ({"BRAVE_API_KEY": "BSA-x", "TAVILY_API_KEY": "tvly-x", **GATEWAY}, BraveProvider),
        ({"TAVILY_API_KEY": "tvly-x", "SEARXNG_URL": "https://s.example"}, TavilyProvider),
        ({"SEARXNG_URL": "https://s.example", **GATEWAY}, SearxngProvider),
        # An explicit choice wins.
        ({"RUNVIL_SEARCH_PROVIDER": "gateway", "BRAVE_API_KEY": "BSA-x", **GATEWAY},
         GatewayProvider),
        ({"RUNVIL_SEARCH_PROVIDER": "DuckDuckGo", "BRAVE_API_KEY": "BSA-x"}, DuckDuckGoProvider),
    ],
)
def test_choice(environ: dict[str, str], kind: type) -> None:
    provider = provider_from_env(environ)
    assert isinstance(provider, kind)
    assert isinstance(provider, SearchProvider)


def test_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BRAVE_API_KEY", "TAVILY_API_KEY", "SEARXNG_URL", "RUNVIL_SEARCH_PROVIDER",
                 "RUNVIL_SEARCH_GATEWAY_URL", "RUNVIL_SEARCH_GATEWAY_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-from-env")
    assert isinstance(provider_from_env(), TavilyProvider)


def test_declared_endpoints() -> None:
    assert list(provider_from_env({}).endpoints) == ["html.duckduckgo.com:443"]
    assert list(provider_from_env({"BRAVE_API_KEY": "k"}).endpoints) == ["api.search.brave.com:443"]
    assert list(provider_from_env({"TAVILY_API_KEY": "k"}).endpoints) == ["api.tavily.com:443"]
    assert list(provider_from_env(GATEWAY).endpoints) == ["gateway.example:443"]


def test_searxng_private_endpoint_is_opt_in() -> None:
    with pytest.raises(ValueError) as caught:
        provider_from_env({"SEARXNG_URL": "http://searx.lan:8888"})
    assert str(caught.value) == (
        "SEARXNG_URL: the SearXNG URL must be an https URL (plain http only for a private "
        "endpoint) (RUNVIL_SEARXNG_ALLOW_PRIVATE=1 marks a LAN instance)"
    )
    provider = provider_from_env(
        {"SEARXNG_URL": "http://searx.lan:8888", "RUNVIL_SEARXNG_ALLOW_PRIVATE": "1"}
    )
    assert isinstance(provider, SearxngProvider)
    assert provider._egress.allow_private is True
    public = provider_from_env({"SEARXNG_URL": "https://searx.example.org"})
    assert isinstance(public, SearxngProvider) and public._egress.allow_private is False


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"RUNVIL_SEARCH_GATEWAY_URL": "https://gateway.example/"},
         "the gateway search provider needs RUNVIL_SEARCH_GATEWAY_KEY to be set"),
        ({"RUNVIL_SEARCH_GATEWAY_KEY": "rvgw-secret"},
         "the gateway search provider needs RUNVIL_SEARCH_GATEWAY_URL to be set"),
        ({"RUNVIL_SEARCH_PROVIDER": "brave"},
         "the brave search provider needs BRAVE_API_KEY to be set"),
        ({"RUNVIL_SEARCH_GATEWAY_URL": "http://gateway.example/",
          "RUNVIL_SEARCH_GATEWAY_KEY": "rvgw-secret"},
         "RUNVIL_SEARCH_GATEWAY_URL: the gateway URL must be an https URL (plain http only for "
         "a private endpoint)"),
        ({"RUNVIL_SEARCH_PROVIDER": "bing"},
         "RUNVIL_SEARCH_PROVIDER must be one of brave, tavily, searxng, gateway, duckduckgo, "
         "not 'bing'"),
    ],
)
def test_configuration_errors_name_the_variable(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        provider_from_env(environ)
    assert str(caught.value) == message
    assert "rvgw-secret" not in str(caught.value)
