"""Argument parsing and bounds: every rule, its exact message, its order, and no provider call
for a refused call."""

from __future__ import annotations

from typing import Any

import pytest

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import SearchRequest, WebSearch
from runvil.web._search.arguments import ArgumentShapeError
from tests.web.search.fakes import one_result

INVALID = "web_search: invalid arguments"


async def refused(arguments: Any) -> ToolError:
    provider = one_result()
    search = WebSearch(provider)
    with pytest.raises(ToolError) as caught:
        await search.call(arguments)
    assert provider.requests == [], "a refused call must never reach the provider"
    assert caught.value.kind is ToolErrorKind.InvalidArguments
    return caught.value


async def accepted(arguments: Any) -> SearchRequest:
    provider = one_result()
    await WebSearch(provider).call(arguments)
    assert len(provider.requests) == 1
    return provider.requests[0]


@pytest.mark.parametrize(
    "arguments",
    [
        {},  # missing query
        {"query": None},  # null means absent, and query is required
        {"query": "rust", "unknown": 1},
        {"query": "rust", "max_results": 5},
        {"query": 5},
        {"query": ["rust"]},
        {"query": "rust", "count": True},  # a boolean is not an integer
        {"query": "rust", "count": False},
        {"query": "rust", "count": -1},  # negative: the parse message, not the range one
        {"query": "rust", "count": 2.5},  # fractional
        {"query": "rust", "count": 5.0},  # a float is not a JSON integer
        {"query": "rust", "count": "5"},  # string
        {"query": "rust", "freshness": "week"},
        {"query": "rust", "freshness": "PD"},  # exact lowercase values only
        {"query": "rust", "freshness": 1},
        {"query": "rust", "safesearch": "on"},
        {"query": "rust", "safesearch": "Strict"},
        {"query": "rust", "country": 1},
        {"query": "rust", "search_lang": ["en"]},
        {"query": "rust", "include_domains": {}},  # Lua's bare {} is an object, not a list
        {"query": "rust", "include_domains": "example.com"},
        {"query": "rust", "exclude_domains": [1]},
        {"query": "rust", "exclude_domains": ["a.com", None]},
        {"query": "caf\udce9"},  # an unpaired surrogate is not Unicode text
        {"query": "rust", "country": "\ud800"},
        {"query": "rust", "search_lang": "en\udfff"},
        {"query": "rust", "include_domains": ["a\ud800.com"]},
        {"query": "rust", "exclude_domains": ["ok.com", "\udc00"]},
        '{"query": "caf\\udce9"}',  # the same, arriving as JSON text
        [],  # not an object
        "not json",
        "[1, 2]",
        None,
    ],
)
async def test_shape_mistakes_are_invalid_arguments(arguments: Any) -> None:
    error = await refused(arguments)
    assert str(error) == INVALID


async def test_invalid_arguments_keeps_the_parse_failure_only_as_cause() -> None:
    error = await refused({"query": "rust", "count": "five"})
    assert str(error) == INVALID
    assert isinstance(error.__cause__, ArgumentShapeError)
    assert "count" in str(error.__cause__)
    assert "count" not in str(error)


async def test_parse_comes_before_bounds() -> None:
    # count 30 breaks a bound, but the unknown key fails parsing first.
    error = await refused({"query": "", "count": 30, "extra": True})
    assert str(error) == INVALID


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "web_search: query must not be empty"),
        ({"query": "   \t\n "}, "web_search: query must not be empty"),
        ({"query": "\u3000"}, "web_search: query must not be empty"),  # ideographic space
        ({"query": "x" * 401}, "web_search: query exceeds 400 characters"),
        ({"query": "é" * 401}, "web_search: query exceeds 400 characters"),
        ({"query": " " + "x" * 399 + " "}, "web_search: query exceeds 400 characters"),
        ({"query": "rust", "count": 0}, "web_search: count must be between 1 and 20"),
        ({"query": "rust", "count": 21}, "web_search: count must be between 1 and 20"),
        ({"query": "rust async", "count": 30}, "web_search: count must be between 1 and 20"),
        ({"query": "rust", "count": 10**30}, "web_search: count must be between 1 and 20"),
        ({"query": "rust", "country": ""}, "web_search: country must be 1..=128 characters"),
        ({"query": "rust", "country": "  "}, "web_search: country must be 1..=128 characters"),
        ({"query": "rust", "country": "u" * 129}, "web_search: country must be 1..=128 characters"),
        ({"query": "q", "search_lang": ""}, "web_search: search_lang must be 1..=128 characters"),
        (
            {"query": "rust", "search_lang": "e" * 129},
            "web_search: search_lang must be 1..=128 characters",
        ),
        (
            {"query": "rust", "include_domains": [f"d{i}.com" for i in range(21)]},
            "web_search: include_domains may list at most 20 hostnames",
        ),
        (
            {"query": "rust", "exclude_domains": [f"d{i}.com" for i in range(21)]},
            "web_search: exclude_domains may list at most 20 hostnames",
        ),
    ],
)
async def test_bounds_messages(arguments: dict[str, Any], message: str) -> None:
    error = await refused(arguments)
    assert str(error) == message


