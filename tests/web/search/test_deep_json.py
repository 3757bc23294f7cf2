"""A provider's JSON nested far too deep is that provider's malformed response, never a crash.

Every provider's body, results and error envelopes alike, is read by one reader that measures
the nesting before parsing (``runvil.web._search.providers._json``); these tests drive each
JSON provider through the fake internet with bodies nested 40,000 deep in every shape.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.provider import SearchProvider
from runvil.web._search.providers import (
    BraveProvider,
    GatewayProvider,
    SearxngProvider,
    TavilyProvider,
)
from runvil.web._search.providers._json import MAX_JSON_DEPTH, decode_json_text, nesting_depth
from tests.fixtures.internet import FakeInternet
from tests.web.search.conftest import Serve

#: Deep enough for any recursion limit, small enough for every provider's body cap (256 KiB).
DEEP = 40_000

#: Each JSON provider: its host and how to build it on the fake internet.
PROVIDERS: dict[str, tuple[str, Callable[[FakeInternet], SearchProvider]]] = {
    "brave": ("api.search.brave.com", lambda i: BraveProvider("k", network=i.network())),
    "tavily": ("api.tavily.com", lambda i: TavilyProvider("k", network=i.network())),
    "searxng": (
        "searx.example.org",
        lambda i: SearxngProvider("https://searx.example.org/", network=i.network()),
    ),
    "gateway": (
        "gateway.example",
        lambda i: GatewayProvider(
            "https://gateway.example/v1/web/search", "k", network=i.network()
        ),
    ),
}

#: Bodies nested 40,000 deep: arrays, objects, both inside the expected envelope, and with
#: brackets hidden in strings around them.
BODIES = {
    "arrays": "[" * DEEP + "]" * DEEP,
    "objects": '{"a":' * DEEP + "1" + "}" * DEEP,
    "inside results": '{"results":' + "[" * DEEP + "]" * DEEP + "}",
    "unclosed": "[" * DEEP,
    "after a string of brackets": '["]]]]]]",' + "[" * DEEP + "]" * DEEP + "]",
}


def _served(body: str, status: int = 200) -> Callable[[web.Request], object]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=status, text=body, content_type="application/json")

    return handler


@pytest.mark.parametrize("shape", sorted(BODIES))
@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_deep_answer_is_the_ordinary_malformed_response(
    internet: FakeInternet,
    serve: Serve,
    caplog: pytest.LogCaptureFixture,
    name: str,
    shape: str,
) -> None:
    host, make = PROVIDERS[name]
    await serve(host, _served(BODIES[shape]))  # type: ignore[arg-type]
    with caplog.at_level(logging.DEBUG), pytest.raises(ToolError) as caught:
        await WebSearch(make(internet)).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Backend,
        "web_search: malformed search response",
    )
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_deep_error_body_is_quoted_like_any_other(
    internet: FakeInternet, serve: Serve, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    host, make = PROVIDERS[name]
    body = '{"e":' * DEEP + '"x"' + "}" * DEEP
    await serve(host, _served(body, status=400))  # type: ignore[arg-type]
    with caplog.at_level(logging.DEBUG), pytest.raises(ToolError) as caught:
        await WebSearch(make(internet)).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Backend,
        "web_search: backend returned 400: " + '{"e":' * 400,
    )
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("", 0),
        ("1", 0),
        ('"[[[{{"', 0),
        ('{"a":[1,{"b":[]}],"c":"]]]]"}', 4),
        ('["\\"[[[", [[]]]', 3),
        ('["\\\\", [[]]]', 3),
        ("[" * 65 + "]" * 65, 65),
    ],
)
def test_the_depth_is_counted_outside_strings(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth


def test_the_bound_is_exact() -> None:
    at_bound = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert decode_json_text(at_bound) is not None
    with pytest.raises(ValueError) as caught:
        decode_json_text("[" + at_bound + "]")
    assert str(caught.value) == "JSON nested deeper than 64 levels"
