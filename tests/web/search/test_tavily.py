"""Tavily provider against a fake api.tavily.com."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.providers import TavilyProvider
from tests.fixtures.internet import FakeInternet, Served
from tests.web.search.conftest import Serve

HOST = "api.tavily.com"
KEY = "tvly-test-key-5219ceb5"
BODIES = web.AppKey("bodies", list)

SAMPLE = {
    "query": "rust async runtime",
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "url": "https://tokio.rs/tokio/tutorial",
            "title": "Tutorial | Tokio - An asynchronous Rust runtime",
            "content": "Tokio is an asynchronous runtime for the Rust programming language.",
            "score": 0.8652412,
            "raw_content": None,
        },
        {
            "url": "https://www.tokio.rs/blog/2025-10-announcing-1-48",
            "title": "Announcing Tokio 1.48 | Tokio",
            "content": "Today we are releasing Tokio 1.48.",
            "score": 0.71093214,
            "raw_content": None,
            "published_date": "Mon, 01 Dec 2025 21:29:54 GMT",
        },
        {
            "url": "https://leaky.example/not-asked-for",
            "title": "A domain the include list did not name",
            "content": "Tavily is known to let these through.",
            "score": 0.1,
        },
    ],
    "response_time": 1.08,
    "request_id": "5219ceb5-6bd9-4d38-b675-2fb7b8a887f2",
}


def tavily_api(*answers: tuple[int, Any]) -> Any:
    script = list(answers)

    async def handler(request: web.Request) -> web.Response:
        request.app[BODIES].append(await request.json())
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return web.json_response(
                {"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401
            )
        status, body = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(body, (dict, list)):
            return web.json_response(body, status=status, headers={"Retry-After": "0"})
        return web.Response(status=status, text=body, headers={"Retry-After": "0"})

    return handler


async def start(serve: Serve, *answers: tuple[int, Any]) -> tuple[Served, list[Any]]:
    app = web.Application()
    app[BODIES] = []
    app.router.add_post("/search", tavily_api(*answers))
    return await serve(HOST, app), app[BODIES]


def tool(internet: FakeInternet, key: str = KEY) -> WebSearch:
    return WebSearch(TavilyProvider(key, network=internet.network()))


async def test_documented_request_and_response(internet: FakeInternet, serve: Serve) -> None:
    served, bodies = await start(serve, (200, SAMPLE))
    text = await tool(internet).call(
        {
            "query": "rust async runtime",
            "count": 5,
            "freshness": "pw",
            "country": "us",
            "search_lang": "en",
            "safesearch": "strict",
            "include_domains": ["tokio.rs"],
            "exclude_domains": ["docs.rs"],
        }
    )
    assert served.request_lines == ["POST /search"]
    assert served.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert served.headers[0]["Content-Type"] == "application/json"
    assert bodies == [
        {
            "query": "rust async runtime",
            "search_depth": "basic",
            "topic": "general",
            "max_results": 5,
            "time_range": "week",
            "country": "united states",
            "include_domains": ["tokio.rs"],
            "exclude_domains": ["docs.rs"],
        }
    ]
    assert "api_key" not in bodies[0], "the key travels only in the header"
    assert text == (
        '{"query":"rust async runtime","results":[{"title":"Tutorial | Tokio - An asynchronous '
        'Rust runtime","url":"https://tokio.rs/tokio/tutorial","description":"Tokio is an '
        'asynchronous runtime for the Rust programming language.","site_name":"tokio.rs"},'
        '{"title":"Announcing Tokio 1.48 | Tokio","url":"https://www.tokio.rs/blog/2025-10-'
        'announcing-1-48","description":"Today we are releasing Tokio 1.48.","age":"Mon, 01 Dec '
        '2025 21:29:54 GMT","site_name":"www.tokio.rs"}]}'
    )


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({}, {}),
        ({"freshness": "pd"}, {"time_range": "day"}),
        ({"freshness": "pm"}, {"time_range": "month"}),
        ({"freshness": "py"}, {"time_range": "year"}),
        ({"country": "GB"}, {"country": "united kingdom"}),
        ({"country": "germany"}, {"country": "germany"}),
        ({"country": "zz"}, {}),
        ({"include_domains": [], "exclude_domains": []}, {}),
    ],
)
async def test_argument_mapping(
    internet: FakeInternet, serve: Serve, arguments: dict[str, Any], sent: dict[str, Any]
) -> None:
    _, bodies = await start(serve, (200, {"query": "q", "results": []}))
    assert await tool(internet).call({"query": "q", **arguments}) == '{"query":"q","results":[]}'
    assert bodies == [{"query": "q", "search_depth": "basic", "topic": "general", **sent}]


async def test_exclusions_are_enforced_here(internet: FakeInternet, serve: Serve) -> None:
    await start(serve, (200, SAMPLE))
    text = await tool(internet).call({"query": "q", "exclude_domains": ["tokio.rs"]})
    assert [r["url"] for r in json.loads(text)["results"]] == ["https://leaky.example/not-asked-for"]


async def test_empty_results_with_null_images(internet: FakeInternet, serve: Serve) -> None:
    body = {"query": "q", "follow_up_questions": None, "answer": None, "images": None,
            "results": [], "response_time": 1.21}
    await start(serve, (200, body))
    assert await tool(internet).call({"query": "q"}) == '{"query":"q","results":[]}'


@pytest.mark.parametrize(
    ("status", "body", "message", "attempts"),
    [
        (
            400,
            {"detail": {"error": "All domains in include_domains are invalid: ['nhs.uk']."}},
            "backend returned 400: All domains in include_domains are invalid: ['nhs.uk'].",
            1,
        ),
        (
            429,
            {"detail": {"error": "Your request has been blocked due to excessive requests. "
                                 "Please reduce rate of requests."}},
            "backend returned 429: Your request has been blocked due to excessive requests. "
            "Please reduce rate of requests.",
            2,
        ),
        (
            432,
            {"detail": {"error": "This request exceeds your plan's set usage limit. Please "
                                 "upgrade your plan or contact support@tavily.com"}},
            "backend returned 432: This request exceeds your plan's set usage limit. Please "
            "upgrade your plan or contact support@tavily.com",
            1,
        ),
        (
            433,
            {"detail": {"error": "This request exceeds the pay-as-you-go limit. You can increase "
                                 "your limit on the Tavily dashboard."}},
            "backend returned 433: This request exceeds the pay-as-you-go limit. You can "
            "increase your limit on the Tavily dashboard.",
            1,
        ),
        (
            500,
            {"detail": {"error": "Internal Server Error"}},
            "backend returned 500: Internal Server Error",
            2,
        ),
        (
            422,
            {"detail": [{"loc": ["body", "max_results"], "msg": "Input should be an integer"}]},
            "backend returned 422: body.max_results: Input should be an integer",
            1,
        ),
        (403, {"detail": "Forbidden"}, "backend returned 403: Forbidden", 1),
        (502, "bad gateway\n", "backend returned 502: bad gateway\\n", 2),
    ],
)
async def test_documented_errors(
    internet: FakeInternet, serve: Serve, status: int, body: Any, message: str, attempts: int
) -> None:
    served, _ = await start(serve, (status, body))
    with pytest.raises(ToolError) as caught:
        await tool(internet).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Backend
    assert str(caught.value) == f"web_search: {message}"
    assert len(served.request_lines) == attempts


async def test_an_invalid_key(internet: FakeInternet, serve: Serve) -> None:
    await start(serve, (200, SAMPLE))
    with pytest.raises(ToolError) as caught:
        await tool(internet, key="tvly-wrong").call({"query": "q"})
    assert str(caught.value) == (
        "web_search: backend returned 401: Unauthorized: missing or invalid API key."
    )


async def test_a_rate_limit_then_success(internet: FakeInternet, serve: Serve) -> None:
    served, _ = await start(
        serve, (429, {"detail": {"error": "slow down"}}), (200, {"query": "q", "results": []})
    )
    assert await tool(internet).call({"query": "q"}) == '{"query":"q","results":[]}'
    assert len(served.request_lines) == 2


@pytest.mark.parametrize(
    "body", ["nope", {"results": {}}, {"answer": None}, {"results": [{"title": "x"}]}]
)
async def test_malformed_bodies(internet: FakeInternet, serve: Serve, body: Any) -> None:
    await start(serve, (200, body))
    with pytest.raises(ToolError) as caught:
        await tool(internet).call({"query": "q"})
    assert str(caught.value) == "web_search: malformed search response"


async def test_the_key_never_leaks(
    internet: FakeInternet, serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.json_response(
            {"detail": {"error": f"key {request.headers['Authorization'][7:]} is over quota"}},
            status=432,
        )

    served = await serve(HOST, echo)
    provider = TavilyProvider(KEY, network=internet.network())
    with caplog.at_level(logging.DEBUG), pytest.raises(ToolError) as caught:
        await WebSearch(provider).call({"query": "q"})
    assert str(caught.value) == "web_search: backend returned 432: key [redacted] is over quota"
    assert KEY not in caplog.text and KEY not in repr(provider)
    assert all(KEY not in line for line in served.request_lines)