@pytest.mark.parametrize(
    "entry",
    [
        "",
        "   ",
        "https://example.com",
        "example.com/path",
        "exa mple.com",
        "example.com\n",
        "exam\tple.com",
        "example\x00.com",
        "example\x7f.com",
        "example\u0085.com",  # C1 control (and whitespace)
        "example\u00a0.com",  # no-break space is whitespace
        "a" * 129,
    ],
)
@pytest.mark.parametrize("field", ["include_domains", "exclude_domains"])
async def test_invalid_hostnames(field: str, entry: str) -> None:
    error = await refused({"query": "rust", field: ["example.com", entry]})
    assert str(error) == f"web_search: {field} contains an invalid hostname"


async def test_bounds_report_only_the_first_failure_in_order() -> None:
    everything = {
        "query": "x" * 401,
        "count": 0,
        "country": "",
        "search_lang": "",
        "include_domains": ["a/b"] * 21,
        "exclude_domains": ["a/b"] * 21,
    }
    order = [
        ("query", " ", "web_search: query must not be empty"),
        ("query", "x" * 401, "web_search: query exceeds 400 characters"),
        ("query", "ok", "web_search: count must be between 1 and 20"),
        ("count", 5, "web_search: country must be 1..=128 characters"),
        ("country", "us", "web_search: search_lang must be 1..=128 characters"),
        ("search_lang", "en", "web_search: include_domains may list at most 20 hostnames"),
        ("include_domains", ["a/b"], "web_search: include_domains contains an invalid hostname"),
        ("include_domains", ["o.io"], "web_search: exclude_domains may list at most 20 hostnames"),
        ("exclude_domains", ["a/b"], "web_search: exclude_domains contains an invalid hostname"),
    ]
    for key, value, message in order:
        everything[key] = value
        assert str(await refused(everything)) == message
    everything["exclude_domains"] = ["ok.com"]
    await accepted(everything)


async def test_list_size_is_checked_before_its_entries() -> None:
    error = await refused({"query": "rust", "include_domains": ["bad/one"] * 21})
    assert str(error) == "web_search: include_domains may list at most 20 hostnames"


async def test_limits_are_inclusive_and_count_characters() -> None:
    request = await accepted(
        {
            "query": "é" * 400,
            "count": 20,
            "country": "c" * 128,
            "search_lang": "ü" * 128,
            "include_domains": ["bücher.de"] + [f"d{i}.com" for i in range(19)],
            "exclude_domains": ["a" * 128],
        }
    )
    assert request.count == 20
    assert len(request.include_domains) == 20
    assert (await accepted({"query": "rust", "count": 1})).count == 1


async def test_query_reaches_the_provider_exactly_as_written() -> None:
    request = await accepted({"query": "  rust async runtime  "})
    assert request.query == "  rust async runtime  "


async def test_nulls_are_absent_and_absent_lists_are_empty() -> None:
    request = await accepted(
        {
            "query": "rust",
            "count": None,
            "freshness": None,
            "country": None,
            "search_lang": None,
            "safesearch": None,
            "include_domains": None,
            "exclude_domains": None,
        }
    )
    assert request == SearchRequest(query="rust")
    assert request.include_domains == () and request.exclude_domains == ()
    assert request.count is None


async def test_empty_lists_are_valid() -> None:
    request = await accepted({"query": "rust", "include_domains": [], "exclude_domains": []})
    assert request == SearchRequest(query="rust")


async def test_combined_arguments_reach_the_provider_unchanged() -> None:
    request = await accepted(
        '{"query": "rust async runtime", "count": 5, "freshness": "pw", '
        '"safesearch": "strict", "include_domains": ["example.com"]}'
    )
    assert request == SearchRequest(
        query="rust async runtime",
        count=5,
        freshness="pw",
        safesearch="strict",
        include_domains=("example.com",),
    )


async def test_country_and_search_lang_reach_the_provider_unchanged() -> None:
    request = await accepted(
        {"query": "rust async runtime", "count": 5, "country": "us", "search_lang": "en"}
    )
    assert (request.country, request.search_lang, request.count) == ("us", "en", 5)
    # Only blankness and length are checked: any code passes and is passed on as written.
    request = await accepted({"query": "rust", "country": "Not A Country", "search_lang": "xx"})
    assert (request.country, request.search_lang) == ("Not A Country", "xx")


@pytest.mark.parametrize("value", ["pd", "pw", "pm", "py"])
async def test_every_freshness_value(value: str) -> None:
    assert (await accepted({"query": "rust", "freshness": value})).freshness == value


@pytest.mark.parametrize("value", ["off", "moderate", "strict"])
async def test_every_safesearch_value(value: str) -> None:
    assert (await accepted({"query": "rust", "safesearch": value})).safesearch == value
