"""Every prompt under examples/ (one per Lua block of seeds 000 and 001) run against the fake
internet, with the result the seeds state."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from runvil import Host, RunError, RunErrorKind, envelope
from runvil.prompts import ModelEndpoint, load_prompt, run_prompt
from tests.fixtures.internet import FakeInternet, Served
from tests.prompts.conftest import (
    DATA,
    NONCE,
    ModelFactory,
    Provider,
    example,
    site_app,
    transport_error,
)
from tests.prompts.fake_models import calls, last_tool_results, text

FETCH_DESCRIPTION = "Fetch a web page and return its main content as markdown."
SEARCH_DESCRIPTION = "Search the web and return a list of results (title, url, description)."
SEARCH_JSON = '{"query":"rust async runtime","results":[{"title":"T","url":"https://e.com","description":"D"}]}'


def wrapped(body: str) -> str:
    return envelope(body, NONCE)


async def run(name: str, host: Host, models: dict[str, ModelEndpoint] | None = None) -> str:
    return await run_prompt(load_prompt(example(name)), host=host, models=models, nonce=NONCE)


async def run_error(name: str, host: Host) -> RunError:
    with pytest.raises(RunError) as caught:
        await run(name, host)
    return caught.value


async def direct(host: Host, args: dict[str, Any]) -> str:
    """What web/fetch itself returns for ``args``, in this test's envelope."""
    return wrapped(await host.call("web/fetch", args, envelope=False))


# -- seed 001: fetching ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["fetch-page", "fetch-page-list-uses", "fetch-undeclared", "pf-fetch-page"]
)
async def test_fetch_page_returns_the_article_under_the_provenance_header(
    name: str, host: Host, site: Served
) -> None:
    result = await run(name, host)
    assert result.startswith(
        f"<untrusted_input_{NONCE}>\nurl: https://example.com/\ntruncated: false\n"
        "extraction: readability\n\n# Example Domain\n\nThis domain is for use"
    )
    assert result.endswith(f"\n</untrusted_input_{NONCE}>")
    assert result == await direct(host, {"url": "https://example.com/"})
    assert site.request_lines[0] == "GET /"


async def test_fetch_page_request_is_anonymous_with_the_policy_user_agent(
    host: Host, site: Served
) -> None:
    await run("fetch-page", host)
    headers = {k.lower(): v for k, v in site.headers[0].items()}
    assert headers["user-agent"] == "harness-webfetch/0.0"
    assert "cookie" not in headers and "authorization" not in headers and "referer" not in headers


async def test_fetch_page_uses_only_the_public_address_of_a_mixed_answer(
    host: Host, internet: FakeInternet, site: Served
) -> None:
    internet.dns["example.com"] = ["93.184.216.34", "127.0.0.1"]
    result = await run("fetch-page", host)
    assert "extraction: readability" in result
    assert internet.dials == [("93.184.216.34", 443)]


async def test_fetch_page_follows_a_redirect_to_next(host: Host, internet: FakeInternet) -> None:
    async def root(request: web.Request) -> web.Response:
        raise web.HTTPFound("https://example.com/next")

    async def nxt(request: web.Request) -> web.Response:
        return web.Response(text=DATA, content_type="application/json")

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/next", nxt)
    served = await internet.serve(app)
    result = await run("fetch-page", host)
    assert result == wrapped(
        f"url: https://example.com/next\ntruncated: false\nextraction: plain\n\n{DATA}"
    )
    assert served.request_lines == ["GET /", "GET /next"]


@pytest.mark.parametrize("name", ["fetch-page-max-chars", "pf-fetch-max-chars"])
async def test_max_chars_cuts_the_article_to_5000_characters(
    name: str, host: Host, site: Served
) -> None:
    result = await run(name, host)
    assert result.startswith(
        f"<untrusted_input_{NONCE}>\nurl: https://example.com/long-article\ntruncated: true\n"
        "extraction: readability\n\n"
    )
    body = result.split("\n\n", 1)[1].rsplit("\n</untrusted_input_", 1)[0]
    assert len(body) == 5000
    assert result == await direct(
        host, {"url": "https://example.com/long-article", "max_chars": 5000}
    )


