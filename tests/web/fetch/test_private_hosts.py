"""Named private hosts (``FetchPolicy(private_hosts=...)``): the one way past the address guard.

Every test runs the whole guarded path on the fake internet: a listed name resolves (through the
fake resolver) to a private address, the named-private rule judges the answer, and only then does
the route map send it to a loopback server. What must stay refused is checked with no route at
all: a dial there would reach the canary and fail the test.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from runvil import ToolError, ToolErrorKind
from runvil.web import FetchPolicy, WebFetch
from tests.fixtures.internet import FakeInternet, Served
from tests.web.fetch.conftest import FetchFactory, SiteFactory, expect_page

WIKI = "wiki.corp.example"
LISTED = FetchPolicy(private_hosts=(WIKI, "*.dev.corp.example", "localhost:8080"))

PlainSite = Callable[..., Awaitable[Served]]


async def page(request: web.Request) -> web.Response:
    return web.Response(text=f"intranet {request.path}", content_type="text/plain")


def to(location: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location})

    return handler


@pytest.fixture
async def plain_site(internet: FakeInternet) -> AsyncIterator[PlainSite]:
    """``await plain_site(routes, host=..., ip=..., port=...)``: a plain-HTTP loopback server
    behind a name, as an intranet service is."""
    runners: list[web.AppRunner] = []

    async def start(
        routes: dict[str, Callable[[web.Request], Awaitable[web.StreamResponse]]],
        *,
        host: str,
        ip: str,
        port: int = 80,
    ) -> Served:
        box: list[Served] = []

        @web.middleware
        async def record(
            request: web.Request,
            handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
        ) -> web.StreamResponse:
            box[0].request_lines.append(f"{request.method} {request.raw_path}")
            box[0].headers.append(dict(request.headers))
            return await handler(request)

        app = web.Application(middlewares=[record])
        for path, handler in routes.items():
            app.router.add_route("*", path, handler)
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        runners.append(runner)
        local = runner.addresses[0][1]
        box.append(Served(runner=runner, port=local))
        internet.dns[host] = [ip]
        internet.routes[(ip, port)] = ("127.0.0.1", local)
        return box[0]

    yield start
    for runner in runners:
        await runner.cleanup()


async def hard(fetch: WebFetch, url: str) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": url})
    return caught.value


# --- a listed name may be internal ----------------------------------------------------------


@pytest.mark.parametrize(
    "address", ["10.0.0.5", "172.16.3.4", "192.168.1.20", "100.64.0.7", "127.0.0.1"]
)
async def test_a_listed_name_is_fetched_at_its_private_address(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, address: str
) -> None:
    served = await site({"/doc": page}, hosts=(WIKI,), ip=address)
    text = await make_fetch(LISTED).call({"url": f"https://{WIKI}/doc"})
    assert text == expect_page(f"https://{WIKI}/doc", "intranet /doc")
    assert internet.dials == [(address, 443)]
    assert served.headers[0]["Host"] == WIKI


@pytest.mark.parametrize("address", ["::1", "fd12:3456::7", "fc00::1"])
async def test_a_listed_name_may_resolve_to_ipv6_loopback_or_unique_local(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, address: str
) -> None:
    await site({"/": page}, hosts=(WIKI,), ip=address)
    assert await make_fetch(LISTED).call({"url": f"https://{WIKI}/"}) == expect_page(
        f"https://{WIKI}/", "intranet /"
    )
    assert internet.dials == [(address, 443)]


async def test_a_wildcard_entry_covers_subdomains_only(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": page}, hosts=("build.dev.corp.example", "a.b.dev.corp.example"), ip="10.9.9.9")
    fetch = make_fetch(LISTED)
    for host in ("build.dev.corp.example", "a.b.dev.corp.example"):
        assert await fetch.call({"url": f"https://{host}/"}) == expect_page(
            f"https://{host}/", "intranet /"
        )
    internet.dns["dev.corp.example"] = ["10.9.9.9"]
    err = await hard(fetch, "https://dev.corp.example/")
    assert str(err) == "host dev.corp.example has no allowed address"


async def test_a_name_with_an_empty_label_is_never_a_listed_host(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    for name in ("x..dev.corp.example", "wiki.corp.example..", ".dev.corp.example"):
        internet.dns[name] = ["10.9.9.9"]
    fetch = make_fetch(LISTED)
    # Not listed, so plain http is the scheme refusal (the wildcard once matched it).
    assert await fetch.call({"url": "http://x..dev.corp.example/"}) == "scheme not allowed: http"
    assert await fetch.call({"url": "http://.dev.corp.example/"}) == "scheme not allowed: http"
    for url in ("https://x..dev.corp.example/", "https://wiki.corp.example../"):
        err = await hard(fetch, url)
        assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, "invalid url")
    assert internet.lookups == []
    assert internet.dials == []


async def test_names_compare_after_the_host_parse(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": page}, hosts=(WIKI, f"{WIKI}."), ip="10.0.0.5")
    fetch = make_fetch(FetchPolicy(private_hosts=("WIKI.Corp.Example.",)))
    assert await fetch.call({"url": "https://Wiki.CORP.example/"}) == expect_page(
        f"https://{WIKI}/", "intranet /"
    )
    assert await fetch.call({"url": f"https://{WIKI}./"}) == expect_page(
        f"https://{WIKI}./", "intranet /"
    )


async def test_a_listed_name_may_be_fetched_over_http(
    make_fetch: FetchFactory, plain_site: PlainSite
) -> None:
    served = await plain_site({"/notes": page}, host=WIKI, ip="10.0.0.5")
    assert await make_fetch(LISTED).call({"url": f"http://{WIKI}/notes"}) == expect_page(
        f"http://{WIKI}/notes", "intranet /notes"
    )
    assert served.request_lines == ["GET /notes"]
    assert served.headers[0]["Host"] == WIKI


async def test_a_listed_name_with_a_port_is_reached_on_that_port_only(
    make_fetch: FetchFactory, plain_site: PlainSite, internet: FakeInternet
) -> None:
    served = await plain_site({"/": page}, host="localhost", ip="127.0.0.1", port=8080)
    fetch = make_fetch(LISTED)
    assert await fetch.call({"url": "http://localhost:8080/"}) == expect_page(
        "http://localhost:8080/", "intranet /"
    )
    assert served.headers[0]["Host"] == "localhost:8080"
    assert internet.dials == [("127.0.0.1", 8080)]
    # The same name on another port is not listed: it is judged as any host is.
    assert await fetch.call({"url": "http://localhost/"}) == "scheme not allowed: http"
    assert str(await hard(fetch, "https://localhost:9090/")) == "port not allowed: 9090"
    assert str(await hard(fetch, "https://localhost/")) == "host localhost has no allowed address"
    assert internet.dials == [("127.0.0.1", 8080)]


async def test_a_listed_name_without_a_port_keeps_the_default_ports(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    internet.dns[WIKI] = ["10.0.0.5"]
    err = await hard(make_fetch(LISTED), f"https://{WIKI}:8443/")
    assert (err.kind, str(err)) == (ToolErrorKind.InvalidArguments, "port not allowed: 8443")
    assert internet.lookups == []


# --- what stays refused, listed or not ------------------------------------------------------

NEVER = [
    "169.254.169.254",  # the cloud metadata address
    "169.254.1.1",  # link-local
    "fe80::1",  # link-local
    "0.0.0.0",  # unspecified / this network
    "::",  # unspecified
    "224.0.0.1",  # multicast
    "ff02::1",  # multicast
    "255.255.255.255",  # broadcast
    "240.0.0.1",  # reserved
    "192.0.2.10",  # documentation
    "fec0::1",  # site-local
    "::ffff:169.254.169.254",  # IPv4-mapped metadata
    "::169.254.169.254",  # IPv4-compatible metadata
    "::ffff:0:a9fe:a9fe",  # IPv4-translated metadata
    "64:ff9b::a9fe:a9fe",  # NAT64 metadata
    "2002:a9fe:a9fe::1",  # 6to4 metadata
    "::ffff:10.0.0.5",  # IPv4-mapped private: only native forms are allowed
    "::ffff:0:a00:5",  # IPv4-translated private
    "64:ff9b::a00:5",  # NAT64 private
    "not-an-ip",
]


@pytest.mark.parametrize("address", NEVER)
async def test_a_listed_name_never_reaches_these_addresses(
    make_fetch: FetchFactory,
    internet: FakeInternet,
    caplog: pytest.LogCaptureFixture,
    address: str,
) -> None:
    internet.dns[WIKI] = [address]
    with caplog.at_level(logging.DEBUG, logger="runvil.web.fetch"):
        err = await hard(make_fetch(LISTED), f"https://{WIKI}/")
    assert (err.kind, str(err)) == (
        ToolErrorKind.InvalidArguments,
        f"host {WIKI} has no allowed address",
    )
    assert internet.dials == []
    assert any(f"resolved to blocked address {address} in range" in m for m in caplog.messages)


async def test_a_listed_name_answering_metadata_and_private_dials_only_the_private_one(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": page}, hosts=(WIKI,), ip="10.0.0.5")
    internet.dns[WIKI] = ["169.254.169.254", "10.0.0.5"]
    assert await make_fetch(LISTED).call({"url": f"https://{WIKI}/"}) == expect_page(
        f"https://{WIKI}/", "intranet /"
    )
    assert internet.dials == [("10.0.0.5", 443)]


async def test_an_unlisted_name_is_judged_as_today(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    internet.dns["wiki.corp.example.evil.test"] = ["10.0.0.5"]
    internet.dns["corp.example"] = ["10.0.0.5"]
    fetch = make_fetch(LISTED)
    for host in ("wiki.corp.example.evil.test", "corp.example"):
        assert str(await hard(fetch, f"https://{host}/")) == f"host {host} has no allowed address"
    assert await fetch.call({"url": "http://corp.example/"}) == "scheme not allowed: http"
    assert internet.dials == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://10.0.0.5/", "ip literal host not allowed: 10.0.0.5"),
        ("https://[::1]:8080/", "port not allowed: 8080"),
        ("https://127.0.0.1/", "ip literal host not allowed: 127.0.0.1"),
    ],
)
async def test_ip_literals_stay_refused(
    make_fetch: FetchFactory, internet: FakeInternet, url: str, message: str
) -> None:
    assert str(await hard(make_fetch(LISTED), url)) == message
    assert internet.lookups == []


async def test_http_to_an_ip_literal_stays_a_scheme_refusal(make_fetch: FetchFactory) -> None:
    assert await make_fetch(LISTED).call({"url": "http://127.0.0.1:8080/"}) == (
        "scheme not allowed: http"
    )


async def test_userinfo_is_refused_for_a_listed_name(make_fetch: FetchFactory) -> None:
    err = await hard(make_fetch(LISTED), f"http://user:pw@{WIKI}/")
    assert str(err) == "url must not contain userinfo"


# --- redirects ------------------------------------------------------------------------------


async def test_a_public_page_cannot_redirect_into_a_listed_host(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    wiki = await site({"/secret": page}, hosts=(WIKI,), ip="10.0.0.5")
    await site({"/start": to(f"https://{WIKI}/secret")})
    err = await hard(make_fetch(LISTED), "https://example.com/start")
    assert (err.kind, str(err)) == (
        ToolErrorKind.InvalidArguments,
        f"host {WIKI} has no allowed address",
    )
    assert wiki.request_lines == []
    assert internet.dials == [("93.184.216.34", 443)]


async def test_a_public_page_cannot_redirect_to_a_listed_port_or_over_http(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/a": to("https://localhost:8080/"), "/b": to(f"http://{WIKI}/")})
    fetch = make_fetch(LISTED)
    assert await fetch.call({"url": "https://example.com/a"}) == (
        "redirect from https://example.com/a to https://localhost:8080/ refused: "
        "port not allowed: 8080"
    )
    assert await fetch.call({"url": "https://example.com/b"}) == (
        f"redirect from https://example.com/b to http://{WIKI}/ refused: "
        "refusing https to http downgrade"
    )
    assert internet.lookups == ["example.com", "example.com"]


async def test_a_listed_host_may_redirect_to_another_listed_host(
    make_fetch: FetchFactory, plain_site: PlainSite
) -> None:
    await plain_site({"/": to(f"http://{WIKI}/moved")}, host="localhost", ip="127.0.0.1", port=8080)
    wiki = await plain_site({"/moved": page}, host=WIKI, ip="10.0.0.5")
    assert await make_fetch(LISTED).call({"url": "http://localhost:8080/"}) == expect_page(
        f"http://{WIKI}/moved", "intranet /moved"
    )
    assert wiki.request_lines == ["GET /moved"]


async def test_a_fetch_that_left_the_listed_hosts_cannot_come_back(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    wiki = await site(
        {"/start": to("https://example.com/bounce"), "/secret": page}, hosts=(WIKI,), ip="10.0.0.5"
    )
    await site({"/bounce": to(f"https://{WIKI}/secret")})
    err = await hard(make_fetch(LISTED), f"https://{WIKI}/start")
    assert str(err) == f"host {WIKI} has no allowed address"
    assert wiki.request_lines == ["GET /start"]


async def test_a_listed_host_may_redirect_to_the_public_web(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/go": to("https://example.com/out")}, hosts=(WIKI,), ip="10.0.0.5")
    await site({"/out": page})
    assert await make_fetch(LISTED).call({"url": f"https://{WIKI}/go"}) == expect_page(
        "https://example.com/out", "intranet /out"
    )


async def test_a_public_name_is_still_judged_by_the_table_after_a_listed_start(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/go": to("https://other.example/")}, hosts=(WIKI,), ip="10.0.0.5")
    internet.dns["other.example"] = ["10.0.0.6"]
    err = await hard(make_fetch(LISTED), f"https://{WIKI}/go")
    assert str(err) == "host other.example has no allowed address"
    assert internet.dials == [("10.0.0.5", 443)]


async def test_every_hop_is_resolved_again(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    """DNS rebinding inside the list: the second lookup answers the metadata address."""
    await site({"/a": to(f"https://{WIKI}/b"), "/b": page}, hosts=(WIKI,), ip="10.0.0.5")
    answers = iter([["10.0.0.5"], ["169.254.169.254"]])
    internet.dns[WIKI] = lambda: next(answers)
    err = await hard(make_fetch(LISTED), f"https://{WIKI}/a")
    assert str(err) == f"host {WIKI} has no allowed address"
    assert internet.lookups == [WIKI, WIKI]


# --- with robots.txt on ---------------------------------------------------------------------


async def test_a_listed_hosts_robots_txt_is_read_under_the_same_rules(
    make_fetch: FetchFactory, plain_site: PlainSite
) -> None:
    """A listed host's robots.txt is fetched like its pages (over http, at its private
    address), so its rules apply instead of an unreadable robots.txt disallowing everything."""

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /secret\n", content_type="text/plain")

    served = await plain_site({"/robots.txt": robots, "/{tail:.*}": page}, host=WIKI, ip="10.0.0.5")
    fetch = make_fetch(FetchPolicy(private_hosts=(WIKI,), robots=True))
    assert await fetch.call({"url": f"http://{WIKI}/doc"}) == expect_page(
        f"http://{WIKI}/doc", "intranet /doc"
    )
    assert await fetch.call({"url": f"http://{WIKI}/secret"}) == (
        f"http://{WIKI}/secret is disallowed by the site's robots.txt"
    )
    assert served.request_lines == ["GET /robots.txt", "GET /doc"]
