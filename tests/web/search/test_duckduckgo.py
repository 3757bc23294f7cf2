"""DuckDuckGo HTML provider against a fake html.duckduckgo.com."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any
from urllib.parse import parse_qsl

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.providers import DuckDuckGoProvider
from runvil.web._search.providers.duckduckgo import RATE_LIMITED, unwrap
from tests.fixtures.internet import FakeInternet, Served
from tests.web.search.conftest import Serve

HOST = "html.duckduckgo.com"

PAGE = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head><meta http-equiv="content-type" content="text/html; charset=UTF-8" />
<title>rust async runtime at DuckDuckGo</title></head>
<body class="body--html">
<div>
  <div id="header" class="header cw header--html">
    <form name="x" class="header__form" action="/html/" method="post">
      <input name="q" class="search__input" type="text" value="rust async runtime" />
    </form>
  </div>
  <div class="serp__results"><div id="links" class="results">
    <div class="result results_links results_links_deep result--ad result--ad--small">
      <div class="links_main links_deep result__body">
        <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=example-ads.com&amp;ad_provider=bingv7aa&amp;ad_type=txad&amp;u3=https%3A%2F%2Fexample%2Dads.com%2F">Learn Rust Fast - Online Course</a></h2>
        <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=example-ads.com">Ad · Master async Rust in 30 days.</a>
      </div>
    </div>
    <div class="result results_links results_links_deep web-result ">
      <div class="links_main links_deep result__body"> <!-- This is the visible part -->
        <h2 class="result__title">
          <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F&amp;rut=5f0c3ad1e1b2">Tokio - An asynchronous <b>Rust</b> <b>runtime</b></a>
        </h2>
        <div class="result__extras"><div class="result__extras__url">
          <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F&amp;rut=5f0c3ad1">tokio.rs</a>
        </div></div>
        <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F&amp;rut=5f0c3ad1">Tokio is an <b>asynchronous</b> <b>runtime</b> for the <b>Rust</b> programming language. It provides the building blocks needed for writing network applications &amp; services.</a>
        <div class="clear"></div>
      </div>
    </div>
    <div class="result results_links results_links_deep web-result ">
      <div class="links_main links_deep result__body">
        <h2 class="result__title">
          <a rel="nofollow" class="result__a" href="/l/?uddg=https%3A%2F%2Fdocs.rs%2Ftokio%2Flatest%2Ftokio%2F%3Fsearch%3Dspawn%26x%3D1&amp;rut=a1b2c3">tokio - <b>Rust</b></a>
        </h2>
        <a class="result__snippet" href="/l/?uddg=https%3A%2F%2Fdocs.rs%2Ftokio%2Flatest%2Ftokio%2F%3Fsearch%3Dspawn%26x%3D1&amp;rut=a1b2c3">A <b>runtime</b> for writing reliable network applications without compromising speed. Don&#x27;t block the executor.</a>
      </div>
    </div>
    <div class="result results_links results_links_deep web-result ">
      <div class="links_main links_deep result__body">
        <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://async.rs/">async-std</a></h2>
        <a class="result__snippet" href="https://async.rs/">Async version of the <b>Rust</b> standard library.</a>
      </div>
    </div>
    <div class="nav-link">
      <form action="/html/" method="post">
        <input type="submit" class="btn btn--alt" value="Next" />
        <input type="hidden" name="vqd" value="4-211296339845791282406437207834315436466" />
      </form>
    </div>
  </div></div>
</div>
</body>
</html>
"""  # noqa: E501
EXPECTED_ROWS = [
    {
        "title": "Tokio - An asynchronous Rust runtime",
        "url": "https://tokio.rs/",
        "description": "Tokio is an asynchronous runtime for the Rust programming language. It "
        "provides the building blocks needed for writing network applications & services.",
        "site_name": "tokio.rs",
    },
    {
        "title": "tokio - Rust",
        "url": "https://docs.rs/tokio/latest/tokio/?search=spawn&x=1",
        "description": "A runtime for writing reliable network applications without "
        "compromising speed. Don't block the executor.",
        "site_name": "docs.rs",
    },
    {
        "title": "async-std",
        "url": "https://async.rs/",
        "description": "Async version of the Rust standard library.",
        "site_name": "async.rs",
    },
]
NO_RESULTS = """<html><body><div id="links" class="results">
  <div class="result results_links results_links_deep result--no-result">
    <div class="no-results">No  results.</div>
  </div>
</div></body></html>"""
CHALLENGE = """<html><head><title>DuckDuckGo</title></head><body>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST">
  <div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
  <div class="anomaly-modal__description">Please complete the following challenge.</div>
</form></body></html>"""