@pytest.mark.parametrize("name", ["fetch-page-raw", "pf-fetch-raw"])
async def test_raw_renders_the_whole_table_page(name: str, host: Host, site: Served) -> None:
    result = await run(name, host)
    assert result.startswith(
        f"<untrusted_input_{NONCE}>\nurl: https://example.com/prices\ntruncated: false\n"
        "extraction: raw-html\n\n"
    )
    assert "Apple" in result and "Pear" in result
    assert result == await direct(host, {"url": "https://example.com/prices", "raw": True})


@pytest.mark.parametrize("name", ["fetch-data", "pf-fetch-data"])
async def test_json_comes_back_verbatim(name: str, host: Host, site: Served) -> None:
    assert await run(name, host) == wrapped(
        f"url: https://example.com/data.json\ntruncated: false\nextraction: plain\n\n{DATA}"
    )


async def test_fetch_field_decodes_the_body_cut_out_of_the_envelope(
    host: Host, site: Served
) -> None:
    assert await run("fetch-field", host) == "value"


async def test_max_chars_over_the_ceiling_is_lowered_not_refused(host: Host, site: Served) -> None:
    assert await run("fetch-page-max-chars-over", host) == await run("fetch-page", host)


async def test_fetch_short_returns_exactly_25_characters(host: Host, site: Served) -> None:
    result = await run("fetch-short", host)
    full = await run("fetch-page", host)
    full_body = full.split("\n\n", 1)[1].rsplit("\n</untrusted_input_", 1)[0]
    assert result == wrapped(
        f"url: https://example.com/\ntruncated: true\nextraction: readability\n\n{full_body[:25]}"
    )


async def test_a_json_body_over_the_byte_cap_is_refused_whole(
    host: Host, internet: FakeInternet
) -> None:
    await internet.serve(site_app(big_json=True))
    assert await run("fetch-short-over-cap", host) == wrapped(
        "response from https://example.com/data.json exceeds the 8388608-byte size cap"
    )


async def test_a_slow_page_times_out_as_soft_text(host: Host, site: Served) -> None:
    assert await run("fetch-short-slow", host) == wrapped(
        "request to https://example.com/slow timed out; try again or use a different URL"
    )


async def test_fetch_path_sends_the_query_and_drops_the_fragment(host: Host, site: Served) -> None:
    result = await run("fetch-path", host)
    assert result.startswith(f"<untrusted_input_{NONCE}>\nurl: https://example.com/path?q=1\n")
    assert site.request_lines == ["GET /path?q=1"]


async def test_http_scheme_is_soft_text(host: Host, site: Served) -> None:
    assert await run("fetch-path-http", host) == wrapped("scheme not allowed: http")
    assert site.request_lines == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("fetch-path-port", "port not allowed: 8080"),
        ("fetch-path-ip-literal", "ip literal host not allowed: 1.2.3.4"),
        ("fetch-missing-userinfo", "url must not contain userinfo"),
        ("pf-fetch-userinfo-uncaught", "url must not contain userinfo"),
    ],
)
async def test_uncaught_hard_failures_end_the_run_with_kind_tool(
    name: str, message: str, host: Host, site: Served
) -> None:
    err = await run_error(name, host)
    assert err.kind is RunErrorKind.Tool
    assert str(err) == f"tool call failure: {message}"
    assert site.request_lines == []


async def test_a_host_with_only_blocked_addresses_fails_the_call(
    host: Host, internet: FakeInternet
) -> None:
    internet.dns["internal.example"] = ["10.0.0.5", "127.0.0.1"]
    err = await run_error("fetch-page-internal", host)
    assert (err.kind, str(err)) == (
        RunErrorKind.Tool,
        "tool call failure: host internal.example has no allowed address",
    )


