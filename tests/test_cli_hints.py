"""``hint:`` lines on the command line's stderr, after the exact message: never in the tool text,
never on stdout, never with ``--json``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
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


@pytest.mark.parametrize("url", ["not a url", "example", "1.2.3.4", "example.com:8080"])
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
