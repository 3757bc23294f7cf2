"""``WebFetch.fetch``: the same call as ``call``, read into a typed, frozen ``FetchResult``."""

from __future__ import annotations

import dataclasses
import socket

import pytest
from aiohttp import web

from runvil import ToolError
from runvil.web import FetchPolicy, FetchResult
from runvil.web._fetch.outcome import FetchOutcome
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import FetchFactory, SiteFactory


async def text(request: web.Request) -> web.Response:
    return web.Response(text="0123456789" * 10, content_type="text/plain")


async def missing(request: web.Request) -> web.Response:
    return web.Response(status=404, text="no")


async def test_a_page(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/t": text})
    result = await make_fetch().fetch("https://example.com/t#part")
    assert result == FetchResult(
        ok=True,
        text="0123456789" * 10,
        url="https://example.com/t",
        truncated=False,
        extraction="plain",
        error_kind=None,
        message=None,
        next_start_index=None,
    )


async def test_a_cut_page_and_reading_on(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/t": text})
    plain = await make_fetch().fetch("https://example.com/t", 30)
    assert (plain.text, plain.truncated, plain.next_start_index) == ("0123456789" * 3, True, None)
    fetch = make_fetch(FetchPolicy(continuation=True))
    first = await fetch.fetch("https://example.com/t", 30)
    assert first.next_start_index == 30
    rest = await fetch.fetch("https://example.com/t", 80, start_index=first.next_start_index)
    assert (rest.text, rest.truncated, rest.next_start_index) == ("0123456789" * 7, False, None)


async def test_a_soft_failure(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/gone": missing})
    result = await make_fetch().fetch("https://example.com/gone?k=v")
    assert result == FetchResult(
        ok=False,
        error_kind="Soft",
        message="https://example.com/gone answered HTTP 404; try a different URL",
    )
    assert (result.text, result.url, result.extraction) == ("", None, None)


async def test_hard_failures_are_results_too(make_fetch: FetchFactory) -> None:
    fetch = make_fetch()
    assert await fetch.fetch("https://user:pw@example.com/") == FetchResult(
        ok=False, error_kind="InvalidArguments", message="url must not contain userinfo"
    )
    assert await fetch.fetch("https://example.com/", 0) == FetchResult(
        ok=False,
        error_kind="InvalidArguments",
        message="web_fetch: max_chars must be a positive integer",
    )
    continuing = make_fetch(FetchPolicy(continuation=True))
    assert await continuing.fetch("https://example.com/", start_index=-1) == FetchResult(
        ok=False,
        error_kind="InvalidArguments",
        message="web_fetch: start_index must be a non-negative integer",
    )


async def test_a_scheme_refusal_is_soft(make_fetch: FetchFactory) -> None:
    result = await make_fetch().fetch("http://example.com/")
    assert (result.ok, result.error_kind, result.message) == (
        False, "Soft", "scheme not allowed: http"
    )


async def test_start_index_needs_continuation(make_fetch: FetchFactory) -> None:
    with pytest.raises(ValueError, match=r"start_index needs FetchPolicy\(continuation=True\)"):
        await make_fetch().fetch("https://example.com/", start_index=5)


async def test_fetch_and_call_are_one_call(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/t": text})
    fetch = make_fetch(FetchPolicy(continuation=True))
    called = await fetch.call({"url": "https://example.com/t", "max_chars": 7, "start_index": 3})
    result = await fetch.fetch("https://example.com/t", 7, start_index=3)
    assert called == (
        "url: https://example.com/t\ntruncated: true\nnext_start_index: 10\n"
        "extraction: plain\n\n3456789"
    )
    assert result == FetchResult(
        ok=True,
        text="3456789",
        url="https://example.com/t",
        truncated=True,
        extraction="plain",
        next_start_index=10,
    )


def test_the_result_is_frozen() -> None:
    result = FetchResult(ok=True, text="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "y"  # type: ignore[misc]


def test_an_empty_page_is_a_header_and_a_result() -> None:
    outcome = FetchOutcome(text="", url="https://e.com/", extraction="plain")
    assert outcome.model_text() == "url: https://e.com/\ntruncated: false\nextraction: plain\n\n"
    assert FetchResult.from_outcome(outcome) == (
        FetchResult(ok=True, text="", url="https://e.com/", extraction="plain")
    )


def test_the_header_has_room_for_what_rendered_the_page() -> None:
    outcome = FetchOutcome(
        text="x", url="https://e.com/", truncated=True, extraction="readability",
        next_start_index=1, rendered_by="browser",
    )
    assert outcome.model_text() == (
        "url: https://e.com/\ntruncated: true\nnext_start_index: 1\n"
        "extraction: readability\nrendered: browser\n\nx"
    )


# --- the outcome's own fields (what the CLI's hints read instead of log lines) ----------------


async def test_a_refused_host_carries_its_answers_and_their_ranges(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    internet.dns["internal.example"] = ["10.0.0.5", "169.254.169.254", "not-an-ip"]
    with pytest.raises(ToolError) as caught:
        await make_fetch().call_outcome({"url": "https://internal.example/"})
    outcome = FetchOutcome.from_error(caught.value)
    assert repr(caught.value) == (
        "ToolError(InvalidArguments, 'host internal.example has no allowed address')"
    )
    assert (outcome.error_kind, outcome.message, outcome.host, outcome.redirected) == (
        "InvalidArguments", "host internal.example has no allowed address", "internal.example",
        False,
    )
    assert outcome.refused == (
        ("10.0.0.5", "10.0.0.0/8"), ("169.254.169.254", "169.254.0.0/16"),
        ("not-an-ip", "invalid"),
    )


async def test_a_refused_host_reached_by_a_redirect_says_so(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    async def away(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "https://internal.example/"})

    await site({"/": away})
    internet.dns["internal.example"] = ["10.0.0.5"]
    with pytest.raises(ToolError) as caught:
        await make_fetch().call_outcome({"url": "https://example.com/"})
    outcome = FetchOutcome.from_error(caught.value)
    assert (outcome.host, outcome.redirected, outcome.refused) == (
        "internal.example", True, (("10.0.0.5", "10.0.0.0/8"),)
    )


async def test_a_network_failure_names_its_cause_outside_the_text(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    internet.dns["down.example"] = ["93.184.216.40"]
    internet.routes[("93.184.216.40", 443)] = ("127.0.0.1", dead_port)
    outcome = await make_fetch().call_outcome({"url": "https://down.example/x"})
    assert outcome.model_text() == (
        "fetch failed for https://down.example/x: network error; try a different URL"
    )
    assert (outcome.error_kind, outcome.cause) == ("Soft", "ConnectFailed")


async def test_a_certificate_failure_is_told_apart_from_other_network_errors(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    app = web.Application()
    app.router.add_get("/", missing)
    await internet.serve(app, hosts=("wrong.test",), names=("example.com",))
    outcome = await make_fetch().call_outcome({"url": "https://wrong.test/"})
    assert outcome.model_text() == (
        "fetch failed for https://wrong.test/: network error; try a different URL"
    )
    assert outcome.cause == "CertificateFailed"
    # Why, for a person's hint (the command line names ca_bundle for an unknown CA).
    assert outcome.certificate is not None
    assert (outcome.certificate.host, outcome.certificate.port) == ("wrong.test", 443)
    assert "wrong.test" in outcome.certificate.reason