async def test_a_refused_redirect_is_soft_text(host: Host, site: Served) -> None:
    assert await run("fetch-page-redirect-refused", host) == wrapped(
        "redirect from https://example.com/start to https://example.com:8080/next refused: "
        "port not allowed: 8080"
    )


async def test_a_404_is_soft_text(host: Host, site: Served) -> None:
    assert await run("fetch-missing", host) == wrapped(
        "https://example.com/missing answered HTTP 404; try a different URL"
    )


async def test_catching_a_hard_failure_reads_the_bare_message(host: Host, site: Served) -> None:
    assert await run("fetch-page-catch", host) == "refused: url must not contain userinfo"


async def test_promptforge_catch_reads_the_prefixed_message(host: Host, site: Served) -> None:
    assert await run("pf-fetch-userinfo", host) == "the page address carried credentials"


async def test_tool_object_fields(host: Host) -> None:
    assert await run("fetch-page-tool-object", host) == f"web/fetch | {FETCH_DESCRIPTION}"


async def test_promptforge_alias_global_holds_the_tool_object(host: Host) -> None:
    assert await run("pf-page-tool", host) == FETCH_DESCRIPTION


# -- searching ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["search-web", "pf-search-once"])
async def test_search_returns_compact_json_in_the_envelope(
    name: str, host: Host, provider: Provider
) -> None:
    assert await run(name, host) == wrapped(SEARCH_JSON)
    assert provider.requests[0].query == "rust async runtime"
    assert provider.requests[0].count is None


@pytest.mark.parametrize("name", ["search-web-options", "pf-search-options"])
async def test_search_options_reach_the_provider(name: str, host: Host, provider: Provider) -> None:
    assert await run(name, host) == wrapped(SEARCH_JSON)
    request = provider.requests[0]
    assert (request.count, request.freshness, request.safesearch) == (5, "pw", "strict")


async def test_country_and_search_lang_reach_the_provider_unchanged(
    host: Host, provider: Provider
) -> None:
    assert await run("search-web-region", host) == wrapped(SEARCH_JSON)
    request = provider.requests[0]
    assert (request.count, request.country, request.search_lang) == (5, "us", "en")


async def test_an_out_of_range_count_is_caught_and_never_searched(
    host: Host, provider: Provider
) -> None:
    assert await run("search-web-count-refused", host) == (
        "refused: web_search: count must be between 1 and 20"
    )
    assert provider.requests == []


async def test_search_results_decode_from_lua(host: Host, provider: Provider) -> None:
    assert await run("search-web-decode", host) == "https://e.com"
    assert provider.requests[0].include_domains == ()


async def test_a_failing_search_provider_is_caught(host: Host, provider: Provider) -> None:
    provider.error = transport_error()
    assert await run("pf-search-unavailable", host) == "search is unavailable right now"


async def test_a_failing_search_provider_uncaught_ends_the_run(
    host: Host, provider: Provider
) -> None:
    provider.error = transport_error()
    err = await run_error("pf-search-once", host)
    assert (err.kind, str(err)) == (
        RunErrorKind.Tool,
        "tool call failure: web_search: request failed",
    )


# -- requirements ---------------------------------------------------------------------------


async def test_missing_pack_is_refused_before_anything_runs(internet: FakeInternet) -> None:
    async with Host(plugins=(), search_provider=Provider(), network=internet.network()) as bare:
        err = await run_error("fetch-page", bare)
    assert err.kind is RunErrorKind.RequirementsUnmet
    assert str(err) == "the environment cannot satisfy this prompt:\n- missing required Pack: web"