def page(status: int, text: str) -> Any:
    async def handler(request: web.Request) -> web.Response:
        request.app[FORMS].append(dict(parse_qsl(await request.text(), keep_blank_values=True)))
        return web.Response(status=status, text=text, content_type="text/html",
                            headers={"Retry-After": "0"})

    return handler


FORMS = web.AppKey("forms", list)


async def start(serve: Serve, status: int = 200, text: str = PAGE) -> tuple[Served, list[Any]]:
    app = web.Application()
    app[FORMS] = []
    app.router.add_post("/html/", page(status, text))
    return await serve(HOST, app), app[FORMS]


def provider(internet: FakeInternet, **kwargs: Any) -> DuckDuckGoProvider:
    options: dict[str, Any] = {"network": internet.network(), "min_interval": 0.0}
    options.update(kwargs)
    return DuckDuckGoProvider(**options)


async def test_the_result_page_is_read(internet: FakeInternet, serve: Serve) -> None:
    served, forms = await start(serve)
    text = await WebSearch(provider(internet)).call({"query": "rust async runtime"})
    assert json.loads(text) == {"query": "rust async runtime", "results": EXPECTED_ROWS}
    assert served.request_lines == ["POST /html/"]
    assert forms == [{"q": "rust async runtime", "b": "", "kl": "wt-wt"}]
    headers = served.headers[0]
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["Referer"] == "https://html.duckduckgo.com/"
    assert headers["User-Agent"].startswith("Mozilla/5.0")


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({"freshness": "pd"}, {"df": "d"}),
        ({"freshness": "pw"}, {"df": "w"}),
        ({"freshness": "pm"}, {"df": "m"}),
        ({"freshness": "py"}, {"df": "y"}),
        ({"safesearch": "strict"}, {"kp": "1"}),
        ({"safesearch": "moderate"}, {"kp": "-1"}),
        ({"safesearch": "off"}, {"kp": "-2"}),
        ({"country": "us", "search_lang": "en"}, {"kl": "us-en"}),
        ({"country": "GB"}, {"kl": "uk-en"}),
        ({"country": "de", "search_lang": "de-AT"}, {"kl": "de-de"}),
        ({"country": "not a country"}, {}),
        ({"include_domains": ["tokio.rs"], "exclude_domains": ["docs.rs"]},
         {"q": "q site:tokio.rs -site:docs.rs"}),
    ],
)
async def test_argument_mapping(
    internet: FakeInternet, serve: Serve, arguments: dict[str, Any], fields: dict[str, str]
) -> None:
    _, forms = await start(serve, text=NO_RESULTS)
    await WebSearch(provider(internet)).call({"query": "q", **arguments})
    assert forms == [{"q": "q", "b": "", "kl": "wt-wt", **fields}]


async def test_count_and_domain_filters(internet: FakeInternet, serve: Serve) -> None:
    await start(serve)
    search = WebSearch(provider(internet))
    two = json.loads(await search.call({"query": "q", "count": 2}))["results"]
    assert [r["url"] for r in two] == [EXPECTED_ROWS[0]["url"], EXPECTED_ROWS[1]["url"]]
    only = json.loads(await search.call({"query": "q", "include_domains": ["docs.rs"]}))
    assert [r["site_name"] for r in only["results"]] == ["docs.rs"]
    rest = json.loads(await search.call({"query": "q", "exclude_domains": ["tokio.rs"]}))
    assert [r["site_name"] for r in rest["results"]] == ["docs.rs", "async.rs"]


async def test_no_results(internet: FakeInternet, serve: Serve) -> None:
    await start(serve, text=NO_RESULTS)
    assert await WebSearch(provider(internet)).call({"query": "q"}) == '{"query":"q","results":[]}'


@pytest.mark.parametrize(("status", "text"), [(202, CHALLENGE), (200, CHALLENGE), (403, ""),
                                              (429, "")])
async def test_the_challenge_page_is_a_rate_limit(
    internet: FakeInternet, serve: Serve, status: int, text: str
) -> None:
    served, _ = await start(serve, status, text)
    search = WebSearch(provider(internet))
    for query in ("first", "second"):
        with pytest.raises(ToolError) as caught:
            await search.call({"query": query})
        assert caught.value.kind is ToolErrorKind.Transport
        assert str(caught.value) == f"web_search: {RATE_LIMITED}"
    # During the cool-down the second search never reached DuckDuckGo.
    assert len(served.request_lines) == 1


