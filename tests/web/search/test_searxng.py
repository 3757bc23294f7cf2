"""SearXNG provider: a public instance over TLS and a LAN instance over plain HTTP."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.providers import SearxngProvider
from tests.fixtures.internet import FakeInternet, Served
from tests.web.search.conftest import Serve

HOST = "searx.example.org"
BASE = f"https://{HOST}/"

SAMPLE: dict[str, Any] = {
    "query": "rust async runtime",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://tokio.rs/",
            "engine": "duckduckgo",
            "parsed_url": ["https", "tokio.rs", "/", "", "", ""],
            "template": "default.html",
            "title": "Tokio - An asynchronous Rust runtime",
            "content": "Tokio is an asynchronous runtime for the Rust programming language.",
            "img_src": "",
            "thumbnail": "",
            "publishedDate": None,
            "pubdate": "",
            "engines": ["duckduckgo", "brave"],
            "positions": [1, 1],
            "score": 4.0,
            "category": "general",
        },
        {
            "url": "https://docs.rs/tokio/latest/tokio/",
            "engine": "brave",
            "parsed_url": ["https", "docs.rs", "/tokio/latest/tokio/", "", "", ""],
            "title": "tokio - Rust",
            "content": "A runtime for writing reliable network applications without "
            "compromising speed.",
            "publishedDate": "2025-11-02T00:00:00",
            "pubdate": "2025-11-02 00:00:00",
            "engines": ["brave"],
            "score": 0.5,
            "category": "general",
        },
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["tokio rust", "async-std"],
    "unresponsive_engines": [["google", "Suspended: CAPTCHA"], ["startpage", "timeout"]],
}
EXPECTED = (
    '{"query":"rust async runtime","results":[{"title":"Tokio - An asynchronous Rust runtime",'
    '"url":"https://tokio.rs/","description":"Tokio is an asynchronous runtime for the Rust '
    'programming language.","site_name":"tokio.rs"},{"title":"tokio - Rust","url":'
    '"https://docs.rs/tokio/latest/tokio/","description":"A runtime for writing reliable '
    'network applications without compromising speed.","age":"2025-11-02","site_name":'
    '"docs.rs"}]}'
)


def answer(status: int, body: Any, content_type: str = "application/json") -> Any:
    async def handler(request: web.Request) -> web.Response:
        text = body if isinstance(body, str) else json.dumps(body)
        return web.Response(status=status, text=text, content_type=content_type)

    return handler


def provider(internet: FakeInternet, base: str = BASE, **kwargs: Any) -> SearxngProvider:
    made = SearxngProvider(base, network=internet.network(), **kwargs)
    made._egress.default_retry_wait = 0.0
    return made


def params(served: Served, index: int = 0) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(served.request_lines[index].split(" ", 1)[1]).query))


async def test_documented_request_and_response(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, answer(200, SAMPLE))
    text = await WebSearch(provider(internet)).call(
        {
            "query": "rust async runtime",
            "freshness": "pw",
            "safesearch": "strict",
            "country": "us",
            "search_lang": "en",
        }
    )
    assert text == EXPECTED
    assert served.request_lines == [
        "GET /search?q=rust+async+runtime&format=json&time_range=week&safesearch=2&language=en-US"
    ]
    assert served.headers[0]["Host"] == HOST


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({}, {}),
        ({"freshness": "pd"}, {"time_range": "day"}),
        ({"freshness": "pm"}, {"time_range": "month"}),
        ({"freshness": "py"}, {"time_range": "year"}),
        ({"safesearch": "off"}, {"safesearch": "0"}),
        ({"safesearch": "moderate"}, {"safesearch": "1"}),
        ({"search_lang": "fr"}, {"language": "fr"}),
        ({"search_lang": "pt-br", "country": "us"}, {"language": "pt-BR"}),
        ({"search_lang": "en", "country": "uk"}, {"language": "en-GB"}),
        ({"country": "de"}, {}),  # a country alone has no SearXNG parameter
        ({"search_lang": "english"}, {}),  # SearXNG would refuse it with a 400
    ],
)
async def test_argument_mapping(
    internet: FakeInternet, serve: Serve, arguments: dict[str, Any], sent: dict[str, str]
) -> None:
    served = await serve(HOST, answer(200, {"query": "q", "results": []}))
    await WebSearch(provider(internet)).call({"query": "q", **arguments})
    assert params(served) == {"q": "q", "format": "json", **sent}


async def test_count_truncates_the_merged_list(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, answer(200, SAMPLE))
    text = await WebSearch(provider(internet)).call({"query": "rust", "count": 1})
    assert [r["url"] for r in json.loads(text)["results"]] == ["https://tokio.rs/"]
    assert "count" not in params(served)


async def test_domain_lists(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, answer(200, SAMPLE))
    text = await WebSearch(provider(internet)).call(
        {"query": "rust", "include_domains": ["docs.rs"]}
    )
    assert params(served)["q"] == "rust site:docs.rs"
    assert [r["url"] for r in json.loads(text)["results"]] == ["https://docs.rs/tokio/latest/tokio/"]


async def test_a_base_url_with_a_path(internet: FakeInternet, serve: Serve) -> None:
    served = await serve(HOST, answer(200, {"query": "q", "results": []}))
    await WebSearch(provider(internet, f"https://{HOST}/searxng/")).call({"query": "q"})
    await WebSearch(provider(internet, f"https://{HOST}/searxng/search")).call({"query": "r"})
    assert served.request_lines == [
        "GET /searxng/search?q=q&format=json",
        "GET /searxng/search?q=r&format=json",
    ]


async def test_engines_that_failed_with_nothing_found_are_an_error(
    internet: FakeInternet, serve: Serve
) -> None:
    body = dict(SAMPLE, results=[])
    await serve(HOST, answer(200, body))
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider(internet)).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Backend
    assert str(caught.value) == (
        "web_search: search engines did not respond: google (Suspended: CAPTCHA), "
        "startpage (timeout)"
    )


async def test_nothing_found_is_an_empty_list(internet: FakeInternet, serve: Serve) -> None:
    body = {"query": "xqzvvqjx", "results": [], "answers": [], "corrections": [],
            "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
    await serve(HOST, answer(200, body))
    assert await WebSearch(provider(internet)).call({"query": "xqzvvqjx"}) == (
        '{"query":"xqzvvqjx","results":[]}'
    )


FORBIDDEN = (
    "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
    "<p>You don&#39;t have the permission to access the requested resource.</p>\n"
)


@pytest.mark.parametrize(
    ("status", "body", "content_type", "message", "attempts"),
    [
        (
            403,
            FORBIDDEN,
            "text/html",
            "backend returned 403: the instance refuses format=json (list json under "
            "search.formats in its settings.yml)",
            1,
        ),
        (429, "Too Many Requests", "text/html", "backend returned 429: Too Many Requests", 2),
        (
            400,
            {"error": "Invalid value week2 for parameter time_range"},
            "application/json",
            "backend returned 400: Invalid value week2 for parameter time_range",
            1,
        ),
        (500, {"error": "search error"}, "text/json", "backend returned 500: search error", 2),
    ],
)
async def test_documented_errors(
    internet: FakeInternet,
    serve: Serve,
    status: int,
    body: Any,
    content_type: str,
    message: str,
    attempts: int,
) -> None:
    served = await serve(HOST, answer(status, body, content_type))
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider(internet)).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Backend
    assert str(caught.value) == f"web_search: {message}"
    assert len(served.request_lines) == attempts


@pytest.mark.parametrize("body", ["<html>", [], {"results": "x"}, {"results": [{"title": 1}]}])
async def test_malformed_bodies(internet: FakeInternet, serve: Serve, body: Any) -> None:
    await serve(HOST, answer(200, body))
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider(internet)).call({"query": "q"})
    assert str(caught.value) == "web_search: malformed search response"


PlainServe = Callable[..., Awaitable[Served]]


async def test_a_lan_instance_needs_allow_private(
    internet: FakeInternet, serve_plain: PlainServe
) -> None:
    served = await serve_plain("searx.lan", answer(200, SAMPLE), ip="192.168.1.20", port=8888)
    lan = provider(internet, "http://searx.lan:8888", allow_private=True)
    assert list(lan.endpoints) == ["searx.lan:8888"]
    assert await WebSearch(lan).call({"query": "rust async runtime"}) == EXPECTED
    assert served.request_lines == ["GET /search?q=rust+async+runtime&format=json"]
    assert served.headers[0]["Host"] == "searx.lan:8888"

    strict = SearxngProvider("https://searx.lan:8888", network=internet.network())
    with pytest.raises(ToolError) as caught:
        await WebSearch(strict).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Transport,
        "web_search: request failed",
    )
    assert len(served.request_lines) == 1


async def test_a_lan_instance_by_address(internet: FakeInternet, serve_plain: PlainServe) -> None:
    served = await serve_plain("10.0.0.7", answer(200, SAMPLE), ip="10.0.0.7", port=8080)
    lan = provider(internet, "http://10.0.0.7:8080/", allow_private=True)
    assert await WebSearch(lan).call({"query": "rust async runtime"}) == EXPECTED
    assert served.request_lines == ["GET /search?q=rust+async+runtime&format=json"]


def test_configuration_is_checked_up_front() -> None:
    with pytest.raises(ValueError):
        SearxngProvider("http://searx.example.org/")  # plain http only for a private endpoint
    with pytest.raises(ValueError):
        SearxngProvider("https://user:secret@searx.example.org/")
    with pytest.raises(ValueError):
        SearxngProvider("ftp://searx.example.org/")
    assert list(SearxngProvider("https://searx.example.org").endpoints) == ["searx.example.org:443"]
