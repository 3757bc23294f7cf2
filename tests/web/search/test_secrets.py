"""A keyed provider's key never reaches a message, not even in part.

The reproduction: a backend that echoes the request (the query, then every header) in its error
answer, and a query whose length puts the key across the 2,000-byte quote cut. A model steers
where the cut falls with the query's length alone (each ``é`` moves it two bytes), so the cut
is swept across the whole key, and nothing of the key may survive at any position.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web

from runvil._errors import ToolError
from runvil._net.secrets import MIN_PARTIAL
from runvil.web import SearchProvider, WebSearch
from runvil.web._search.providers import BraveProvider, GatewayProvider, TavilyProvider
from tests.fixtures.internet import FakeInternet
from tests.web.search.conftest import Serve

#: Where the quote of an error body is cut (seed 001).
CUT = 2000
PREAMBLE = "x" * 1700


@dataclass(frozen=True)
class Keyed:
    host: str
    key: str
    make: Callable[[str, FakeInternet], SearchProvider]
    query_of: Callable[[web.Request], Awaitable[str]]
    key_of: Callable[[web.Request], str]
    #: How the vendor wraps its own error text, when it has an envelope the provider reads.
    envelope: Callable[[str], Any] | None


async def url_query(request: web.Request) -> str:
    return request.query["q"]


async def json_query(request: web.Request) -> str:
    return str((await request.json())["query"])


def bearer(request: web.Request) -> str:
    return request.headers["Authorization"].removeprefix("Bearer ")


PROVIDERS = {
    "brave": Keyed(
        "api.search.brave.com",
        "BSA-test-key-0b9e6c1e3f0c",
        lambda key, net: BraveProvider(key, network=net.network()),
        url_query,
        lambda request: request.headers["X-Subscription-Token"],
        lambda text: {"type": "ErrorResponse", "error": {"code": "X", "detail": text}},
    ),
    "tavily": Keyed(
        "api.tavily.com",
        "tvly-test-key-5219ceb5",
        lambda key, net: TavilyProvider(key, network=net.network()),
        json_query,
        bearer,
        lambda text: {"detail": {"error": text}},
    ),
    "gateway": Keyed(
        "gateway.example",
        "rvgw-test-key-5f0c3ad1e1b2",
        lambda key, net: GatewayProvider(
            "https://gateway.example/v1/web/search", key, network=net.network()
        ),
        json_query,
        bearer,
        None,
    ),
}
FORMS = [
    (name, form)
    for name, keyed in PROVIDERS.items()
    for form in (("text", "envelope") if keyed.envelope is not None else ("text",))
]


def echo_body(keyed: Keyed, form: str, text: str) -> bytes:
    if form == "envelope":
        assert keyed.envelope is not None
        return json.dumps(keyed.envelope(text)).encode()
    return text.encode()


async def message(internet: FakeInternet, keyed: Keyed, query: str) -> str:
    with pytest.raises(ToolError) as caught:
        await WebSearch(keyed.make(keyed.key, internet)).call({"query": query})
    return str(caught.value)


@pytest.mark.parametrize(("name", "form"), FORMS)
async def test_no_cut_leaves_a_prefix_of_the_key(
    internet: FakeInternet, serve: Serve, name: str, form: str
) -> None:
    keyed = PROVIDERS[name]
    echoed: list[str] = []

    async def echo(request: web.Request) -> web.Response:
        headers = "; ".join(f"{k}: {v}" for k, v in request.headers.items())
        query, key = await keyed.query_of(request), keyed.key_of(request)
        text = f"{PREAMBLE} q={query} token={key} {headers} " + "y" * 3000
        echoed.append(text)
        return web.Response(status=400, body=echo_body(keyed, form, text))

    await serve(keyed.host, echo)
    await message(internet, keyed, "é")
    # Where the key lands with a one-character query, in the unit the quote is cut in (bytes of
    # a raw body, characters of a vendor's own error text).
    unit = (lambda t: len(t.encode())) if form == "text" else len
    at = unit(echoed[0][: echoed[0].index(keyed.key)])
    step = unit("é")
    for kept in (MIN_PARTIAL, 8, 14, len(keyed.key) - 1):
        room = CUT - kept - at  # how much longer the query must be to keep ``kept`` characters
        query = "é" * (1 + room // step) + "a" * (room % step)
        text = await message(internet, keyed, query)
        assert unit(echoed[-1][: echoed[-1].index(keyed.key)]) == CUT - kept
        assert keyed.key[:MIN_PARTIAL] not in text, (kept, text[-60:])
        assert "[redacted]"[: min(kept, 10)] in text


@pytest.mark.parametrize(("name", "form"), FORMS)
async def test_a_trailing_partial_key_is_redacted(
    internet: FakeInternet, serve: Serve, name: str, form: str
) -> None:
    keyed = PROVIDERS[name]

    async def shortened(request: web.Request) -> web.Response:
        # The backend cut its own echo of the key short.
        text = f"invalid token {keyed.key_of(request)[:MIN_PARTIAL + 2]}"
        return web.Response(status=401, body=echo_body(keyed, form, text))

    await serve(keyed.host, shortened)
    text = await message(internet, keyed, "q")
    assert text.startswith("web_search: backend returned 401: ")
    assert keyed.key[:MIN_PARTIAL] not in text
    assert "invalid token [redacted]" in text