async def test_the_cool_down_ends(internet: FakeInternet, serve: Serve) -> None:
    served, _ = await start(serve, 202, CHALLENGE)
    search = WebSearch(provider(internet, cooldown=0.0))
    for query in ("first", "second"):
        with pytest.raises(ToolError):
            await search.call({"query": query})
    assert len(served.request_lines) == 2


async def test_a_server_error_is_retried_then_reported(
    internet: FakeInternet, serve: Serve
) -> None:
    served, _ = await start(serve, 500, "<html><body>oops</body></html>")
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider(internet)).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Backend,
        "web_search: backend returned 500: (an HTML error page)",
    )
    assert len(served.request_lines) == 2


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not html at all",
        "<div class='result'><a class='result__a'>no href</a>",
        "<div class=result><a class=result__a href='javascript:alert(1)'>x</a></div>",
        "<div class=result><h2><a class=result__a href='/l/?rut=1'>no target</a></h2></div>",
        "<div class=result><a class=result__a href='//duckduckgo.com/settings'>internal</a></div>",
        "<<<>>><div class=\"result\"><a class=\"result__a\" href=\"https://ok.example/\">ok<b>",
        "\x00\xff" * 100,
    ],
)
async def test_malformed_html_is_parsed_defensively(
    internet: FakeInternet, serve: Serve, text: str
) -> None:
    await start(serve, text=text)
    result = json.loads(await WebSearch(provider(internet)).call({"query": "q"}))
    assert all(row["url"].startswith("https://ok.example") for row in result["results"])


async def test_parsing_is_bounded_to_one_mebibyte(internet: FakeInternet, serve: Serve) -> None:
    huge = PAGE.replace("</body>", "<p>" + "x" * 2_000_000 + "</p></body>")
    await start(serve, text=huge)
    result = json.loads(await WebSearch(provider(internet)).call({"query": "q"}))
    assert result["results"] == EXPECTED_ROWS


async def test_a_page_nested_a_megabyte_deep_is_parsed_in_bounded_time(
    internet: FakeInternet, serve: Serve
) -> None:
    # 200,000 nested <div>s would take the tree builder minutes on the event loop; the parser
    # sees the page only up to its 4,097th start tag, so the results at the top still come back.
    deep = PAGE.replace("</body>", "<div>" * 200_000 + "</body>")
    await start(serve, text=deep)
    result = json.loads(await WebSearch(provider(internet)).call({"query": "q"}))
    assert result["results"] == EXPECTED_ROWS


def test_the_page_is_cut_before_its_4097th_start_tag() -> None:
    from runvil.web._search.providers.duckduckgo import MAX_START_TAGS, _first_start_tags

    assert MAX_START_TAGS == 4096
    text = "x<br>" + "<p>a</p>" * 5000
    cut = _first_start_tags(text)
    assert cut == "x<br>" + "<p>a</p>" * 4095
    assert _first_start_tags("<p>a</p>" * 4096) == "<p>a</p>" * 4096
    assert _first_start_tags("a < b, </p> <3") == "a < b, </p> <3"


async def test_requests_are_made_one_at_a_time_and_spaced(
    internet: FakeInternet, serve: Serve
) -> None:
    times: list[float] = []
    in_flight = 0
    most = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        times.append(time.monotonic())
        await asyncio.sleep(0.05)
        in_flight -= 1
        return web.Response(text=NO_RESULTS, content_type="text/html")

    await serve(HOST, handler)
    search = WebSearch(provider(internet, min_interval=0.2))
    await asyncio.gather(*(search.call({"query": f"q{i}"}) for i in range(3)))
    assert most == 1
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(times))


@pytest.mark.parametrize(
    ("href", "target"),
    [
        ("//duckduckgo.com/l/?uddg=https%3A%2F%2Ftokio.rs%2F&rut=1", "https://tokio.rs/"),
        ("/l/?uddg=https%3A%2F%2Fa.example%2Fp%3Fq%3D1%26r%3D2&rut=1", "https://a.example/p?q=1&r=2"),
        ("https://duckduckgo.com/l/?uddg=http%3A%2F%2Fplain.example%2F", "http://plain.example/"),
        ("https://example.org/direct", "https://example.org/direct"),
        ("https://duckduckgo.com/y.js?ad_domain=x&u3=https%3A%2F%2Fad.example", None),
        ("/l/?uddg=javascript%3Aalert(1)", None),
        ("mailto:a@b.example", None),
        ("", None),
        ("https://evil.example/l/?uddg=https%3A%2F%2Fother.example", "https://evil.example/l/?uddg=https%3A%2F%2Fother.example"),
    ],
)
def test_unwrap(href: str, target: str | None) -> None:
    assert unwrap(href) == target
