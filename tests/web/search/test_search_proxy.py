"""Search requests through the operator's proxy: the endpoint approved first, then a CONNECT to
its approved address; a refusal is the providers' shared ``request failed``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from runvil._errors import ToolErrorKind
from runvil.web import SearchSettings, WebSearch, provider_from_settings
from runvil.web._search.egress import Egress
from runvil.web._search.provider import ProviderError
from tests.fixtures.internet import FakeInternet
from tests.fixtures.proxy import ConnectProxy
from tests.web.search.conftest import Serve
from tests.web.search.test_searxng import EXPECTED, SAMPLE, answer

HOST = "api.vendor.example"


@pytest.fixture
async def tunnel(internet: FakeInternet) -> AsyncIterator[ConnectProxy]:
    proxy = await ConnectProxy(internet).start()
    yield proxy
    await proxy.stop()


async def ok(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def test_a_request_goes_through_a_tunnel_to_the_approved_address(
    internet: FakeInternet, serve: Serve, tunnel: ConnectProxy
) -> None:
    served = await serve(HOST, ok, ip="34.120.0.10")
    internet.dns[HOST] = ["127.0.0.1", "34.120.0.10"]
    egress = Egress([f"{HOST}:443"], network=internet.network(), proxy=tunnel.url)
    response = await egress.send("GET", f"https://{HOST}/v1")
    assert (response.status, response.body) == (200, b'{"ok": true}')
    assert tunnel.targets == ["34.120.0.10:443"]
    assert served.headers[0]["Host"] == HOST


async def test_an_undeclared_target_never_reaches_the_proxy(
    internet: FakeInternet, tunnel: ConnectProxy
) -> None:
    egress = Egress([f"{HOST}:443"], network=internet.network(), proxy=tunnel.url)
    with pytest.raises(ProviderError):
        await egress.send("GET", "https://elsewhere.example/")
    assert tunnel.targets == [] and internet.lookups == []


async def test_a_refusing_proxy_is_request_failed(
    internet: FakeInternet, serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    served = await serve(HOST, ok)
    proxy = await ConnectProxy(internet, refuse=403).start()
    try:
        egress = Egress([f"{HOST}:443"], network=internet.network(), proxy=proxy.url)
        with caplog.at_level(logging.INFO), pytest.raises(ProviderError) as caught:
            await egress.send("GET", f"https://{HOST}/v1")
    finally:
        await proxy.stop()
    assert (caught.value.kind, caught.value.message) == (ToolErrorKind.Transport, "request failed")
    assert served.request_lines == []
    assert f"search endpoint {HOST}: the proxy refused the tunnel (status 403)" in caplog.messages


async def test_the_factory_hands_the_proxy_to_the_provider(
    internet: FakeInternet, serve: Serve, tunnel: ConnectProxy
) -> None:
    await serve("searx.example.org", answer(200, SAMPLE), ip="34.120.0.44")
    settings = SearchSettings("searxng", url="https://searx.example.org", proxy=tunnel.url)
    provider = provider_from_settings(settings, network=internet.network())
    assert provider is not None
    assert await WebSearch(provider).call({"query": "rust async runtime"}) == EXPECTED
    assert tunnel.targets == ["34.120.0.44:443"]


async def test_a_keyed_provider_through_the_proxy_keeps_its_key_from_the_proxy(
    internet: FakeInternet, serve: Serve, tunnel: ConnectProxy
) -> None:
    async def brave(request: web.Request) -> web.Response:
        return web.json_response({"web": {"results": []}})

    await serve("api.search.brave.com", brave, ip="34.120.0.55")
    settings = SearchSettings("brave", api_key="brave-key-123", proxy=tunnel.url)
    provider = provider_from_settings(settings, network=internet.network())
    assert provider is not None
    assert await WebSearch(provider).call({"query": "q"}) == '{"query":"q","results":[]}'
    assert tunnel.targets == ["34.120.0.55:443"]
    assert all("brave-key-123" not in head for head in tunnel.heads)


def test_the_settings_never_show_the_proxy_password() -> None:
    settings = SearchSettings("duckduckgo", proxy="http://alice:pa55word@proxy.corp:3128")
    assert "pa55word" not in repr(settings) and "alice" not in repr(settings)
    provider = provider_from_settings(settings)
    assert provider is not None
    assert "pa55word" not in repr(provider._egress._proxies)  # type: ignore[attr-defined]
