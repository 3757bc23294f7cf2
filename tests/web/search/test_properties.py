"""Properties over generated inputs: any argument object gets a specified outcome, and quoted
error bodies always stay on one line."""

from __future__ import annotations

import asyncio
import json
import unicodedata
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runvil._errors import ToolError, ToolErrorKind
from runvil.web import WebSearch
from runvil.web._search.providers._common import quote_body
from tests.web.search.fakes import one_result

MESSAGES = {
    "web_search: invalid arguments",
    "web_search: query must not be empty",
    "web_search: query exceeds 400 characters",
    "web_search: count must be between 1 and 20",
    "web_search: country must be 1..=128 characters",
    "web_search: search_lang must be 1..=128 characters",
    "web_search: include_domains may list at most 20 hostnames",
    "web_search: exclude_domains may list at most 20 hostnames",
    "web_search: include_domains contains an invalid hostname",
    "web_search: exclude_domains contains an invalid hostname",
}
KEYS = ["query", "count", "freshness", "country", "search_lang", "safesearch",
        "include_domains", "exclude_domains", "other"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6,
)
interesting = st.one_of(
    json_values,
    st.sampled_from(["pd", "pw", "pm", "py", "off", "moderate", "strict", "us", "en", " ", ""]),
    st.lists(st.sampled_from(["example.com", "a/b", " ", "x" * 129, "ok.org"]), max_size=22),
    st.text(min_size=395, max_size=405),
)
arguments = st.dictionaries(st.sampled_from(KEYS), interesting, max_size=8)


@settings(max_examples=300, deadline=None)
@given(arguments)
def test_every_argument_object_gets_a_specified_outcome(args: dict[str, Any]) -> None:
    provider = one_result()

    async def run() -> str | ToolError:
        try:
            return await WebSearch(provider).call(args)
        except ToolError as err:
            return err

    outcome = asyncio.run(run())
    if isinstance(outcome, ToolError):
        assert outcome.kind is ToolErrorKind.InvalidArguments
        assert str(outcome) in MESSAGES
        assert provider.requests == []
    else:
        assert json.loads(outcome)["query"] == args["query"]
        assert len(provider.requests) == 1


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2600) | st.text(max_size=2100).map(lambda t: t.encode("utf-8")))
def test_a_quoted_body_is_one_line_and_at_most_2000_bytes_of_the_body(body: bytes) -> None:
    quoted = quote_body(body)
    assert not any(unicodedata.category(c) == "Cc" for c in quoted)
    if not body:
        assert quoted == "(empty body)"
        return
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return
    if not any(unicodedata.category(c) == "Cc" for c in text):
        # Valid text without controls: the quote is its prefix of at most 2000 bytes, cut on a
        # character boundary, with no character dropped that would have fitted.
        assert text.startswith(quoted)
        assert len(quoted.encode()) <= 2000
        rest = text[len(quoted):]
        if rest:
            assert len(quoted.encode()) + len(rest[0].encode()) > 2000
