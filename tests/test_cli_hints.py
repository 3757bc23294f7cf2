"""``hint:`` lines on the command line's stderr, after the exact message: never in the tool text,
never on stdout, never with ``--json``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from runvil._faces.hints import fetch_hints
from runvil.web._fetch.outcome import FetchOutcome
from tests.faces_helpers import child_env, run_cli, site_app, write_seam
from tests.fixtures.internet import FakeInternet

Env = Callable[..., Awaitable[dict[str, str]]]

NETWORK_HINT = (
    "hint: to fetch a host on your own network, name it in private_hosts under [fetch] in "
    "runvil.toml (or RUNVIL_FETCH_PRIVATE_HOSTS); a redirect from a public page still never "
    "reaches it"
)
NEVER_HINT = (
    "hint: link-local (169.254.0.0/16, fe80::/10), multicast, broadcast, unspecified and "
    "IPv4-in-IPv6 addresses are never fetched, not even for a host in private_hosts"
)


@pytest.fixture
def make_env(internet: FakeInternet, tmp_path: Path) -> Env:
    async def make(policy: dict[str, Any] | None = None) -> dict[str, str]:
        app = site_app()

        async def bounce(request: web.Request) -> web.Response:
            return web.Response(status=302, headers={"Location": "https://wiki.corp.example/"})

        app.router.add_get("/bounce", bounce)
        await internet.serve(app)
        internet.dns["intranet.example"] = ["10.0.0.5", "fd00::5"]
        internet.dns["metadata.example"] = ["169.254.169.254"]
        internet.dns["nothing.example"] = []
        internet.dns["wiki.corp.example"] = ["10.0.0.9"]
        full = {"timeout": 3.0, "connect_timeout": 1.0, **(policy or {})}
        return child_env(write_seam(internet, tmp_path, full), tmp_path)

    return make


@pytest.mark.parametrize(
    ("url", "suggestion"),
    [
        ("example.com", "https://example.com/"),
        ("Example.COM/hello.txt?x=1", "https://example.com/hello.txt?x=1"),
        ("localhost", "https://localhost/"),
    ],
)
async def test_a_url_without_a_scheme(make_env: Env, url: str, suggestion: str) -> None:
    env = await make_env()
    assert await run_cli("fetch", url, env=env) == (
        2, "", f"invalid url\nhint: did you mean {suggestion}?\n",
    )


@pytest.mark.parametrize("url", ["not a url", "example", "1.2.3.4", "1.2.3.4:8443"])
async def test_no_suggestion_that_would_be_refused_or_is_not_a_name(
    make_env: Env, url: str
) -> None:
    code, _, err = await run_cli("fetch", url, env=await make_env())
    assert "hint:" not in err and code in (1, 2)


async def test_http_gets_the_https_hint(make_env: Env) -> None:
    assert await run_cli("fetch", "http://example.com/hello.txt", env=await make_env()) == (
        1, "scheme not allowed: http\n", "hint: runvil fetches https only\n",
    )


async def test_json_output_is_unchanged_and_has_no_hint(make_env: Env) -> None:
    env = await make_env()
    code, out, err = await run_cli("fetch", "--json", "example.com", env=env)
    assert (code, json.loads(out), err) == (
        2, {"ok": False, "text": "invalid url", "error_kind": "InvalidArguments"}, "",
    )
    code, out, err = await run_cli("fetch", "--json", "https://intranet.example/", env=env)
    assert (code, err) == (2, "")


async def test_an_internal_host_names_its_addresses_and_the_setting(make_env: Env) -> None:
    assert await run_cli("fetch", "https://intranet.example/", env=await make_env()) == (
        2, "",
        "host intranet.example has no allowed address\n"
        "hint: intranet.example resolved only to addresses runvil does not fetch: "
        "10.0.0.5 (in 10.0.0.0/8), fd00::5 (in fc00::/7)\n"
        f"{NETWORK_HINT}\n",
    )


async def test_the_metadata_address_is_never_fetched(make_env: Env) -> None:
    assert await run_cli("fetch", "https://metadata.example/", env=await make_env()) == (
        2, "",
        "host metadata.example has no allowed address\n"
        "hint: metadata.example resolved only to addresses runvil does not fetch: "
        "169.254.169.254 (in 169.254.0.0/16)\n"
        f"{NEVER_HINT}\n",
    )


async def test_a_listed_host_resolving_to_metadata(make_env: Env) -> None:
    env = await make_env({"private_hosts": ["metadata.example"]})
    code, _, err = await run_cli("fetch", "https://metadata.example/", env=env)
    assert (code, err.splitlines()[-1]) == (2, NEVER_HINT)


async def test_a_host_with_no_address(make_env: Env) -> None:
    assert await run_cli("fetch", "https://nothing.example/", env=await make_env()) == (
        2, "", "host nothing.example has no allowed address\nhint: nothing.example resolved to "
        "no address\n",
    )


async def test_a_redirect_into_a_listed_host(make_env: Env) -> None:
    env = await make_env({"private_hosts": ["wiki.corp.example"]})
    assert await run_cli("fetch", "https://example.com/bounce", env=env) == (
        2, "",
        "host wiki.corp.example has no allowed address\n"
        "hint: wiki.corp.example resolved only to addresses runvil does not fetch: "
        "10.0.0.9 (in 10.0.0.0/8)\n"
        "hint: wiki.corp.example is in private_hosts, but this fetch reached it by a redirect "
        "from a host that is not, and a redirect never carries a fetch into your network\n",
    )


async def test_no_hint_on_success_or_for_other_failures(make_env: Env) -> None:
    env = await make_env()
    code, _, err = await run_cli("fetch", "https://example.com/hello.txt", env=env)
    assert (code, err) == (0, "")
    assert await run_cli("fetch", "https://user:pw@example.com/", env=env) == (
        2, "", "url must not contain userinfo\n",
    )


def test_the_hint_text_for_a_host_that_resolved_to_nothing() -> None:
    refused = FetchOutcome(
        error_kind="InvalidArguments",
        message="host a.example has no allowed address",
        host="a.example",
    )
    assert fetch_hints("https://a.example/", refused) == [
        "hint: a.example resolved to no address"
    ]
    port = FetchOutcome(error_kind="InvalidArguments", message="port not allowed: 8080")
    assert fetch_hints("https://a.example/", port) == []


# --- refusals that point to the fix ---------------------------------------------------------

PORT_HINTS = (
    "hint: public hosts are fetched on ports 443 and 80 only\n"
    "hint: to fetch {host} on port {port} as a host of your own network, name it with its port: "
    'private_hosts = ["{host}:{port}"] under [fetch] in runvil.toml (or '
    "RUNVIL_FETCH_PRIVATE_HOSTS, --private-host)\n"
)


async def test_a_port_other_than_443_or_80_names_the_private_hosts_entry(make_env: Env) -> None:
    env = await make_env()
    assert await run_cli("fetch", "https://intranet.example:8443/x", env=env) == (
        2, "", "port not allowed: 8443\n" + PORT_HINTS.format(host="intranet.example", port=8443),
    )
    assert await run_cli("fetch", "https://10.0.0.5:8443/", env=env) == (
        2, "", "port not allowed: 8443\nhint: public hosts are fetched on ports 443 and 80 only; "
        "a host of your own network is fetched by its name, listed in private_hosts with its "
        "port, never by its IP address\n",
    )


@pytest.mark.parametrize(
    ("typed", "suggestion", "host", "port"),
    [
        ("localhost:8443/x", "https://localhost:8443/x", "localhost", 8443),
        ("example.com:8080", "https://example.com:8080/", "example.com", 8080),
    ],
)
async def test_a_url_without_a_scheme_and_with_a_port(
    make_env: Env, typed: str, suggestion: str, host: str, port: int
) -> None:
    scheme = typed.split(":", 1)[0]
    assert await run_cli("fetch", typed, env=await make_env()) == (
        1, f"scheme not allowed: {scheme}\n",
        f"hint: did you mean {suggestion}?\n" + PORT_HINTS.format(host=host, port=port),
    )


@pytest.fixture
async def wiki(internet: FakeInternet) -> AsyncIterator[None]:
    """wiki.corp.example over plain http on loopback (a host of the operator's network)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="wiki page", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/page.txt", page)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    internet.routes[("10.0.0.9", 80)] = ("127.0.0.1", runner.addresses[0][1])
    try:
        yield
    finally:
        await runner.cleanup()


async def test_http_works_for_a_listed_private_host_and_says_why_for_any_other(
    make_env: Env, wiki: None
) -> None:
    env = await make_env()
    listed = ("--private-host", "wiki.corp.example")
    assert await run_cli("fetch", *listed, "http://wiki.corp.example/page.txt", env=env) == (
        0, "url: http://wiki.corp.example/page.txt\ntruncated: false\nextraction: plain\n\n"
        "wiki page\n", "",
    )
    assert await run_cli("fetch", *listed, "http://example.com/hello.txt", env=env) == (
        1, "scheme not allowed: http\n",
        "hint: runvil fetches http only from the hosts listed in private_hosts, and example.com "
        "is not one of them; every other host is fetched over https\n",
    )
    assert await run_cli("fetch", *listed, "http://wiki.corp.example:8080/", env=env) == (
        1, "scheme not allowed: http\n",
        "hint: wiki.corp.example is in private_hosts, but not with port 8080; http is fetched "
        "only from a listed host on its listed port\n",
    )


async def test_the_domain_flags_replace_the_lists_below_them(make_env: Env) -> None:
    env = await make_env()
    hello = "https://example.com/hello.txt"
    assert await run_cli("fetch", "--block-domain", "example.com", hello, env=env) == (
        2, "", "domain not allowed: example.com\n",
    )
    assert await run_cli(
        "fetch", "--allow-domain", "python.org", "--allow-domain", "corp.example", hello, env=env
    ) == (2, "", "domain not allowed: example.com\n")
    # The flag's list replaces the environment's whole: example.com is no longer blocked.
    blocked = {**env, "RUNVIL_FETCH_BLOCKED_DOMAINS": "example.com"}
    assert (await run_cli("fetch", hello, env=blocked))[0] == 2
    assert (await run_cli("fetch", "--block-domain", "ads.example", hello, env=blocked))[0] == 0
