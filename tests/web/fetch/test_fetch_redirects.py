"""Redirects: followed hop by hop, each hop checked again, refusals as soft text."""

from __future__ import annotations

import pytest
from aiohttp import web

from runvil import ToolError, ToolErrorKind
from runvil.web import WebFetch
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import SiteFactory, expect_page


def redirect(location: str, status: int = 302) -> web.Response:
    return web.Response(status=status, headers={"Location": location})


def to(location: str, status: int = 302):  # type: ignore[no-untyped-def]
    async def handler(request: web.Request) -> web.Response:
        return redirect(location, status)

    return handler


async def text(request: web.Request) -> web.Response:
    return web.Response(text=f"page {request.path}", content_type="text/plain")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_followed_and_the_target_gets_one_request(
    fetch: WebFetch, site: SiteFactory, status: int
) -> None:
    served = await site({"/": to("https://example.com/next", status), "/next": text})
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/next", "page /next"
    )
    assert served.request_lines == ["GET /", "GET /next"]


async def test_a_relative_location_resolves_against_the_current_url(
    fetch: WebFetch, site: SiteFactory
) -> None:
    served = await site({"/a/b": to("../c?x=1#f"), "/c": text})
    assert await fetch.call({"url": "https://example.com/a/b?secret=1"}) == expect_page(
        "https://example.com/c?x=1", "page /c"
    )
    assert served.request_lines == ["GET /a/b?secret=1", "GET /c?x=1"]
    assert "Referer" not in served.headers[1]


async def test_a_redirect_to_a_disallowed_port_is_refused_softly(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/start": to("https://example.com:8080/next")})
    assert await fetch.call({"url": "https://example.com/start"}) == (
        "redirect from https://example.com/start to https://example.com:8080/next refused: "
        "port not allowed: 8080"
    )
    assert internet.lookups == ["example.com"]


@pytest.mark.parametrize(
    ("location", "to_url", "reason"),
    [
        ("http://example.com/x?q=1", "http://example.com/x", "refusing https to http downgrade"),
        ("http://127.0.0.1/", "http://127.0.0.1/", "refusing https to http downgrade"),
        ("https://127.0.0.1/", "https://127.0.0.1/", "ip literal host not allowed: 127.0.0.1"),
        ("https://0177.0.0.1/", "https://127.0.0.1/", "ip literal host not allowed: 127.0.0.1"),
        ("https://2130706433/", "https://127.0.0.1/", "ip literal host not allowed: 127.0.0.1"),
        ("https://[::1]/", "https://[::1]/", "ip literal host not allowed: ::1"),
        ("https://127.1/", "https://127.0.0.1/", "ip literal host not allowed: 127.0.0.1"),
        (
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:7f00:1]/",
            "ip literal host not allowed: ::ffff:7f00:1",
        ),
        ("https://[::127.0.0.1]/", "https://[::7f00:1]/", "ip literal host not allowed: ::7f00:1"),
        (
            "https://user:pass@host.example:8443/a/b?x=secret#frag",
            "https://host.example:8443/a/b",
            "url must not contain userinfo",
        ),
        ("https://u:p@example.com/a?b", "https://example.com/a", "url must not contain userinfo"),
        ("ftp://example.com/f", "ftp://example.com/f", "scheme not allowed: ftp"),
        ("javascript:alert(1)", "javascript:", "scheme not allowed: javascript"),
        ("https://exa mple.com/x?y", "https://exa mple.com/x", "invalid url"),
    ],
)
async def test_refused_hops_name_both_urls_and_the_reason(
    fetch: WebFetch,
    site: SiteFactory,
    internet: FakeInternet,
    location: str,
    to_url: str,
    reason: str,
) -> None:
    await site({"/start": to(location)})
    assert await fetch.call({"url": "https://example.com/start?token=abc"}) == (
        f"redirect from https://example.com/start to {to_url} refused: {reason}"
    )
    assert internet.lookups == ["example.com"]


