"""The fetch tool's arguments and catalog entry: schema, checks, order, nulls, clamping."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil import ToolError, ToolErrorKind
from runvil._tools import Tool
from runvil.web import DnsError, FetchPolicy, Network, WebFetch
from runvil.web._fetch.arguments import parse_arguments
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import FetchFactory, SiteFactory, expect_page

MISSING_URL = "web_fetch: missing url argument"
BAD_MAX_CHARS = "web_fetch: max_chars must be a positive integer"
BAD_RAW = "web_fetch: raw must be a boolean"
URL_TOO_LONG = "web_fetch: url is longer than 8192 characters"
MAX_CHARS_DESCRIPTION = (
    "Maximum number of characters of text to return for this call. Clamped to the configured "
    "ceiling. Longer text is truncated on a character boundary and the result is flagged as "
    "truncated."
)


async def hard(fetch: WebFetch, arguments: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await fetch.call(arguments)
    return caught.value


def test_catalog_entry_is_the_specified_one() -> None:
    tool = WebFetch().tool
    assert isinstance(tool, Tool)
    assert tool.id == "web/fetch"
    assert tool.wire_name == "web_fetch"
    assert tool.description == "Fetch a web page and return its main content as markdown."
    assert tool.untrusted is True
    schema = tool.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ["url"]
    assert list(schema["properties"]) == ["url", "max_chars", "raw"]
    assert schema["properties"]["url"] == {"type": "string", "description": "The URL to fetch."}
    assert schema["properties"]["max_chars"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 40_000,
        "description": MAX_CHARS_DESCRIPTION,
    }
    assert schema["properties"]["raw"]["type"] == "boolean"
    assert schema["properties"]["raw"]["description"]


def test_schema_publishes_the_policy_ceiling() -> None:
    tool = WebFetch(policy=FetchPolicy(max_chars=500)).tool
    assert tool.parameters["properties"]["max_chars"]["maximum"] == 500


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"url": None},
        {"url": 5},
        {"url": ["https://example.com/"]},
        {"url": {"href": "https://example.com/"}},
        {"url": True},
        {"href": "https://example.com/"},
        None,
        "https://example.com/",
        ["https://example.com/"],
    ],
)
async def test_url_must_be_a_string(fetch: WebFetch, arguments: Any) -> None:
    err = await hard(fetch, arguments)
    assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, MISSING_URL)


@pytest.mark.parametrize(
    "value", [0, -1, -40_000, 2.5, 5.0, "5", "", True, False, [5], {"n": 5}, float("nan")]
)
async def test_max_chars_must_be_a_positive_integer(fetch: WebFetch, value: Any) -> None:
    err = await hard(fetch, {"url": "https://example.com/", "max_chars": value})
    assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, BAD_MAX_CHARS)


@pytest.mark.parametrize("value", [0, 1, "true", "false", "", [], {}, 1.0])
async def test_raw_must_be_a_boolean(fetch: WebFetch, value: Any) -> None:
    err = await hard(fetch, {"url": "https://example.com/", "raw": value})
    assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, BAD_RAW)


async def test_checks_run_url_then_max_chars_then_raw_then_the_address(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    assert str(await hard(fetch, {"url": 1, "max_chars": 0, "raw": 1})) == MISSING_URL
    assert str(await hard(fetch, {"url": "not a url", "max_chars": 0, "raw": 1})) == BAD_MAX_CHARS
    assert str(await hard(fetch, {"url": "not a url", "max_chars": 3, "raw": 1})) == BAD_RAW
    assert str(await hard(fetch, {"url": "not a url", "max_chars": 3, "raw": True})) == (
        "invalid url"
    )
    assert internet.lookups == []


async def test_a_url_longer_than_8192_characters_is_refused_before_any_work(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    head = "https://example.com/?q="
    for url in (
        head + "a" * (8193 - len(head)),
        head + "\U0001f600" * (8193 - len(head)),  # counted in characters, not bytes
        "not a url " * 1000,  # refused for its length before the parse could call it invalid
        "data:text/plain," + "a" * 10_000,  # before the scheme rule could call it soft
        "https://example.com/" + "a" * 4_000_000,
    ):
        err = await hard(fetch, {"url": url})
        assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, URL_TOO_LONG)
    assert internet.lookups == []


async def test_a_url_of_8192_characters_goes_on_to_the_address_rules(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    head = "https://no-such-host.example/?q="
    assert await fetch.call({"url": head + "a" * (8192 - len(head))}) == (
        "dns resolution failed for no-such-host.example"
    )
    assert await fetch.call({"url": head + "\U0001f600" * (8192 - len(head))}) == (
        "dns resolution failed for no-such-host.example"
    )


async def test_the_length_check_comes_after_the_three_argument_checks(fetch: WebFetch) -> None:
    long_url = "https://example.com/" + "a" * 10_000
    assert str(await hard(fetch, {"url": long_url, "max_chars": 0})) == BAD_MAX_CHARS
    assert str(await hard(fetch, {"url": long_url, "max_chars": 5, "raw": "yes"})) == BAD_RAW
    assert str(await hard(fetch, {"url": long_url, "max_chars": 5, "raw": True})) == URL_TOO_LONG


def test_null_means_absent_and_max_chars_is_clamped() -> None:
    assert parse_arguments({"url": "u", "max_chars": None, "raw": None}, 40_000) == (
        parse_arguments({"url": "u"}, 40_000)
    )
    request = parse_arguments({"url": "u"}, 40_000)
    assert (request.max_chars, request.raw) == (40_000, False)
    assert parse_arguments({"url": "u", "max_chars": 100_000}, 40_000).max_chars == 40_000
    assert parse_arguments({"url": "u", "max_chars": 10**30}, 40_000).max_chars == 40_000
    assert parse_arguments({"url": "u", "max_chars": 40_000}, 40_000).max_chars == 40_000
    assert parse_arguments({"url": "u", "max_chars": 1}, 40_000).max_chars == 1
    assert parse_arguments({"url": "u", "raw": True}, 40_000).raw is True


async def test_other_keys_are_ignored(fetch: WebFetch, site: SiteFactory) -> None:
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="plain words", content_type="text/plain")

    served = await site({"/": page})
    text = await fetch.call(
        {"url": "https://example.com/", "headers": {"Cookie": "a=b"}, "method": "POST", "x": 1}
    )
    assert text == expect_page("https://example.com/", "plain words")
    assert served.request_lines == ["GET /"]
    assert "Cookie" not in served.headers[0]


# --- Hypothesis: any argument object ends in a specified outcome ----------------------------

SOFT_PREFIXES = ("scheme not allowed: ", "dns resolution failed for ")
HARD_MESSAGES = {
    MISSING_URL,
    BAD_MAX_CHARS,
    BAD_RAW,
    URL_TOO_LONG,
    "invalid url",
    "url must not contain userinfo",
}
HARD_PREFIXES = ("port not allowed: ", "ip literal host not allowed: ")

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
url_texts = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda scheme, user, host, port, tail: f"{scheme}://{user}{host}{port}/{tail}",
        st.sampled_from(["https", "http", "HTTPS", "ftp", "file", "javascript", "h\ttps"]),
        st.sampled_from(["", "user:pass@", "@", ":p@", "u@"]),
        st.sampled_from(
            ["example.com", "0177.0.0.1", "[::1]", "2130706433", "exa mple.com", "xn--", "ä.de"]
        ),
        st.sampled_from(["", ":443", ":80", ":8080", ":0", ":99999", ":"]),
        st.text(max_size=20),
    ),
    st.just("https://example.com/" + "\ud800"),
    st.just("https://example.com/\x00\x01\x7f"),
)
argument_objects = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"url": url_texts | json_values},
        optional={
            "max_chars": json_values | st.integers(),
            "raw": json_values,
            "extra": json_values,
        },
    ),
)


def _specified(outcome: str | ToolError) -> bool:
    if isinstance(outcome, ToolError):
        message = str(outcome)
        return outcome.kind is ToolErrorKind.InvalidArguments and (
            message in HARD_MESSAGES or message.startswith(HARD_PREFIXES)
        )
    return outcome.startswith(SOFT_PREFIXES)


async def _no_dns(host: str) -> list[str]:
    raise DnsError(host)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(arguments=argument_objects)
def test_any_argument_object_ends_in_a_specified_message(arguments: Any) -> None:
    async def run() -> str | ToolError:
        async with WebFetch(network=Network(resolve=_no_dns)) as fetch:
            try:
                return await fetch.call(arguments)
            except ToolError as err:
                return err

    outcome = asyncio.run(run())
    assert _specified(outcome), outcome


def test_a_one_megabyte_url_is_refused_for_its_length() -> None:
    async def run() -> ToolError:
        async with WebFetch(network=Network(resolve=_no_dns)) as fetch:
            with pytest.raises(ToolError) as caught:
                await fetch.call({"url": "https://example.com/" + "a" * 1_000_000})
            return caught.value

    assert str(asyncio.run(run())) == URL_TOO_LONG


async def test_max_chars_argument_cuts_and_clamps(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="0123456789" * 10, content_type="text/plain")

    await site({"/": page})
    fetch = make_fetch(FetchPolicy(max_chars=50))
    assert await fetch.call({"url": "https://example.com/", "max_chars": 100_000}) == expect_page(
        "https://example.com/", "0123456789" * 5, truncated=True
    )
