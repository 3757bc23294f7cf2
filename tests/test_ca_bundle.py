"""A company CA: ``[fetch] ca_bundle``, ``RUNVIL_FETCH_CA_BUNDLE``, ``--ca-bundle``,
``FetchPolicy(ca_bundle=...)`` and ``Network(ca_bundle=...)``.

The intranet server here is a loopback TLS server whose certificate a second trustme CA signed,
one the fake internet's trust does not hold: it is reached only with that CA's file as the bundle,
and the public test CA stays trusted beside it.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trustme
from aiohttp import web

from runvil.web import FetchPolicy, Network, WebFetch
from tests.faces_helpers import child_env, hello_text, run_cli, site_app, user_config, write_seam
from tests.fixtures.internet import FakeInternet
from tests.fixtures.proxy import ConnectProxy

PORTAL = "https://portal.example/page.txt"
PORTAL_IP = "93.184.216.40"
PORTAL_TEXT = "url: https://portal.example/page.txt\ntruncated: false\nextraction: plain\n\nportal"
REFUSED = "fetch failed for https://portal.example/page.txt: network error; try a different URL"
CA_HINT = (
    "hint: the certificate of portal.example is signed by a CA runvil does not trust "
    "(unable to get local issuer certificate); if it is your organisation's own CA, name its "
    "PEM file in ca_bundle under [fetch] in runvil.toml (or RUNVIL_FETCH_CA_BUNDLE, --ca-bundle)"
)


@pytest.fixture
def company_ca() -> trustme.CA:
    return trustme.CA(organization_name="Corp Example Internal CA")


@pytest.fixture
def bundle(company_ca: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "corp-ca.pem"
    company_ca.cert_pem.write_to_path(str(path))
    return path


@pytest.fixture
async def portal(internet: FakeInternet, company_ca: trustme.CA) -> AsyncIterator[list[str]]:
    """portal.example, signed by the company CA, behind a public-looking address; what it
    served (robots.txt, pages) is listed."""
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.path)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nDisallow: /private\n",
                                content_type="text/plain")
        return web.Response(text="portal", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    company_ca.issue_cert("portal.example").configure_cert(context)
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    internet.dns["portal.example"] = [PORTAL_IP]
    internet.routes[(PORTAL_IP, 443)] = ("127.0.0.1", runner.addresses[0][1])
    await internet.serve(site_app())  # example.com, signed by the public test CA
    try:
        yield seen
    finally:
        await runner.cleanup()


# --- Python: FetchPolicy and Network ----------------------------------------------------------


async def test_the_policy_s_bundle_is_trusted_besides_the_public_roots(
    internet: FakeInternet, portal: list[str], bundle: Path
) -> None:
    async with WebFetch(network=internet.network()) as plain:
        assert await plain.call({"url": PORTAL}) == REFUSED
    policy = FetchPolicy(ca_bundle=str(bundle), robots=True)
    async with WebFetch(policy=policy, network=internet.network()) as fetch:
        assert await fetch.call({"url": PORTAL}) == PORTAL_TEXT
        assert await fetch.call({"url": "https://example.com/hello.txt"}) == hello_text()
        assert await fetch.call({"url": "https://portal.example/private"}) == (
            "https://portal.example/private is disallowed by the site's robots.txt"
        )
    assert portal == ["/robots.txt", "/page.txt"]  # robots.txt came over the company CA too


async def test_a_network_s_bundle(
    internet: FakeInternet, portal: list[str], bundle: Path
) -> None:
    network = Network(
        resolve=internet.resolve, route=internet.route,
        ssl_context=ssl.create_default_context(cafile=None), ca_bundle=str(bundle),
    )
    assert network.ca_bundle == str(bundle)
    async with WebFetch(network=network) as fetch:
        assert await fetch.call({"url": PORTAL}) == PORTAL_TEXT


async def test_through_the_proxy(
    internet: FakeInternet, portal: list[str], bundle: Path
) -> None:
    proxy = await ConnectProxy(internet).start()
    try:
        policy = FetchPolicy(ca_bundle=str(bundle), proxy=f"http://127.0.0.1:{proxy.port}")
        async with WebFetch(policy=policy, network=internet.network()) as fetch:
            assert await fetch.call({"url": PORTAL}) == PORTAL_TEXT
        assert proxy.targets == [f"{PORTAL_IP}:443"]
    finally:
        await proxy.stop()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.pem", "cannot read {dir}/missing.pem: no such file"),
        ("empty.pem", "{dir}/empty.pem holds no PEM certificate"),
        (".", "cannot read {dir}: it is a directory, not a PEM file"),
    ],
)
def test_a_file_that_cannot_be_used_is_refused_at_once(
    tmp_path: Path, name: str, message: str
) -> None:
    (tmp_path / "empty.pem").write_text("not a certificate\n")
    path = str(tmp_path / name) if name != "." else str(tmp_path)
    expected = message.format(dir=tmp_path)
    with pytest.raises(ValueError) as policy_error:
        FetchPolicy(ca_bundle=path)
    assert str(policy_error.value) == expected
    with pytest.raises(ValueError) as network_error:
        Network(ca_bundle=path)
    assert str(network_error.value) == expected


def test_the_default_policy_and_network_trust_no_bundle() -> None:
    assert FetchPolicy().ca_bundle is None and Network().ca_bundle is None


# --- the command line ---------------------------------------------------------------------


@pytest.fixture
async def env(internet: FakeInternet, portal: list[str], tmp_path: Path) -> dict[str, str]:
    return child_env(write_seam(internet, tmp_path), tmp_path)


async def test_without_the_bundle_the_hint_names_ca_bundle(env: dict[str, str]) -> None:
    assert await run_cli("fetch", PORTAL, env=env) == (1, REFUSED + "\n", CA_HINT + "\n")
    code, _, err = await run_cli("fetch", "--json", PORTAL, env=env)
    assert (code, err) == (1, "")  # no hint with --json


async def test_the_flag_the_variable_and_the_file(
    env: dict[str, str], bundle: Path, tmp_path: Path
) -> None:
    assert await run_cli("fetch", "--ca-bundle", str(bundle), PORTAL, env=env) == (
        0, PORTAL_TEXT + "\n", "",
    )
    assert await run_cli("fetch", PORTAL, env={**env, "RUNVIL_FETCH_CA_BUNDLE": str(bundle)}) == (
        0, PORTAL_TEXT + "\n", "",
    )
    user_config(tmp_path).write_text(f'[fetch]\nca_bundle = "{bundle}"\n')
    assert await run_cli("fetch", PORTAL, env=env) == (0, PORTAL_TEXT + "\n", "")
    # Public sites stay trusted: the bundle is added to the roots, never put in their place.
    assert await run_cli("fetch", "https://example.com/hello.txt", env=env) == (
        0, hello_text() + "\n", "",
    )
    code, out, _ = await run_cli("config", env=env)
    assert (code, f'ca_bundle = "{bundle}"  # file:{user_config(tmp_path)}' in out) == (0, True)


async def test_a_bad_bundle_is_a_configuration_error_at_start(
    env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "nope.pem"
    for command in (("fetch", PORTAL), ("search", "x"), ("mcp",), ("config",)):
        assert await run_cli(*command, "--ca-bundle", str(missing), env=env) == (
            2, "", f"runvil: --ca-bundle: cannot read {missing}: no such file\n",
        )
    assert await run_cli(
        "fetch", PORTAL, env={**env, "RUNVIL_FETCH_CA_BUNDLE": str(missing)}
    ) == (2, "", f"runvil: RUNVIL_FETCH_CA_BUNDLE: cannot read {missing}: no such file\n")
    user_config(tmp_path).write_text(f'[fetch]\nca_bundle = "{missing}"\n')
    assert await run_cli("config", env=env) == (
        2, "",
        f"runvil: {user_config(tmp_path)}: fetch.ca_bundle: cannot read {missing}: no such file\n",
    )


async def test_runvil_debug_shows_why_the_certificate_was_refused(env: dict[str, str]) -> None:
    code, out, err = await run_cli("fetch", PORTAL, env={**env, "RUNVIL_DEBUG": "1"})
    assert (code, out) == (1, REFUSED + "\n")
    assert (
        "runvil: debug: runvil.net: TLS certificate of portal.example:443 refused: unable to get "
        "local issuer certificate (verify code 20)\n"
    ) in err
    assert err.endswith(CA_HINT + "\n")
