"""A search endpoint on the operator's own network: ``private_hosts`` and ``allow_private``.

One rule for both: a private endpoint's answers are judged as a named private host's (private,
CGNAT, loopback and unique-local allowed; link-local with the metadata address, multicast and
the IPv4-in-IPv6 forms never), and it may be reached over plain ``http``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import SearchSettings, WebSearch, provider_from_settings
from runvil.web._search.egress import Egress
from runvil.web._search.provider import ProviderError, parse_endpoint
from runvil.web._search.providers import GatewayProvider, SearxngProvider
from tests.fixtures.internet import FakeInternet, Served
from tests.web.search.conftest import Serve
from tests.web.search.test_searxng import EXPECTED, SAMPLE, answer

PlainServe = Callable[..., Awaitable[Served]]


async def failed(search: WebSearch) -> tuple[ToolErrorKind, str]:
    with pytest.raises(ToolError) as caught:
        await search.call({"query": "q"})
    return caught.value.kind, str(caught.value)


async def test_a_listed_searxng_is_reached_over_http(
    internet: FakeInternet, serve_plain: PlainServe
) -> None:
    served = await serve_plain("searx.lan", answer(200, SAMPLE), ip="192.168.1.20", port=8888)
    lan = SearxngProvider(
        "http://searx.lan:8888", network=internet.network(), private_hosts=("searx.lan:8888",)
    )
    assert await WebSearch(lan).call({"query": "rust async runtime"}) == EXPECTED
    assert served.request_lines == ["GET /search?q=rust+async+runtime&format=json"]
    assert internet.dials == [("192.168.1.20", 8888)]


async def test_the_factory_passes_the_list_on(
    internet: FakeInternet, serve_plain: PlainServe
) -> None:
    await serve_plain("searx.lan", answer(200, SAMPLE), ip="10.1.1.1", port=8888)
    settings = SearchSettings(
        "searxng", url="http://searx.lan:8888", private_hosts=("*.lan:8888",)
    )
    provider = provider_from_settings(settings, network=internet.network())
    assert provider is not None
    assert await WebSearch(provider).call({"query": "rust async runtime"}) == EXPECTED


def test_an_entry_for_another_port_does_not_make_the_endpoint_private() -> None:
    with pytest.raises(ValueError) as caught:
        SearxngProvider("http://searx.lan:8888", private_hosts=("searx.lan",))
    assert str(caught.value) == (
        "the SearXNG URL must be an https URL (plain http only for a private endpoint)"
    )


async def test_an_unlisted_endpoint_keeps_the_table(
    internet: FakeInternet, serve: Serve
) -> None:
    served = await serve("searx.lan", answer(200, SAMPLE), ip="192.168.1.20")
    other = SearxngProvider(
        "https://searx.lan", network=internet.network(), private_hosts=("other.lan",)
    )
    assert await failed(WebSearch(other)) == (ToolErrorKind.Transport, "web_search: request failed")
    assert served.request_lines == []


@pytest.mark.parametrize(
    "address", ["169.254.169.254", "::ffff:169.254.169.254", "fe80::1", "224.0.0.1", "0.0.0.0"]
)
@pytest.mark.parametrize("how", ["listed", "allow_private"])
async def test_a_private_endpoint_never_reaches_link_local_or_multicast(
    internet: FakeInternet, address: str, how: str
) -> None:
    internet.dns["searx.lan"] = [address]
    options: dict[str, object] = (
        {"private_hosts": ("searx.lan:8888",)} if how == "listed" else {"allow_private": True}
    )
    lan = SearxngProvider(
        "http://searx.lan:8888", network=internet.network(), **options  # type: ignore[arg-type]
    )
    assert await failed(WebSearch(lan)) == (ToolErrorKind.Transport, "web_search: request failed")
    assert internet.dials == []


async def test_a_listed_gateway_on_the_lan(
    internet: FakeInternet, serve_plain: PlainServe
) -> None:
    async def gateway(request: web.Request) -> web.Response:
        return web.json_response({"query": "q", "results": []})

    served = await serve_plain("gw.corp.example", gateway, ip="10.2.0.9", port=9000)
    provider = GatewayProvider(
        "http://gw.corp.example:9000/search",
        "gw-key",
        network=internet.network(),
        private_hosts=("gw.corp.example:9000",),
    )
    assert await WebSearch(provider).call({"query": "q"}) == '{"query":"q","results":[]}'
    assert served.headers[0]["Authorization"] == "Bearer gw-key"


async def test_the_egress_lists_by_host_and_port(
    internet: FakeInternet, serve: Serve
) -> None:
    await serve("api.corp.example", answer(200, {"ok": True}), ip="10.3.0.1", port=8443)
    listed = Egress(
        ["api.corp.example:8443"],
        network=internet.network(),
        private_hosts=("api.corp.example:8443",),
    )
    assert (await listed.send("GET", "https://api.corp.example:8443/x")).status == 200
    default_ports = Egress(
        ["api.corp.example:8443"],
        network=internet.network(),
        private_hosts=("api.corp.example",),
    )
    with pytest.raises(ProviderError):
        await default_ports.send("GET", "https://api.corp.example:8443/x")
    assert internet.dials == [("10.3.0.1", 8443)]


# --- endpoint names in the one spelling (issue 22, item 6) ----------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: SearxngProvider("https://searx.example.org../"),
         "the SearXNG URL has a host name with an empty label"),
        (lambda: SearxngProvider("https://searx..example.org/"),
         "the SearXNG URL has a host name with an empty label"),
        (lambda: GatewayProvider("https://gw.example../v1/web/search", "k"),
         "the gateway URL has a host name with an empty label"),
        (lambda: parse_endpoint("api.example..:443"),
         "search endpoint 'api.example..:443' has an invalid host"),
        (lambda: parse_endpoint(".api.example:443"),
         "search endpoint '.api.example:443' has an invalid host"),
    ],
)
def test_an_endpoint_with_an_empty_label_is_refused_when_declared(
    make: Callable[[], object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        make()
    assert str(caught.value) == message


def test_one_trailing_dot_declares_the_same_endpoint() -> None:
    assert parse_endpoint("API.Example.:443") == ("api.example", 443)
    assert SearxngProvider("https://searx.example.org./").endpoints == ("searx.example.org:443",)
