"""Which rows a model is shown: web urls only, and none the operator's domain lists refuse."""

from __future__ import annotations

import pytest
from aiohttp import web

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import FetchPolicy, SearchResult, WebSearch
from runvil.web._pack import build_web_tools
from runvil.web._search.providers import GatewayProvider
from tests.fixtures.internet import FakeInternet
from tests.web.search.conftest import Serve
from tests.web.search.fakes import FakeProvider


def rows(*urls: str) -> FakeProvider:
    return FakeProvider(
        results=[SearchResult(title=f"r{i}", url=u, description="") for i, u in enumerate(urls)]
    )


def shown(*urls: str) -> str:
    """The output for ``urls`` shown in this order (titles as :func:`rows` numbered them)."""
    return '{"query":"q","results":[' + ",".join(urls) + "]}"


def row(index: int, url: str) -> str:
    return f'{{"title":"r{index}","url":"{url}","description":""}}'


NOT_WEB = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "mailto:someone@example.com",
    "ftp://example.com/",
    "/relative/path",
    "//example.com/no-scheme",
    "not a url",
    "https://",
    "about:blank",
]


async def test_a_row_whose_url_is_not_a_web_address_is_not_shown() -> None:
    provider = rows("https://a.example/", *NOT_WEB, "http://b.example/x?q=1", "HTTPS://C.example")
    text = await WebSearch(provider).call({"query": "q"})
    last = len(NOT_WEB) + 1
    assert text == shown(
        row(0, "https://a.example/"),
        row(last, "http://b.example/x?q=1"),
        row(last + 1, "HTTPS://C.example"),
    )


async def test_only_non_web_rows_give_an_empty_list() -> None:
    text = await WebSearch(rows("javascript:alert(1)", "file:///etc/passwd")).call({"query": "q"})
    assert text == '{"query":"q","results":[]}'


async def test_the_empty_url_check_still_names_the_providers_index() -> None:
    with pytest.raises(ToolError) as caught:
        await WebSearch(rows("javascript:x", "data:,x", "  ")).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Backend,
        "web_search: malformed search response: result 2 has an empty url",
    )


async def test_a_url_that_is_not_valid_unicode_is_still_unrenderable() -> None:
    with pytest.raises(ToolError) as caught:
        await WebSearch(rows("https://a.example/\ud800")).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Other,
        "web_search: the results could not be rendered",
    )


URLS = (
    "https://example.com/",
    "https://ads.example.com/banner",
    "https://x.Ads.Example.com./t",
    "https://ads.example.com../t",
    "https://a..ads.example.com/t",
    "https://badexample.com/",
    "https://docs.example.org/",
    "https://1.2.3.4/",
    "https://www.xn--bcher-kva.example/",
)


async def test_blocked_domains_are_not_suggested() -> None:
    search = WebSearch(rows(*URLS), blocked_domains=("ads.example.com", "Bücher.example"))
    assert await search.call({"query": "q"}) == shown(
        row(0, URLS[0]), row(5, URLS[5]), row(6, URLS[6]), row(7, URLS[7])
    )


async def test_allowed_domains_keep_only_their_own_sites() -> None:
    search = WebSearch(
        rows(*URLS), allowed_domains=("example.com",), blocked_domains=("ads.example.com",)
    )
    assert await search.call({"query": "q"}) == shown(row(0, URLS[0]))


async def test_without_lists_every_web_row_is_shown_as_given() -> None:
    assert await WebSearch(rows(*URLS)).call({"query": "q"}) == shown(
        *(row(i, url) for i, url in enumerate(URLS))
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allowed_domains": "example.com"}, "allowed_domains must be a list of host names, "
         "not 'example.com'"),
        ({"blocked_domains": ["1.2.3.4"]}, "blocked_domains entry '1.2.3.4' is an IP address, "
         "not a host name"),
        ({"blocked_domains": [3]}, "blocked_domains entry 3 is not a string"),
        ({"allowed_domains": ["*.example.com"]}, "allowed_domains entry '*.example.com': write "
         "the domain itself (example.com); it covers every subdomain"),
    ],
)
def test_bad_list_entries_are_refused_when_the_tool_is_made(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        WebSearch(FakeProvider(), **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


async def test_the_web_pack_applies_the_fetch_policys_lists_to_search(
    internet: FakeInternet, serve: Serve
) -> None:
    body = (
        '{"results":[{"title":"a","url":"https://tracker.example/p","description":""},'
        '{"title":"b","url":"javascript:alert(1)","description":""},'
        '{"title":"c","url":"https://ok.example/","description":"","site_name":"ok.example"}]}'
    )

    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    await serve("gateway.example", answer)
    provider = GatewayProvider(
        "https://gateway.example/v1/web/search", "k", network=internet.network()
    )
    tools = build_web_tools(
        provider, internet.network(), FetchPolicy(blocked_domains=("tracker.example",))
    )
    assert tools.search is not None
    assert await tools.search.call({"query": "q"}) == (
        '{"query":"q","results":[{"title":"c","url":"https://ok.example/","description":"",'
        '"site_name":"ok.example"}]}'
    )
    await tools.aclose()
