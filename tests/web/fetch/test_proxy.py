"""The egress proxy (``FetchPolicy(proxy=...)``): every hop approved first, then a CONNECT tunnel
to the approved address, with the host name kept for TLS and ``Host``."""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import web

from runvil import ToolError
from runvil.web import FetchPolicy
from tests.fixtures.internet import FakeInternet
from tests.fixtures.proxy import ConnectProxy
from tests.web.fetch.conftest import FetchFactory, SiteFactory, expect_page

Proxy = Callable[..., Awaitable[ConnectProxy]]


@pytest.fixture
async def proxy(internet: FakeInternet) -> AsyncIterator[Proxy]:
    started: list[ConnectProxy] = []

    async def start(**options: object) -> ConnectProxy:
        made = await ConnectProxy(internet, **options).start()  # type: ignore[arg-type]
        started.append(made)
        return made

    yield start
    for made in started:
        await made.stop()


async def page(request: web.Request) -> web.Response:
    return web.Response(text=f"page {request.path} for {request.host}", content_type="text/plain")


def to(location: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location})

    return handler


async def test_a_fetch_goes_through_a_tunnel_to_the_approved_address(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy
) -> None:
    served = await site({"/a": page})
    tunnel = await proxy()
    text = await make_fetch(FetchPolicy(proxy=tunnel.url)).call({"url": "https://example.com/a"})
    assert text == expect_page("https://example.com/a", "page /a for example.com")
    assert tunnel.targets == ["93.184.216.34:443"]
    assert tunnel.heads[0] == (
        "CONNECT 93.184.216.34:443 HTTP/1.1\r\nHost: 93.184.216.34:443\r\n\r\n"
    )
    assert served.headers[0]["Host"] == "example.com"
    assert "Proxy-Authorization" not in served.headers[0]


async def test_the_proxy_sees_only_approved_addresses(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, proxy: Proxy
) -> None:
    await site({"/a": page})
    internet.dns["example.com"] = ["127.0.0.1", "169.254.169.254", "::1", "93.184.216.34"]
    tunnel = await proxy()
    fetch = make_fetch(FetchPolicy(proxy=tunnel.url))
    assert await fetch.call({"url": "https://example.com/a"}) == expect_page(
        "https://example.com/a", "page /a for example.com"
    )
    internet.dns["internal.example"] = ["10.0.0.5"]
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": "https://internal.example/"})
    assert str(caught.value) == "host internal.example has no allowed address"
    assert tunnel.targets == ["93.184.216.34:443"]


async def test_every_redirect_hop_is_approved_before_its_tunnel(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, proxy: Proxy
) -> None:
    await site({"/start": to("https://other.example/next")})
    await site({"/next": to("https://inside.example/")}, hosts=("other.example",),
               ip="93.184.216.99")
    internet.dns["inside.example"] = ["192.168.0.10"]
    tunnel = await proxy()
    with pytest.raises(ToolError) as caught:
        await make_fetch(FetchPolicy(proxy=tunnel.url)).call({"url": "https://example.com/start"})
    assert str(caught.value) == "host inside.example has no allowed address"
    assert tunnel.targets == ["93.184.216.34:443", "93.184.216.99:443"]


async def test_a_private_host_over_http_through_the_proxy(
    make_fetch: FetchFactory, internet: FakeInternet, proxy: Proxy
) -> None:
    app = web.Application()
    app.router.add_get("/wiki", page)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        internet.dns["wiki.corp.example"] = ["10.0.0.5"]
        internet.routes[("10.0.0.5", 80)] = ("127.0.0.1", runner.addresses[0][1])
        tunnel = await proxy()
        policy = FetchPolicy(proxy=tunnel.url, private_hosts=("wiki.corp.example",))
        assert await make_fetch(policy).call({"url": "http://wiki.corp.example/wiki"}) == (
            expect_page("http://wiki.corp.example/wiki", "page /wiki for wiki.corp.example")
        )
        assert tunnel.targets == ["10.0.0.5:80"]
    finally:
        await runner.cleanup()


async def test_a_refusing_proxy_is_a_soft_failure_naming_the_url(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy, caplog: pytest.LogCaptureFixture
) -> None:
    served = await site({"/a": page})
    tunnel = await proxy(refuse=403)
    with caplog.at_level(logging.DEBUG):
        text = await make_fetch(FetchPolicy(proxy=tunnel.url)).call(
            {"url": "https://example.com/a?q=1#f"}
        )
    assert text == (
        "fetch failed for https://example.com/a?q=1: the network's proxy refused the "
        "connection; try a different URL"
    )
    assert served.request_lines == []
    assert "127.0.0.1" not in text and str(tunnel.port) not in text
    assert (
        "the proxy refused a tunnel to 93.184.216.34 port 443 for example.com (status 403)"
        in caplog.messages
    )


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nforged",
    ],
)
async def test_a_proxy_that_does_not_answer_a_connect_properly_is_refused(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy, answer: bytes
) -> None:
    await site({"/a": page})
    tunnel = await proxy(answer=answer)
    assert await make_fetch(FetchPolicy(proxy=tunnel.url)).call(
        {"url": "https://example.com/a"}
    ) == (
        "fetch failed for https://example.com/a: the network's proxy refused the connection; "
        "try a different URL"
    )


