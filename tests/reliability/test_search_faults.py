"""web/search under a misbehaving provider: the specified message and kind, at most one retry.

The provider is the SearXNG one pointed at the fault server (its base URL selects the fault), so
the real egress client, its caps, its deadline and its retry rule all run. Each test uses a fresh
path, and the fault server's ``/count/<path>`` says how many requests that path received.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from runvil._errors import ToolError, ToolErrorKind
from runvil.web._search.providers.gateway import GatewayProvider
from runvil.web._search.providers.searxng import SearxngProvider
from runvil.web._search.tool import WebSearch
from tests.fixtures.faults import FAULT_HOST, FaultServer
from tests.fixtures.internet import FakeInternet

#: The provider deadline for these tests: long enough for a retry, short enough for a trickle.
DEADLINE = 1.5
GATEWAY_KEY = "gw-secret-key"

SearchFor = Callable[..., WebSearch]


@pytest.fixture
async def search_for(
    internet: FakeInternet, fault_server: FaultServer
) -> AsyncIterator[tuple[SearchFor, list[str]]]:
    """Builds a WebSearch whose SearXNG base URL is a fresh path under ``fault``."""
    fault_server.install(internet)
    paths: list[str] = []

    def make(fault: str, vendor: str = "searxng") -> WebSearch:
        base = f"/search-api/{fault}/{uuid.uuid4().hex}"
        provider: SearxngProvider | GatewayProvider
        if vendor == "gateway":
            paths.append(base)
            provider = GatewayProvider(
                f"https://{FAULT_HOST}{base}", GATEWAY_KEY, internet.network(), timeout=DEADLINE
            )
        else:
            paths.append(base + "/search")
            provider = SearxngProvider(
                f"https://{FAULT_HOST}{base}", network=internet.network(), timeout=DEADLINE
            )
        return WebSearch(provider)

    yield make, paths


async def _requests_seen(internet: FakeInternet, path: str) -> int:
    """Ask the fault server how many requests ``path`` received (through a plain fetch)."""
    from runvil.web._fetch.tool import WebFetch

    async with WebFetch(network=internet.network()) as fetch:
        text = await fetch.call({"url": f"https://{FAULT_HOST}/count{path}"})
    return int(text.rsplit("\n", 1)[1])


CASES = {
    "reset before the response": ("reset-before", ToolErrorKind.Transport,
                                  "web_search: request failed"),
    "reset during the body": ("reset-body", ToolErrorKind.Transport,
                              "web_search: reading response failed"),
    "a head at 1 byte per second": ("trickle-head", ToolErrorKind.Transport,
                                    "web_search: request failed"),
    "a body at 1 byte per second": ("trickle-body", ToolErrorKind.Transport,
                                    "web_search: reading response failed"),
    "a declared length over the cap": ("huge-declared", ToolErrorKind.Backend,
                                       "web_search: response body exceeded 1048576 bytes"),
    "a streamed body over the cap": ("huge-streamed", ToolErrorKind.Backend,
                                     "web_search: response body exceeded 1048576 bytes"),
    "invalid UTF-8 in the JSON": ("invalid-utf8", ToolErrorKind.Backend,
                                  "web_search: malformed search response"),
    "rate limited twice": ("rate-limited", ToolErrorKind.Backend,
                           "web_search: backend returned 429: slow down"),
    # A reset is a transport failure, which is not retried (only 429 and 5xx are): so the 503
    # that would follow it, and the second retry that would follow that, never happen.
    "a reset, then a 503, then ...": ("storm", ToolErrorKind.Transport,
                                     "web_search: request failed"),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_search_fault_gives_its_message_and_kind(
    search_for: tuple[SearchFor, list[str]], internet: FakeInternet, name: str
) -> None:
    make, paths = search_for
    fault, kind, message = CASES[name]
    with pytest.raises(ToolError) as caught:
        await make(fault).call({"query": "rust async runtime"})
    assert (caught.value.kind, caught.value.message) == (kind, message)
    # A failed search is retried at most once, and only on 429 or 5xx.
    expected_requests = 2 if fault == "rate-limited" else 1
    assert await _requests_seen(internet, paths[0]) == expected_requests


GATEWAY_CASES = {
    "reset before the response": ("reset-before", ToolErrorKind.Transport,
                                  "web_search: request failed", 1),
    "reset during the body": ("reset-body", ToolErrorKind.Transport,
                              "web_search: reading response failed", 1),
    "a body over the gateway's 256 KiB cap": (
        "huge-streamed", ToolErrorKind.Backend, "web_search: response body exceeded 262144 bytes",
        1,
    ),
    "invalid UTF-8": ("invalid-utf8", ToolErrorKind.Backend,
                      "web_search: response body was not valid UTF-8", 1),
    "rate limited twice": ("rate-limited", ToolErrorKind.Backend,
                           'web_search: backend returned 429: {"error": "slow down"}', 2),
    "a reset, then a 503, then ...": ("storm", ToolErrorKind.Transport,
                                     "web_search: request failed", 1),
}


@pytest.mark.parametrize("name", list(GATEWAY_CASES))
async def test_gateway_fault_gives_the_seed_message(
    search_for: tuple[SearchFor, list[str]], internet: FakeInternet, name: str
) -> None:
    make, paths = search_for
    fault, kind, message, requests = GATEWAY_CASES[name]
    with pytest.raises(ToolError) as caught:
        await make(fault, "gateway").call({"query": "rust async runtime"})
    assert (caught.value.kind, caught.value.message) == (kind, message)
    assert GATEWAY_KEY not in caught.value.message
    assert await _requests_seen(internet, paths[0]) == requests


async def test_a_failing_then_working_provider_is_retried_exactly_once(
    search_for: tuple[SearchFor, list[str]], internet: FakeInternet
) -> None:
    make, paths = search_for
    text = await make("flaky").call({"query": "rust async runtime"})
    assert text == (
        '{"query":"rust async runtime","results":'
        '[{"title":"t","url":"https://example.com/","description":"d","site_name":"example.com"}]}'
    )
    assert await _requests_seen(internet, paths[0]) == 2


async def test_a_query_that_is_not_valid_unicode_is_refused_before_the_provider() -> None:
    # Finding F-1: a lone surrogate (JSON "\ud800" decodes to one) passed every argument check,
    # spent a provider call, and only then failed as kind Other ("the results could not be
    # rendered"). Text that cannot be encoded cannot be searched for: it is an argument error.
    from bench.fuzz.targets import RecordingProvider

    provider = RecordingProvider()
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider).call({"query": "caf\udce9"})
    assert caught.value.kind is ToolErrorKind.InvalidArguments
    assert caught.value.message.startswith("web_search: ")
    assert provider.calls == 0
