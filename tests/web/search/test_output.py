"""What a successful call returns, how provider failures surface, and the tool's catalog entry."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from runvil._errors import ToolError, ToolErrorKind
from runvil._tools import Tool
from runvil.web import ProviderError, SearchRequest, SearchResult, WebSearch
from tests.web.search.fakes import FakeProvider, one_result


async def test_seed_example_one_match() -> None:
    text = await WebSearch(one_result()).call({"query": "rust async runtime"})
    assert text == (
        '{"query":"rust async runtime","results":'
        '[{"title":"T","url":"https://e.com","description":"D"}]}'
    )


async def test_seed_example_all_six_fields_then_three() -> None:
    provider = FakeProvider(
        results=[
            SearchResult(
                title="Rust",
                url="https://www.rust-lang.org/",
                description="A language.",
                age="2 days ago",
                site_name="www.rust-lang.org",
                extra_snippets=("Fast.", "Safe."),
            ),
            SearchResult(title="", url="https://e.com", description=""),
        ]
    )
    text = await WebSearch(provider).call({"query": "rust"})
    assert text == (
        '{"query":"rust","results":[{"title":"Rust","url":"https://www.rust-lang.org/",'
        '"description":"A language.","age":"2 days ago","site_name":"www.rust-lang.org",'
        '"extra_snippets":["Fast.","Safe."]},{"title":"","url":"https://e.com","description":""}]}'
    )


async def test_seed_example_empty_results() -> None:
    text = await WebSearch(FakeProvider()).call({"query": "rust"})
    assert text == '{"query":"rust","results":[]}'


async def test_empty_optional_fields_are_left_out_and_utf8_is_kept() -> None:
    provider = FakeProvider(
        results=[
            SearchResult(
                title="Ünïcode ✓ \"quoted\"",
                url="https://例え.jp/パス",
                description="",
                age="",
                site_name="",
                extra_snippets=["", "  ", "kept"],
            ),
            SearchResult(title="x", url="https://x.example", description="y", extra_snippets=[]),
        ]
    )
    text = await WebSearch(provider).call({"query": "ünï  "})
    assert text == (
        '{"query":"ünï  ","results":[{"title":"Ünïcode ✓ \\"quoted\\"","url":"https://例え.jp/パス",'
        '"description":"","extra_snippets":["kept"]},'
        '{"title":"x","url":"https://x.example","description":"y"}]}'
    )
    assert json.loads(text)["results"][0]["title"] == 'Ünïcode ✓ "quoted"'


async def test_no_field_beyond_the_six_reaches_the_caller() -> None:
    class Extra(SearchResult):
        pass

    row = Extra(title="t", url="https://a.example", description="d")
    object.__setattr__(row, "score", 0.9)
    text = await WebSearch(FakeProvider(results=[row])).call({"query": "q"})
    assert json.loads(text) == {
        "query": "q",
        "results": [{"title": "t", "url": "https://a.example", "description": "d"}],
    }


async def test_results_keep_provider_order() -> None:
    rows = [SearchResult(str(i), f"https://{i}.example", "d") for i in range(7)]
    text = await WebSearch(FakeProvider(results=rows)).call({"query": "q"})
    assert [r["title"] for r in json.loads(text)["results"]] == [str(i) for i in range(7)]


@pytest.mark.parametrize(
    ("urls", "index"),
    [
        (["", "https://b"], 0),
        (["https://a", "  "], 1),
        (["https://a", "https://b", "\t\n", ""], 2),
    ],
)
async def test_blank_url_rejects_the_whole_response(urls: list[str], index: int) -> None:
    rows = [SearchResult(title="t", url=u, description="d") for u in urls]
    with pytest.raises(ToolError) as caught:
        await WebSearch(FakeProvider(results=rows)).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Backend
    assert str(caught.value) == (
        f"web_search: malformed search response: result {index} has an empty url"
    )


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (ToolErrorKind.Transport, "request failed"),
        (ToolErrorKind.Backend, "backend returned 502: upstream down"),
    ],
)
async def test_provider_errors_keep_their_kind_and_message(
    kind: ToolErrorKind, message: str
) -> None:
    provider = FakeProvider(error=ProviderError(kind, message))
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider).call({"query": "q"})
    assert caught.value.kind is kind
    assert str(caught.value) == f"web_search: {message}"


def test_provider_error_kind_is_transport_or_backend() -> None:
    with pytest.raises(ValueError):
        ProviderError(ToolErrorKind.InvalidArguments, "x")
    error = ProviderError(ToolErrorKind.Backend, "m")
    assert (error.kind, error.message, str(error)) == (ToolErrorKind.Backend, "m", "m")


async def test_a_provider_that_breaks_its_contract_gets_a_clear_error() -> None:
    provider = FakeProvider(error=RuntimeError("boom with detail"))
    with pytest.raises(ToolError) as caught:
        await WebSearch(provider).call({"query": "q"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.Transport,
        "web_search: request failed",
    )


@pytest.mark.parametrize(
    "row",
    [
        SearchResult(title=5, url="https://a", description="d"),  # type: ignore[arg-type]
        SearchResult(title="t", url="https://a", description="bad \ud800 surrogate"),
        SearchResult(title="t", url="https://a", description="d", extra_snippets="abc"),
        SearchResult(title="t", url="https://a", description="d", extra_snippets=[1]),  # type: ignore[list-item]
    ],
)
async def test_unrenderable_rows(row: SearchResult) -> None:
    with pytest.raises(ToolError) as caught:
        await WebSearch(FakeProvider(results=[row])).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Other
    assert str(caught.value) == "web_search: the results could not be rendered"


@pytest.mark.parametrize(
    "results",
    [None, "https://e.com", [{"title": "t", "url": "https://e.com", "description": "d"}], 5],
)
async def test_results_that_are_not_rows(results: Any) -> None:
    with pytest.raises(ToolError) as caught:
        await WebSearch(FakeProvider(results=results)).call({"query": "q"})
    assert caught.value.kind is ToolErrorKind.Other
    assert str(caught.value) == "web_search: the results could not be rendered"


async def test_missing_url_counts_as_empty() -> None:
    row = SearchResult(title="t", url=None, description="d")  # type: ignore[arg-type]
    with pytest.raises(ToolError) as caught:
        await WebSearch(FakeProvider(results=[row])).call({"query": "q"})
    assert str(caught.value) == "web_search: malformed search response: result 0 has an empty url"


def test_tool_catalog_entry() -> None:
    tool = WebSearch(one_result()).tool
    assert isinstance(tool, Tool)
    assert tool.id == "web/search"
    assert tool.wire_name == "web_search"
    assert tool.name == "search"
    assert tool.untrusted is True
    assert tool.description == (
        "Search the web and return a list of results (title, url, description)."
    )
    schema: dict[str, Any] = dict(tool.parameters)
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    assert schema["additionalProperties"] is False
    properties = schema["properties"]
    assert list(properties) == [
        "query",
        "count",
        "freshness",
        "country",
        "search_lang",
        "safesearch",
        "include_domains",
        "exclude_domains",
    ]
    types = {k: v["type"] for k, v in properties.items()}
    assert types == {
        "query": "string",
        "count": "integer",
        "freshness": "string",
        "country": "string",
        "search_lang": "string",
        "safesearch": "string",
        "include_domains": "array",
        "exclude_domains": "array",
    }
    assert properties["query"]["minLength"] == 1 and properties["query"]["maxLength"] == 400
    assert (properties["count"]["minimum"], properties["count"]["maximum"]) == (1, 20)
    assert properties["freshness"]["enum"] == ["pd", "pw", "pm", "py"]
    assert properties["safesearch"]["enum"] == ["off", "moderate", "strict"]
    for name in ("include_domains", "exclude_domains"):
        assert properties[name]["maxItems"] == 20
        assert properties[name]["items"]["type"] == "string"
    for name, spec in properties.items():
        assert spec["description"].strip(), name
        # The description sentence names no argument; the schema carries them all.
        assert name not in tool.description


def test_each_tool_gets_its_own_schema_copy() -> None:
    first, second = WebSearch(one_result()), WebSearch(one_result())
    first.tool.parameters["properties"]["query"]["description"] = "changed"
    assert second.tool.parameters["properties"]["query"]["description"] != "changed"


def test_a_broken_endpoint_declaration_is_refused_up_front() -> None:
    with pytest.raises(ValueError):
        WebSearch(FakeProvider(endpoints=("no-port",)))
    with pytest.raises(ValueError):
        WebSearch(FakeProvider(endpoints=("host:99999",)))
    WebSearch(FakeProvider(endpoints=("[2001:db8::1]:8443", "a.example:443")))
    WebSearch(FakeProvider(endpoints=()))


async def test_library_import_path_from_the_issue() -> None:
    from runvil.web import SearchProvider

    provider = one_result()
    assert isinstance(provider, SearchProvider)
    search = WebSearch(provider)
    text = await search.call({"query": "rust async runtime"})
    assert json.loads(text)["query"] == "rust async runtime"


class _Recording:
    name = "recording"
    endpoints: Sequence[str] = ()

    def __init__(self) -> None:
        self.seen: list[SearchRequest] = []

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        self.seen.append(request)
        return []


async def test_a_plain_class_is_a_provider() -> None:
    provider = _Recording()
    assert await WebSearch(provider).call({"query": "q"}) == '{"query":"q","results":[]}'
    assert provider.seen == [SearchRequest(query="q")]