async def test_unavailable_pack_names_the_missing_search_provider(internet: FakeInternet) -> None:
    async with Host(search_provider=None, network=internet.network()) as no_search:
        err = await run_error("fetch-page", no_search)
        assert (err.kind, str(err)) == (
            RunErrorKind.RequirementsUnmet,
            "the environment cannot satisfy this prompt:\n"
            "- web is unavailable: web needs runvil/search-provider, and this host provides none",
        )
        pf_err = await run_error("pf-fetch-page", no_search)
        assert str(pf_err) == (
            "the environment cannot satisfy this prompt:\n"
            "- promptforge/web needs promptforge/search-provider, and this host provides none"
        )
        offer_err = await run_error("packs-offer-web", no_search)
    assert (offer_err.kind, str(offer_err)) == (
        RunErrorKind.Lua,
        "packs.offer: the web Pack is unavailable in this run: "
        "web needs runvil/search-provider, and this host provides none",
    )


async def test_missing_plugin_is_refused(internet: FakeInternet) -> None:
    async with Host(
        plugins=("runvil/web",), search_provider=Provider(), network=internet.network()
    ) as h:
        err = await run_error("pf-fetch-page", h)
    assert (
        str(err)
        == "the environment cannot satisfy this prompt:\n- missing required Plugin: promptforge/web"
    )


async def test_packs_offer_succeeds_on_a_full_host(host: Host) -> None:
    assert await run("packs-offer-web", host) == "offered"


# -- model loops ----------------------------------------------------------------------------------


def endpoint(model: Any) -> ModelEndpoint:
    return ModelEndpoint(
        api=model.api, base_url=model.base_url, model="test-model", api_key="sk-test"
    )


@pytest.mark.parametrize("api", ["openai", "anthropic"])
async def test_summarize_page_model_fetches_and_answers(
    api: str, host: Host, site: Served, fake_model: ModelFactory
) -> None:
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        seen.extend(last_tool_results(body, api))
        return text("Example Domain is a page for illustrative examples.")

    model = await fake_model(api, [calls(("web_fetch", {"url": "https://example.com/"})), answer])
    result = await run("summarize-page", host, {"researcher": endpoint(model)})
    assert result == "Example Domain is a page for illustrative examples."
    assert seen == [await direct(host, {"url": "https://example.com/"})]
    first = model.requests[0]
    schema = host.tools["web/fetch"].schema_dict()
    if api == "openai":
        assert first["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "web_fetch",
                    "description": FETCH_DESCRIPTION,
                    "parameters": schema,
                },
            }
        ]
        assert first["messages"] == [
            {
                "role": "user",
                "content": "Use `web_fetch` to read `https://example.com/` "
                "and summarize the page in three sentences.",
            }
        ]
        assert model.headers[0]["Authorization"] == "Bearer sk-test"
    else:
        assert first["tools"] == [
            {"name": "web_fetch", "description": FETCH_DESCRIPTION, "input_schema": schema}
        ]
        assert model.headers[0]["x-api-key"] == "sk-test"
        assert first["max_tokens"] == 4096


@pytest.mark.parametrize(
    ("name", "api"), [("research", "anthropic"), ("research-person", "openai")]
)
async def test_research_offers_search_then_fetch_and_loops(
    name: str, api: str, host: Host, site: Served, fake_model: ModelFactory, provider: Provider
) -> None:
    model = await fake_model(
        api,
        [
            calls(("web_search", {"query": "Ada Lovelace"})),
            calls(
                ("web_fetch", {"url": "https://example.com/"}),
                ("web_fetch", {"url": "https://user:pass@example.com/"}),
            ),
            lambda body: text(
                "Ada Lovelace wrote the first published program. "
                + str(len(last_tool_results(body, api)))
            ),
        ],
    )
    result = await run(name, host, {"researcher": endpoint(model)})
    assert result == "Ada Lovelace wrote the first published program. 2"
    names = [
        t["function"]["name"] if api == "openai" else t["name"] for t in model.requests[0]["tools"]
    ]
    assert names == ["web_search", "web_fetch"]
    assert provider.requests[0].query == "Ada Lovelace"
    second = last_tool_results(model.requests[1], api)
    assert second == [
        wrapped(
            '{"query":"Ada Lovelace","results":[{"title":"T","url":"https://e.com","description":"D"}]}'
        )
    ]
    third = last_tool_results(model.requests[2], api)
    assert third == [
        await direct(host, {"url": "https://example.com/"}),
        wrapped("url must not contain userinfo"),
    ]


