"""``runvil mcp`` as a child process, driven by the SDK's own client over stdio and streamable
HTTP (both protocol eras), reaching the fake internet through the test launcher."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from aiohttp import web
from mcp import Client, StdioServerParameters

from runvil import unwrap
from tests.faces_helpers import (
    GATEWAY_KEY,
    REPO,
    RUNVIL,
    child_env,
    hello_text,
    serve_gateway,
    site_app,
    start_mcp_http,
    stop,
    write_seam,
)
from tests.fixtures.internet import FakeInternet
from tests.fixtures.launch import SPEC_VAR

ENVELOPED = re.compile(r"<untrusted_input_([0-9a-f]{16})>\n(.*)\n</untrusted_input_\1>", re.S)
SEARCH_TEXT = (
    '{"query":"rust","results":[{"title":"Result for rust","url":"https://e.com/r",'
    '"description":"D"}]}'
)


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    """The fake site at example.com, the Gateway at gw.example, and a child environment."""
    await internet.serve(site_app())
    await serve_gateway(internet)
    return child_env(write_seam(internet, tmp_path), tmp_path)


def stdio(env: dict[str, str], *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=RUNVIL[0], args=[*RUNVIL[1:], "mcp", *extra], env=env, cwd=str(REPO)
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_lists_and_calls_both_tools(env: dict[str, str], mode: str) -> None:
    async with Client(stdio(env), mode=mode, cache=None) as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
        page = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
        found = await client.call_tool("web_search", {"query": "rust"})
        hard = await client.call_tool("web_fetch", {"url": "https://user:pw@example.com/"})
    assert [t.name for t in tools] == ["web_fetch", "web_search"]
    assert tools[0].input_schema["properties"]["url"] == {
        "type": "string", "description": "The URL to fetch.",
    }
    first = ENVELOPED.fullmatch(page.content[0].text)
    second = ENVELOPED.fullmatch(found.content[0].text)
    assert first is not None and second is not None
    assert first.group(2) == hello_text()
    assert second.group(2) == SEARCH_TEXT
    assert first.group(1) == second.group(1), "one nonce per session"
    assert (hard.is_error, hard.content[0].text) == (True, "url must not contain userinfo")


async def test_stdio_no_envelope_and_a_fresh_nonce_per_process(env: dict[str, str]) -> None:
    async with Client(stdio(env, "--no-envelope"), cache=None) as client:
        bare = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
    nonces = []
    for _ in range(2):
        async with Client(stdio(env), cache=None) as client:
            page = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
        match = ENVELOPED.fullmatch(page.content[0].text)
        assert match is not None
        nonces.append(match.group(1))
    assert bare.content[0].text == hello_text()
    assert nonces[0] != nonces[1]


async def test_http_legacy_session_keeps_its_nonce(env: dict[str, str]) -> None:
    proc, url = await start_mcp_http(env)
    try:
        async with Client(url, mode="legacy", cache=None) as client:
            tools = (await client.list_tools()).tools
            first = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
            second = await client.call_tool("web_search", {"query": "rust"})
            hard = await client.call_tool("web_search", {"query": "rust", "count": 0})
        async with Client(url, mode="legacy", cache=None) as other:
            third = await other.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
    finally:
        await stop(proc)
    assert [t.name for t in tools] == ["web_fetch", "web_search"]
    a, b, c = (ENVELOPED.fullmatch(r.content[0].text) for r in (first, second, third))
    assert a is not None and b is not None and c is not None
    assert (a.group(2), b.group(2), c.group(2)) == (hello_text(), SEARCH_TEXT, hello_text())
    assert a.group(1) == b.group(1), "one nonce per MCP session"
    assert a.group(1) != c.group(1), "another session, another nonce"
    assert (hard.is_error, hard.content[0].text) == (
        True, "web_search: count must be between 1 and 20",
    )


async def test_http_modern_era_and_fifty_concurrent_calls(env: dict[str, str]) -> None:
    proc, url = await start_mcp_http(env)
    try:
        async with Client(url, cache=None) as client:
            results = await asyncio.gather(*(
                client.call_tool("web_fetch", {"url": f"https://example.com/n/{i}"})
                for i in range(50)
            ))
            hard = await client.call_tool("web_fetch", {"url": "https://example.com:8080/"})
    finally:
        await stop(proc)
    texts = [unwrap(r.content[0].text) for r in results]
    matches = [ENVELOPED.fullmatch(r.content[0].text) for r in results]
    nonces = {m.group(1) for m in matches if m is not None}
    assert len(nonces) == 50, "a sessionless 2026-07-28 exchange is a run of its own"
    assert texts == [
        f"url: https://example.com/n/{i}\ntruncated: false\nextraction: plain\n\npage {i}"
        for i in range(50)
    ]
    assert all(r.is_error is False for r in results)
    assert (hard.is_error, hard.content[0].text) == (True, "port not allowed: 8080")


async def test_http_server_never_reaches_anything_unrouted(
    internet: FakeInternet, env: dict[str, str]
) -> None:
    # An approved address with no route goes to the canary, which fails the test if reached;
    # a blocked one is refused before any dial.
    internet.dns["rebind.example"] = ["127.0.0.1"]
    seam = Path(env[SPEC_VAR])
    write_seam(internet, seam.parent)
    proc, url = await start_mcp_http(env)
    try:
        async with Client(url, cache=None) as client:
            blocked = await client.call_tool("web_fetch", {"url": "https://rebind.example/"})
    finally:
        await stop(proc)
    assert blocked.is_error is True
    assert unwrap(blocked.content[0].text) == "host rebind.example has no allowed address"


async def test_the_gateway_key_goes_only_to_the_gateway(
    internet: FakeInternet, tmp_path: Path
) -> None:
    seen: list[dict[str, str]] = []

    @web.middleware
    async def record(request: web.Request, handler: web.RequestHandler) -> web.StreamResponse:
        seen.append(dict(request.headers))
        return await handler(request)

    site = site_app()
    site.middlewares.append(record)
    await internet.serve(site)
    await serve_gateway(internet)
    env = child_env(write_seam(internet, tmp_path), tmp_path)
    async with Client(stdio(env), cache=None) as client:
        await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
    assert seen and all(GATEWAY_KEY not in value for h in seen for value in h.values())


async def test_stdio_flags_reach_the_host(env: dict[str, str]) -> None:
    async with Client(stdio(env, "--approval", "deny"), cache=None) as client:
        refused = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
    async with Client(stdio(env, "--no-web"), cache=None) as client:
        listed = (await client.list_tools()).tools
    assert (refused.is_error, refused.content[0].text) == (
        True, "web_fetch: the user refused this call; do not retry it",
    )
    assert listed == []


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_cancelled_call_closes_the_upstream_connection(
    internet: FakeInternet, tmp_path: Path, mode: str
) -> None:
    started, ended = asyncio.Event(), asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        started.set()
        try:
            for _ in range(300):  # 30 s unless the fetch goes away
                await asyncio.sleep(0.1)
                if request.transport is None or request.transport.is_closing():
                    break
                await response.write(b".")
        finally:
            ended.set()
        return response

    app = web.Application()
    app.router.add_get("/slow", slow)
    await internet.serve(app)
    await serve_gateway(internet)
    # The fetch's own deadline (20 s) is far beyond the 10 s this test waits for the close.
    seam = write_seam(internet, tmp_path, {"timeout": 20.0, "connect_timeout": 1.0})
    proc, url = await start_mcp_http(child_env(seam, tmp_path))
    try:
        async with Client(url, mode=mode, cache=None) as client:  # type: ignore[arg-type]
            call = asyncio.ensure_future(
                client.call_tool("web_fetch", {"url": "https://example.com/slow"})
            )
            await asyncio.wait_for(started.wait(), 30)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await asyncio.wait_for(ended.wait(), 10)
    finally:
        await stop(proc)
