"""Which tools ``runvil mcp`` serves (``--tools``, ``[mcp] tools``, no search provider) and the
fetch policy its ``instructions`` state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from runvil import unwrap
from runvil._faces.config import Config, ConfigError, SearchSettings, load_config
from runvil._faces.mcp import (
    CONTINUATION_INSTRUCTIONS,
    WebToolServer,
    fetch_policy_paragraph,
    served_tools,
)
from runvil._faces.mcp import instructions as mcp_instructions
from runvil._faces.wiring import MCP_FORMS, wire
from runvil.web import FetchPolicy
from tests.faces_helpers import (
    REPO,
    RUNVIL,
    child_env,
    hello_text,
    run_cli,
    serve_gateway,
    site_app,
    start_mcp_http,
    stop,
    user_config,
    write_seam,
)
from tests.fixtures.internet import FakeInternet
from tests.test_mcp_server import ScriptedProvider

POLICY = FetchPolicy(timeout=2.0, connect_timeout=0.5)


def config(**kw: Any) -> Config:
    kw.setdefault("search", SearchSettings("none"))
    return Config(**kw)


async def listed_names(server: WebToolServer) -> list[str]:
    async with Client(server.server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_without_a_provider_and_a_list_only_web_fetch_is_served(
    internet: FakeInternet, capsys: pytest.CaptureFixture[str]
) -> None:
    await internet.serve(site_app())
    wiring = wire(config(), network=internet.network(), policy=POLICY)
    tools = served_tools(wiring)
    assert tools == ("fetch",)
    assert capsys.readouterr().err == (
        "runvil mcp: no search provider is configured (search.provider is none); "
        "serving web_fetch only\n"
    )
    async with wiring.host(MCP_FORMS, tools=tools) as host:
        assert host.packs["web"].reason is None
        server = WebToolServer(host, policy=wiring.policy)
        assert await listed_names(server) == ["web_fetch"]
        async with Client(server.server) as client:
            page = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
            assert unwrap(page.content[0].text) == hello_text()
            with pytest.raises(MCPError) as caught:
                await client.call_tool("web_search", {"query": "rust"})
            assert caught.value.message == "unknown tool: web_search"


async def test_a_tool_list_narrows_the_server(internet: FakeInternet) -> None:
    settings = SearchSettings("duckduckgo")
    for tools, names in (
        (("web_fetch",), ["web_fetch"]),
        (("web_search",), ["web_search"]),
        (("web_search", "web_fetch"), ["web_fetch", "web_search"]),
    ):
        wiring = wire(
            config(search=settings, mcp_tools=tools), network=internet.network(),
            policy=POLICY, provider=ScriptedProvider(),
        )
        async with wiring.host(MCP_FORMS, tools=served_tools(wiring)) as host:
            assert await listed_names(WebToolServer(host)) == names


def test_web_search_without_a_provider_is_a_configuration_error(tmp_path: Path) -> None:
    cfg = load_config(
        {"mcp_tools": "web_search", "search_provider": "none"},
        env={"HOME": str(tmp_path)}, cwd=tmp_path,
    )
    with pytest.raises(ConfigError) as caught:
        served_tools(wire(cfg))
    assert str(caught.value) == (
        "--tools names web_search, but no search provider is configured "
        "(search.provider is none)"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("web_fetch,web_serch", "--tools: unknown tool 'web_serch' (known: web_fetch, web_search)"),
        (",", "--tools must name at least one of web_fetch, web_search"),
    ],
)
def test_the_tool_list_is_checked(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config({"mcp_tools": value}, env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert str(caught.value) == message


def test_the_tool_list_from_the_file_and_the_environment(tmp_path: Path) -> None:
    (user_config(tmp_path)).write_text('[mcp]\ntools = ["web_fetch"]\n', encoding="utf-8")
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert cfg.mcp_tools == ("web_fetch",)
    assert cfg.sources["mcp.tools"] == f"file:{user_config(tmp_path)}"
    other = tmp_path / "elsewhere"
    other.mkdir()
    env = {"HOME": str(tmp_path), "RUNVIL_MCP_TOOLS": "web_search web_fetch"}
    assert load_config(env=env, cwd=other).mcp_tools == ("web_search", "web_fetch")


# --- the instructions ---------------------------------------------------------------------


async def test_the_instructions_state_the_operators_policy(internet: FakeInternet) -> None:
    policy = FetchPolicy(
        max_chars=12_000,
        private_hosts=("wiki.corp.example", "*.dev.corp.example", "localhost:8080"),
        allowed_domains=("example.com", "corp.example"),
        blocked_domains=("ads.example.com",),
    )
    wiring = wire(config(), network=internet.network(), policy=policy)
    async with (
        wiring.host(MCP_FORMS, tools=("fetch",)) as host,
        Client(WebToolServer(host, policy=policy).server) as client,
    ):
        text = client.instructions
    assert text is not None
    assert text.split("\n\n")[1] == (
        "web_fetch reads the public web over https only: a URL with credentials, an IP address "
        "as its host, a port other than 443 or 80, or a host that resolves to a private or "
        "internal address is refused. The operator also allows these hosts of its own network, "
        "over http or https: wiki.corp.example, *.dev.corp.example, localhost:8080. Only hosts "
        "in these domains are fetched: example.com, corp.example. Hosts in these domains are "
        "never fetched: ads.example.com. A page comes back after a three-line header (url: the "
        "final URL after redirects; truncated: true or false; extraction: readability, raw-html "
        "or plain) and a blank line, cut at 12,000 characters (max_chars asks for fewer). HTML "
        "is reduced to its main content as markdown (raw: true converts the whole page); JSON, "
        "XML and plain text come back verbatim. A refusal or a failure comes back as one line "
        "of text instead of a page: read it and try a different URL rather than the same one "
        "again."
    )


async def test_no_fetch_no_fetch_paragraph(internet: FakeInternet) -> None:
    wiring = wire(
        config(search=SearchSettings("duckduckgo"), mcp_tools=("web_search",)),
        network=internet.network(), provider=ScriptedProvider(),
    )
    async with (
        wiring.host(MCP_FORMS, tools=served_tools(wiring)) as host,
        Client(WebToolServer(host).server) as client,
    ):
        text = client.instructions
    assert text is not None and "\n\n" not in text


# --- the command line ---------------------------------------------------------------------


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    await internet.serve(site_app())
    await serve_gateway(internet)
    return child_env(write_seam(internet, tmp_path), tmp_path)


async def test_runvil_mcp_with_no_provider_serves_fetch_and_says_why(
    env: dict[str, str],
) -> None:
    proc, url = await start_mcp_http(env, "--search-provider", "none")
    try:
        async with Client(url, cache=None) as client:
            tools = (await client.list_tools()).tools
            instructions = client.instructions
    finally:
        await stop(proc)
    assert [tool.name for tool in tools] == ["web_fetch"]
    # The face's policy: the seeds' limits with continuation and PDFs on (its defaults).
    assert instructions == "\n\n".join([
        mcp_instructions(True),
        fetch_policy_paragraph(FetchPolicy(continuation=True, pdf=True)),
        CONTINUATION_INSTRUCTIONS,
    ])


async def test_runvil_mcp_tools_over_stdio(env: dict[str, str]) -> None:
    params = StdioServerParameters(
        command=RUNVIL[0], args=[*RUNVIL[1:], "mcp", "--tools", "web_search"], env=env,
        cwd=str(REPO),
    )
    async with Client(params, cache=None) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ["web_search"]


async def test_runvil_mcp_refuses_web_search_without_a_provider(env: dict[str, str]) -> None:
    code, out, err = await run_cli(
        "mcp", "--tools", "web_fetch,web_search", "--search-provider", "none", env=env
    )
    assert (code, out, err) == (
        2, "",
        "runvil: --tools names web_search, but no search provider is configured "
        "(search.provider is none)\n",
    )


async def test_the_note_on_stderr(env: dict[str, str]) -> None:
    """Over stdio the server's stderr is the operator's: the note is the first thing there."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        *RUNVIL, "mcp", "--search-provider", "none",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(REPO),
    )
    assert proc.stderr is not None and proc.stdin is not None
    line = await asyncio.wait_for(proc.stderr.readline(), 30)
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 30)
    assert line.decode() == (
        "runvil mcp: no search provider is configured (search.provider is none); "
        "serving web_fetch only\n"
    )


def test_the_web_pack_narrowed_to_its_fetch_needs_no_provider() -> None:
    from runvil import Host
    from runvil.web import web_pack

    narrowed = Host(packs=[web_pack(provider=None, tools=("fetch",))])
    assert list(narrowed.tools) == ["web/fetch"]
    assert narrowed.packs["web"].reason is None
    whole = Host(packs=[web_pack(provider=None)])
    assert whole.packs["web"].reason == (
        "web needs runvil/search-provider, and this host provides none"
    )
    with pytest.raises(ValueError):
        web_pack(provider=None, tools=("crawl",))
    with pytest.raises(ValueError):
        web_pack(provider=None, tools=())