async def test_five_redirects_complete_and_a_sixth_is_refused(
    fetch: WebFetch, site: SiteFactory
) -> None:
    routes = {f"/r{i}": to(f"/r{i + 1}") for i in range(6)}
    routes["/r5"] = text  # /r0 -> ... -> /r5: five hops
    served = await site(routes)
    assert await fetch.call({"url": "https://example.com/r0"}) == expect_page(
        "https://example.com/r5", "page /r5"
    )
    assert len(served.request_lines) == 6

    routes = {f"/s{i}": to(f"/s{i + 1}") for i in range(7)}
    served = await site(routes, hosts=("loop.example",), ip="93.184.216.36")
    assert await fetch.call({"url": "https://loop.example/s0"}) == (
        "redirect from https://loop.example/s5 to https://loop.example/s6 refused: "
        "exceeded max redirects (5)"
    )
    assert served.request_lines == [f"GET /s{i}" for i in range(6)]


async def test_a_redirect_loop_stops_at_the_cap(fetch: WebFetch, site: SiteFactory) -> None:
    served = await site({"/": to("/")})
    assert await fetch.call({"url": "https://example.com/"}) == (
        "redirect from https://example.com/ to https://example.com/ refused: "
        "exceeded max redirects (5)"
    )
    assert len(served.request_lines) == 6


async def test_a_chain_across_hosts_is_followed(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    a = await site({"/": to("https://b.example/")}, hosts=("a.example",), ip="93.184.216.41")
    b = await site({"/": to("https://c.example/")}, hosts=("b.example",), ip="93.184.216.42")
    c = await site({"/": text}, hosts=("c.example",), ip="93.184.216.43")
    assert await fetch.call({"url": "https://a.example/"}) == expect_page(
        "https://c.example/", "page /"
    )
    assert [len(s.request_lines) for s in (a, b, c)] == [1, 1, 1]
    assert internet.lookups == ["a.example", "b.example", "c.example"]
    assert c.headers[0]["Host"] == "c.example"


async def test_a_hop_to_a_host_with_only_blocked_addresses_fails_hard(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": to("https://intranet.example/admin")})
    internet.dns["intranet.example"] = ["10.0.0.1"]
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": "https://example.com/"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.InvalidArguments,
        "host intranet.example has no allowed address",
    )
    assert ("10.0.0.1", 443) not in internet.dials


async def test_a_hop_whose_lookup_fails_is_soft(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/": to("https://gone.example/")})
    assert await fetch.call({"url": "https://example.com/"}) == (
        "dns resolution failed for gone.example"
    )


async def test_every_hop_resolves_again(
    fetch: WebFetch, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": to("/next"), "/next": text})
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    internet.dns["example.com"] = lambda: next(answers)
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": "https://example.com/"})
    assert str(caught.value) == "host example.com has no allowed address"


async def test_messages_about_the_response_name_the_final_url(
    fetch: WebFetch, site: SiteFactory
) -> None:
    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=410, text="gone")

    await site({"/": to("/final?k=v"), "/final": gone})
    assert await fetch.call({"url": "https://example.com/"}) == (
        "https://example.com/final answered HTTP 410; try a different URL"
    )


@pytest.mark.parametrize("status", [300, 304, 305, 306, 399])
async def test_other_3xx_are_plain_statuses(
    fetch: WebFetch, site: SiteFactory, status: int
) -> None:
    await site({"/": to("/next", status), "/next": text})
    assert await fetch.call({"url": "https://example.com/"}) == (
        f"https://example.com/ answered HTTP {status}; try a different URL"
    )


async def test_a_redirect_without_location_is_a_plain_status(
    fetch: WebFetch, site: SiteFactory
) -> None:
    async def bare(request: web.Request) -> web.Response:
        return web.Response(status=302)

    await site({"/": bare})
    assert await fetch.call({"url": "https://example.com/"}) == (
        "https://example.com/ answered HTTP 302; try a different URL"
    )


async def test_a_fragment_only_location_is_still_a_hop(fetch: WebFetch, site: SiteFactory) -> None:
    served = await site({"/": to("#top")})
    assert await fetch.call({"url": "https://example.com/"}) == (
        "redirect from https://example.com/ to https://example.com/ refused: "
        "exceeded max redirects (5)"
    )
    assert len(served.request_lines) == 6