async def test_credentials_go_to_the_proxy_and_nowhere_else(
    make_fetch: FetchFactory,
    site: SiteFactory,
    proxy: Proxy,
    caplog: pytest.LogCaptureFixture,
) -> None:
    served = await site({"/a": page})
    token = base64.b64encode(b"alice:s3:cr3t pw").decode()
    tunnel = await proxy(authorization=f"Basic {token}")
    url = f"http://alice:s3%3Acr3t%20pw@127.0.0.1:{tunnel.port}"
    policy = FetchPolicy(proxy=url)
    with caplog.at_level(logging.DEBUG):
        assert await make_fetch(policy).call({"url": "https://example.com/a"}) == expect_page(
            "https://example.com/a", "page /a for example.com"
        )
        refused = await make_fetch(FetchPolicy(proxy=tunnel.url)).call(
            {"url": "https://example.com/a"}
        )
    assert refused.startswith("fetch failed for https://example.com/a: the network's proxy")
    assert f"Proxy-Authorization: Basic {token}\r\n" in tunnel.heads[0]
    assert "Proxy-Authorization" not in served.headers[0]
    assert "cr3t" not in repr(policy) and "alice" not in repr(policy)
    assert all("cr3t" not in message and "alice" not in message for message in caplog.messages)


@pytest.mark.parametrize(
    "value",
    ["https://proxy.corp:3128", "socks5://u:secret@proxy.corp:1080", "http://u:secret@/",
     "http://u:secret@proxy.corp:3128/path", "http://u:secret@proxy.corp:99999", "proxy.corp"],
)
def test_a_bad_proxy_is_refused_without_quoting_it(value: str) -> None:
    with pytest.raises(ValueError) as caught:
        FetchPolicy(proxy=value)
    assert "secret" not in str(caught.value)
    assert str(caught.value).startswith("the proxy must be an http:// URL with a host")


def test_none_and_direct_mean_no_proxy() -> None:
    assert FetchPolicy(proxy="none") == FetchPolicy(proxy="direct") == FetchPolicy()


async def test_a_proxy_by_name_on_a_private_address(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, proxy: Proxy
) -> None:
    await site({"/a": page})
    tunnel = await proxy()
    internet.dns["proxy.corp.example"] = ["10.20.30.40"]
    internet.routes[("10.20.30.40", 3128)] = ("127.0.0.1", tunnel.port)
    policy = FetchPolicy(proxy="http://proxy.corp.example:3128")
    assert await make_fetch(policy).call({"url": "https://example.com/a"}) == expect_page(
        "https://example.com/a", "page /a for example.com"
    )
    assert tunnel.targets == ["93.184.216.34:443"]
    assert internet.lookups == ["example.com", "proxy.corp.example"]


async def test_an_unreachable_proxy_is_a_network_error(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy
) -> None:
    served = await site({"/a": page})
    gone = await proxy()
    await gone.stop()
    assert await make_fetch(FetchPolicy(proxy=gone.url)).call({"url": "https://example.com/a"}) == (
        "fetch failed for https://example.com/a: network error; try a different URL"
    )
    assert served.request_lines == []


async def test_a_silent_proxy_runs_into_the_connect_timeout(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy
) -> None:
    await site({"/a": page})
    tunnel = await proxy(silent=True)
    policy = FetchPolicy(proxy=tunnel.url, connect_timeout=0.3, timeout=5.0)
    assert await make_fetch(policy).call({"url": "https://example.com/a"}) == (
        "request to https://example.com/a timed out; try again or use a different URL"
    )


async def test_a_pooled_tunnel_is_reused_only_for_an_approved_address(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, proxy: Proxy
) -> None:
    await site({"/a": page})
    await site({"/a": page}, hosts=("moved.example",), ip="93.184.216.50")
    tunnel = await proxy()
    fetch = make_fetch(FetchPolicy(proxy=tunnel.url))
    for _ in range(2):
        await fetch.call({"url": "https://example.com/a"})
    assert tunnel.targets == ["93.184.216.34:443"], "the second fetch reused the tunnel"
    internet.dns["example.com"] = ["93.184.216.50"]  # the name moved
    assert await fetch.call({"url": "https://example.com/a"}) == expect_page(
        "https://example.com/a", "page /a for example.com"
    )
    assert tunnel.targets == ["93.184.216.34:443", "93.184.216.50:443"]


async def test_the_environment_is_read_only_when_the_policy_says_env(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    await site({"/a": page})
    tunnel = await proxy()
    monkeypatch.setenv("HTTPS_PROXY", tunnel.url)
    expected = expect_page("https://example.com/a", "page /a for example.com")
    assert await make_fetch().call({"url": "https://example.com/a"}) == expected
    assert tunnel.targets == [], "HTTPS_PROXY is ignored by default"
    assert await make_fetch(FetchPolicy(proxy="env")).call(
        {"url": "https://example.com/a"}
    ) == expected
    assert tunnel.targets == ["93.184.216.34:443"]
    monkeypatch.setenv("NO_PROXY", "localhost,.example.com")
    assert await make_fetch(FetchPolicy(proxy="env")).call(
        {"url": "https://example.com/a"}
    ) == expected
    assert tunnel.targets == ["93.184.216.34:443"], "NO_PROXY sends example.com direct"


async def test_env_mode_with_a_lowercase_scheme_less_variable(
    make_fetch: FetchFactory, site: SiteFactory, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    await site({"/a": page})
    tunnel = await proxy()
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.setenv("https_proxy", f"127.0.0.1:{tunnel.port}")
    await make_fetch(FetchPolicy(proxy="env")).call({"url": "https://example.com/a"})
    assert tunnel.targets == ["93.184.216.34:443"]


def test_a_bad_environment_proxy_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from runvil.web import WebFetch

    monkeypatch.setenv("HTTPS_PROXY", "ftp://u:secret@proxy:21")
    with pytest.raises(ValueError) as caught:
        WebFetch(policy=FetchPolicy(proxy="env"))
    assert str(caught.value) == (
        'HTTPS_PROXY: the proxy must be an http:// URL with a host '
        '(http://[user:password@]host[:port]), "env" or "none"'
    )
