"""The operator's settings for its network: one row each in the settings table, read from the
file, the environment or a flag, applied to the policy every face runs with, and shown by
``runvil config``. With none set, the policy is the seeds' default (test_config.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from runvil._faces.config import ConfigError, describe, load_config
from runvil._faces.wiring import wire
from runvil.web import FetchPolicy
from runvil.web._search.providers import SearxngProvider
from tests.faces_helpers import child_env, run_cli, user_config, write_seam
from tests.fixtures.internet import FakeInternet


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, flags: dict[str, Any] | None = None, **env: str) -> Any:
    return load_config(flags, env={"HOME": str(tmp_path), **env}, cwd=tmp_path)


def test_the_file_sets_the_policy(tmp_path: Path) -> None:
    write(
        user_config(tmp_path),
        '[fetch]\nuser_agent = "acme-research/2.1"\n'
        'private_hosts = ["Wiki.Corp.Example", "*.dev.corp.example", "localhost:8080"]\n'
        'allowed_domains = ["example.com", "corp.example"]\n'
        'blocked_domains = ["ads.example.com"]\n',
    )
    cfg = load(tmp_path)
    policy = wire(cfg).policy
    assert policy == FetchPolicy(
        user_agent="acme-research/2.1",
        private_hosts=("wiki.corp.example", "*.dev.corp.example", "localhost:8080"),
        allowed_domains=("example.com", "corp.example"),
        blocked_domains=("ads.example.com",),
    )
    assert describe(cfg)["fetch"] == {
        "user_agent": "acme-research/2.1",
        "private_hosts": ["wiki.corp.example", "*.dev.corp.example", "localhost:8080"],
        "allowed_domains": ["example.com", "corp.example"],
        "blocked_domains": ["ads.example.com"],
        # the faces' defaults of the reading extensions (docs/configuration.md)
        "continuation": True,
        "pdf": True,
        "robots": False,
    }


def test_the_environment_takes_lists_separated_by_commas_or_spaces(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        RUNVIL_FETCH_PRIVATE_HOSTS="wiki.corp.example, localhost:8080",
        RUNVIL_FETCH_BLOCKED_DOMAINS="ads.example.com tracker.example.com",
        RUNVIL_FETCH_USER_AGENT="from-env/1",
    )
    assert dict(cfg.fetch) == {
        "private_hosts": ("wiki.corp.example", "localhost:8080"),
        "blocked_domains": ("ads.example.com", "tracker.example.com"),
        "user_agent": "from-env/1",
    }
    assert cfg.sources["fetch.private_hosts"] == "env:RUNVIL_FETCH_PRIVATE_HOSTS"


def test_the_flag_beats_the_environment_which_beats_the_file(tmp_path: Path) -> None:
    write(user_config(tmp_path), '[fetch]\nuser_agent = "file/1"\n')
    cfg = load(tmp_path, {"user_agent": "flag/1"}, RUNVIL_FETCH_USER_AGENT="env/1")
    assert (wire(cfg).policy.user_agent, cfg.sources["fetch.user_agent"]) == ("flag/1", "flag")
    assert load(tmp_path, RUNVIL_FETCH_USER_AGENT="env/1").fetch["user_agent"] == "env/1"
    assert load(tmp_path).fetch["user_agent"] == "file/1"


@pytest.mark.parametrize(
    ("text", "env", "flags", "message"),
    [
        ('[fetch]\nprivate_hosts = ["10.0.0.5"]\n', {}, {},
         "{path}: fetch.private_hosts entry '10.0.0.5' is an IP address, not a host name"),
        ("", {"RUNVIL_FETCH_PRIVATE_HOSTS": "wiki:99999"}, {},
         "RUNVIL_FETCH_PRIVATE_HOSTS entry 'wiki:99999' has a port out of range"),
        ('[fetch]\nallowed_domains = ["*.example.com"]\n', {}, {},
         "{path}: fetch.allowed_domains entry '*.example.com': write the domain itself "
         "(example.com); it covers every subdomain"),
        ('[fetch]\nblocked_domains = [1]\n', {}, {},
         "{path}: fetch.blocked_domains must be a list of names, not [1]"),
        ("", {"RUNVIL_FETCH_USER_AGENT": "a\x01b"}, {},
         "RUNVIL_FETCH_USER_AGENT must be printable ASCII (an HTTP header value)"),
        ("", {"RUNVIL_FETCH_USER_AGENT": "a" * 1025}, {},
         "RUNVIL_FETCH_USER_AGENT must be at most 1024 characters"),
        ('[fetch]\nuser_agent = "b\u00f6t/1"\n', {}, {},
         "{path}: fetch.user_agent must be printable ASCII (an HTTP header value)"),
        ("", {}, {"user_agent": "  "}, "--user-agent must be a non-empty string, not '  '"),
        ('[fetch]\nprivate_host = ["x"]\n', {}, {},
         "{path}: unknown key fetch.private_host; did you mean fetch.private_hosts?"),
    ],
)
def test_bad_values_name_the_setting_and_where_it_came_from(
    tmp_path: Path, text: str, env: dict[str, str], flags: dict[str, Any], message: str
) -> None:
    path = write(user_config(tmp_path), text)
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, flags, **env)
    assert str(caught.value) == message.format(path=path)


def test_a_bare_string_in_the_file_is_a_list_of_names(tmp_path: Path) -> None:
    write(user_config(tmp_path), '[fetch]\nprivate_hosts = "wiki.corp.example"\n')
    assert load(tmp_path).fetch["private_hosts"] == ("wiki.corp.example",)


def test_the_private_hosts_list_reaches_the_search_provider(tmp_path: Path) -> None:
    write(
        user_config(tmp_path),
        '[search]\nprovider = "searxng"\nurl = "http://searx.lan:8888"\n',
    )
    with pytest.raises(ConfigError) as caught:
        wire(load(tmp_path)).search_provider()
    assert str(caught.value) == (
        "search provider searxng: the SearXNG URL must be an https URL (plain http only for a "
        "private endpoint)"
    )
    provider = wire(load(tmp_path, RUNVIL_FETCH_PRIVATE_HOSTS="searx.lan:8888")).search_provider()
    assert isinstance(provider, SearxngProvider)
    assert provider._egress.private == frozenset({("searx.lan", 8888)})


# --- the command line ---------------------------------------------------------------------


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=request.headers["User-Agent"], content_type="text/plain")

    app = web.Application()
    app.router.add_get("/ua", echo)
    await internet.serve(app)
    return child_env(write_seam(internet, tmp_path), tmp_path)


async def test_user_agent_flag_on_fetch(env: dict[str, str]) -> None:
    code, out, _ = await run_cli("fetch", "--user-agent", "acme/3", "https://example.com/ua",
                                 env=env)
    assert (code, out.endswith("\n\nacme/3\n")) == (0, True)
    code, out, _ = await run_cli("fetch", "https://example.com/ua", env=env)
    assert (code, out.endswith("\n\nharness-webfetch/0.0\n")) == (0, True)


async def test_user_agent_from_the_file(env: dict[str, str], tmp_path: Path) -> None:
    work = tmp_path / "project"
    work.mkdir()
    write(user_config(tmp_path), '[fetch]\nuser_agent = "from-file/1"\n')
    code, out, _ = await run_cli("fetch", "https://example.com/ua", env=env, cwd=work)
    assert (code, out.endswith("\n\nfrom-file/1\n")) == (0, True)


async def test_which_commands_have_which_flags(env: dict[str, str]) -> None:
    for command in ("fetch", "run", "mcp", "config"):
        _, out, _ = await run_cli(command, "--help", env=env)
        assert "--user-agent TEXT" in out, command
    _, out, _ = await run_cli("search", "--help", env=env)
    assert "--user-agent" not in out and "--tools" not in out
    _, out, _ = await run_cli("mcp", "--help", env=env)
    assert "--tools NAMES" in out
    _, out, _ = await run_cli("fetch", "--help", env=env)
    assert "--tools" not in out


async def test_runvil_config_shows_the_network_settings(
    env: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    toml = write(
        user_config(tmp_path),
        '[fetch]\nprivate_hosts = ["wiki.corp.example"]\n[mcp]\ntools = ["web_fetch"]\n',
    )
    code, out, _ = await run_cli("config", "--user-agent", "x/1", env=env, cwd=work)
    assert code == 0
    assert (
        "[fetch]\n"
        'user_agent = "x/1"  # flag\n'
        f'private_hosts = ["wiki.corp.example"]  # file:{toml}\n'
        "continuation = true  # default\n"
        "pdf = true  # default\n"
        "robots = false  # default\n"
        "\n[mcp]\n"
        f'tools = ["web_fetch"]  # file:{toml}\n'
    ) in out
    code, out, _ = await run_cli("config", "--json", env=env, cwd=work)
    data = json.loads(out)
    assert (data["fetch"], data["mcp"]) == (
        {
            "private_hosts": ["wiki.corp.example"],
            "continuation": True,
            "pdf": True,
            "robots": False,
        },
        {"tools": ["web_fetch"]},
    )


# --- the egress proxy ---------------------------------------------------------------------


def test_the_proxy_is_masked_wherever_the_configuration_is_shown(tmp_path: Path) -> None:
    write(user_config(tmp_path),
          '[fetch]\nproxy = "http://alice:pa55word@proxy.corp.example:3128"\n')
    cfg = load(tmp_path)
    assert wire(cfg).policy.proxy == "http://alice:pa55word@proxy.corp.example:3128"
    shown = describe(cfg)
    assert shown["fetch"] == {
        "proxy": "http://********@proxy.corp.example:3128",
        "continuation": True,
        "pdf": True,
        "robots": False,
    }
    assert "pa55word" not in repr(shown) and "alice" not in repr(shown)
    assert "pa55word" not in repr(wire(cfg).policy)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RUNVIL_FETCH_PROXY": "https://alice:pa55word@proxy:3128"},
         'RUNVIL_FETCH_PROXY: the proxy must be an http:// URL with a host '
         '(http://[user:password@]host[:port]), "env" or "none"'),
        ({"RUNVIL_SEARCH_PROXY": "http://alice:pa55word@proxy:3128/x"},
         'RUNVIL_SEARCH_PROXY: the proxy must be an http:// URL with a host '
         '(http://[user:password@]host[:port]), "env" or "none", with no path'),
        ({"RUNVIL_FETCH_PROXY": "env", "HTTPS_PROXY": "socks5://alice:pa55word@proxy:1080"},
         'HTTPS_PROXY: the proxy must be an http:// URL with a host '
         '(http://[user:password@]host[:port]), "env" or "none" (read because a proxy setting '
         'is "env")'),
    ],
)
def test_a_bad_proxy_setting_never_quotes_its_value(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, **env)
    assert str(caught.value) == message


def test_environment_proxies_are_read_only_for_env(tmp_path: Path) -> None:
    cfg = load(tmp_path, HTTPS_PROXY="socks5://nonsense", HTTP_PROXY="::")
    assert wire(cfg).policy.proxy is None


def test_search_takes_the_fetch_proxy_unless_it_has_its_own(tmp_path: Path) -> None:
    proxy = "http://proxy.corp.example:3128"
    inherited = wire(load(tmp_path, RUNVIL_FETCH_PROXY=proxy)).search_provider()
    assert inherited is not None and inherited._egress._proxies is not None  # type: ignore[attr-defined]
    direct = wire(
        load(tmp_path, RUNVIL_FETCH_PROXY=proxy, RUNVIL_SEARCH_PROXY="none")
    ).search_provider()
    assert direct is not None and direct._egress._proxies is None  # type: ignore[attr-defined]
    own = load(tmp_path, RUNVIL_SEARCH_PROXY="http://u:p@search-proxy.example:8080")
    assert wire(own).policy.proxy is None
    provider = wire(own).search_provider()
    assert provider is not None and provider._egress._proxies is not None  # type: ignore[attr-defined]
    assert describe(own)["search"]["proxy"] == "http://********@search-proxy.example:8080"
    none = wire(load(tmp_path)).search_provider()
    assert none is not None and none._egress._proxies is None  # type: ignore[attr-defined]


async def test_runvil_fetch_through_the_configured_proxy(
    internet: FakeInternet, tmp_path: Path
) -> None:
    from tests.faces_helpers import hello_text, site_app
    from tests.fixtures.proxy import ConnectProxy

    await internet.serve(site_app())
    proxy = await ConnectProxy(internet, authorization="Basic YWxpY2U6cGE1NXdvcmQ=").start()
    try:
        env = child_env(write_seam(internet, tmp_path), tmp_path)
        work = tmp_path / "project"
        work.mkdir()
        write(user_config(tmp_path),
              f'[fetch]\nproxy = "http://alice:pa55word@127.0.0.1:{proxy.port}"\n')
        assert await run_cli("fetch", "https://example.com/hello.txt", env=env, cwd=work) == (
            0, hello_text() + "\n", "",
        )
        assert proxy.targets == ["93.184.216.34:443"]
        code, out, err = await run_cli("config", env=env, cwd=work)
        assert code == 0 and "pa55word" not in out + err and "alice" not in out + err
        assert f'proxy = "http://********@127.0.0.1:{proxy.port}"' in out
        proxy.refuse = 403
        proxy.authorization = None
        code, out, err = await run_cli("fetch", "https://example.com/hello.txt", env=env,
                                       cwd=work)
        assert (code, out, err) == (
            1,
            "fetch failed for https://example.com/hello.txt: the network's proxy refused the "
            "connection; try a different URL\n",
            "",
        )
    finally:
        await proxy.stop()


async def test_user_agent_flag_on_mcp(env: dict[str, str]) -> None:
    from mcp import Client

    from runvil import unwrap
    from tests.faces_helpers import start_mcp_http, stop

    proc, url = await start_mcp_http(env, "--user-agent", "mcp-agent/7")
    try:
        async with Client(url, cache=None) as client:
            page = await client.call_tool("web_fetch", {"url": "https://example.com/ua"})
    finally:
        await stop(proc)
    assert unwrap(page.content[0].text).endswith("\n\nmcp-agent/7")


async def test_user_agent_flag_on_run(env: dict[str, str], tmp_path: Path) -> None:
    from runvil import unwrap
    from tests.test_cli_run import FETCH_PAGE

    file = tmp_path / "ua.md"
    file.write_text(FETCH_PAGE.replace("{url}", "https://example.com/ua"), encoding="utf-8")
    code, out, err = await run_cli("run", str(file), "--user-agent", "run-agent/2", env=env)
    assert (code, err) == (0, "")
    assert unwrap(out.removesuffix("\n")).endswith("\n\nrun-agent/2")