@pytest.mark.parametrize(
    ("name", "aliases"), [("pf-page-summary", ["fetch"]), ("pf-research", ["search", "fetch"])]
)
async def test_promptforge_loop_advertises_aliases(
    name: str, aliases: list[str], host: Host, site: Served, fake_model: ModelFactory
) -> None:
    model = await fake_model(
        "openai",
        [calls(("fetch", {"url": "https://example.com/"})), text("three sentences")],
    )
    result = await run(name, host, {"writer": endpoint(model)})
    assert result == "three sentences"
    tools = model.requests[0]["tools"]
    assert [t["function"]["name"] for t in tools] == aliases
    fetch_spec = tools[-1]["function"]
    assert fetch_spec["description"] == FETCH_DESCRIPTION
    assert fetch_spec["parameters"]["required"] == ["url"]
    assert last_tool_results(model.requests[1], "openai") == [
        await direct(host, {"url": "https://example.com/"})
    ]
    assert json.loads(
        model.requests[1]["messages"][1]["tool_calls"][0]["function"]["arguments"]
    ) == {"url": "https://example.com/"}


async def test_fetch_field_on_a_soft_failure_raises_the_seed_decode_error(
    host: Host, internet: FakeInternet
) -> None:
    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="gone")

    app = web.Application()
    app.router.add_get("/data.json", missing)
    await internet.serve(app)
    err = await run_error("fetch-field", host)
    assert (err.kind, str(err)) == (RunErrorKind.Lua, "json.decode expects a string, got nil")


async def test_decoded_strings_are_the_envelopes_escaped_copy(
    host: Host, internet: FakeInternet
) -> None:
    async def data(request: web.Request) -> web.Response:
        return web.Response(text='{"key":"<b>hi</b>"}', content_type="application/json")

    app = web.Application()
    app.router.add_get("/data.json", data)
    await internet.serve(app)
    assert await run("fetch-field", host) == "&lt;b>hi&lt;/b>"


EXERCISED = {
    "fetch-page",
    "fetch-page-list-uses",
    "fetch-undeclared",
    "pf-fetch-page",
    "fetch-page-max-chars",
    "pf-fetch-max-chars",
    "fetch-page-raw",
    "pf-fetch-raw",
    "fetch-data",
    "pf-fetch-data",
    "fetch-field",
    "fetch-page-max-chars-over",
    "fetch-short",
    "fetch-short-over-cap",
    "fetch-short-slow",
    "fetch-path",
    "fetch-path-http",
    "fetch-path-port",
    "fetch-path-ip-literal",
    "fetch-missing-userinfo",
    "pf-fetch-userinfo-uncaught",
    "fetch-page-internal",
    "fetch-page-redirect-refused",
    "fetch-missing",
    "fetch-page-catch",
    "pf-fetch-userinfo",
    "fetch-page-tool-object",
    "pf-page-tool",
    "search-web",
    "pf-search-once",
    "search-web-options",
    "pf-search-options",
    "search-web-region",
    "search-web-count-refused",
    "search-web-decode",
    "pf-search-unavailable",
    "packs-offer-web",
    "summarize-page",
    "research",
    "research-person",
    "pf-page-summary",
    "pf-research",
}


def test_every_example_file_is_run_by_these_tests() -> None:
    on_disk = {path.stem for path in example("x").parent.glob("*.md")}
    assert on_disk == EXERCISED
