"""DNS-rebinding protection on every bind, the warning for a bind that is not loopback, and the
budget on request bodies the HTTP server holds at once."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from mcp import Client

from runvil import unwrap
from runvil._faces.mcp_http import BUSY, Audience, HttpGuard, check_allowed_hosts
from tests.faces_helpers import REPO, RUNVIL, child_env, hello_text, site_app, stop, write_seam
from tests.fixtures.internet import FakeInternet

INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
})
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


# -- who a bind answers to --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "bound", "allowed", "refused"),
    [
        ("127.0.0.2", "127.0.0.2", ["127.0.0.2:8123"],
         ["evil.example:8123", "localhost:8123", "127.0.0.1:8123", "127.0.0.2:8124",
          "127.0.0.2", "127.0.0.2:", "[::1]:8123"]),
        ("127.0.0.1", "127.0.0.1", ["127.0.0.1:8123", "localhost:8123", "LOCALHOST:8123"],
         ["evil.example:8123", "127.0.0.1:1", "[::1]:8123", "localhost.:8123",
          "127.0.0.1:8123/x", "user@127.0.0.1:8123"]),
        ("localhost", "127.0.0.1", ["localhost:8123", "127.0.0.1:8123"], ["evil.example:8123"]),
        ("::1", "::1", ["[::1]:8123", "[0:0::1]:8123", "localhost:8123"],
         ["::1:8123", "[::1]:9", "127.0.0.1:8123", "evil.example:8123", "[::1]x"]),
        ("127.9.8.7", "127.9.8.7", ["127.9.8.7:8123"], ["localhost:8123", "evil.example:8123"]),
        ("192.0.2.10", "192.0.2.10", ["192.0.2.10:8123"], ["evil.example:8123"]),
        ("mcp.internal", "192.0.2.10", ["mcp.internal:8123", "MCP.internal:8123",
                                        "192.0.2.10:8123"], ["evil.example:8123"]),
        ("0.0.0.0", "0.0.0.0", ["127.0.0.1:8123", "192.0.2.10:9000", "[::1]:1", "localhost:80",
                                "10.1.2.3"], ["evil.example:8123", "mcp.internal:8123", ""]),
        ("::", "::", ["[fe80::1]:8123", "192.0.2.10:8123"], ["evil.example:8123"]),
    ],
)
def test_each_bind_answers_only_to_its_own_address_and_port(
    given: str, bound: str, allowed: list[str], refused: list[str]
) -> None:
    audience = Audience.for_bind(given, bound, 8123)
    assert [h for h in allowed if not audience.allows_host(h)] == []
    assert [h for h in refused if audience.allows_host(h)] == []
    for host in allowed:
        assert audience.allows_origin(f"http://{host}")
        assert not audience.allows_origin(f"https://{host}")
    assert not audience.allows_origin("http://evil.example:8123")
    assert not audience.allows_origin("null")


def test_port_80_may_go_unnamed() -> None:
    audience = Audience.for_bind("127.0.0.2", "127.0.0.2", 80)
    assert audience.allows_host("127.0.0.2") and audience.allows_host("127.0.0.2:80")
    assert not audience.allows_host("127.0.0.2:8080")


@pytest.mark.parametrize(("given", "bound"), [("0.0.0.0", "0.0.0.0"), ("127.0.0.1", "127.0.0.1")])
def test_the_operators_names_are_answered_on_any_port(given: str, bound: str) -> None:
    names = check_allowed_hosts(
        ("Runvil.Tools.svc.cluster.local.", "*.tools.svc"), "--allow-host"
    )
    assert names == ("runvil.tools.svc.cluster.local", "*.tools.svc")
    audience = Audience.for_bind(given, bound, 8765, names)
    allowed = [
        "runvil.tools.svc.cluster.local:8765", "RUNVIL.tools.svc.cluster.local",
        "runvil.tools.svc.cluster.local.:80", "a.tools.svc:8765", "b.a.tools.svc", "localhost:8765",
        "127.0.0.1:8765",
    ]
    refused = [
        "tools.svc:8765", "xtools.svc", "evil.example:8765", "tools.svc.evil.example",
        "runvil.tools.svc.cluster.local.evil.example", "cluster.local", "",
    ]
    assert [h for h in allowed if not audience.allows_host(h)] == []
    assert [h for h in refused if audience.allows_host(h)] == []
    assert audience.allows_origin("http://a.tools.svc:8765")
    assert not audience.allows_origin("http://evil.example:8765")


@pytest.mark.parametrize("entry", [
    "10.0.0.1", "[::1]", "runvil.svc:8765", "*", "*.svc", "a..b", "-a.svc", "a_b.svc", "a.*.svc",
    "http://a.svc", "a" * 64 + ".svc",
])
def test_an_allowed_host_is_a_name_or_a_suffix(entry: str) -> None:
    with pytest.raises(ValueError) as info:
        check_allowed_hosts((entry,), "RUNVIL_MCP_ALLOWED_HOSTS")
    assert str(info.value) == (
        f"RUNVIL_MCP_ALLOWED_HOSTS: {entry!r} is not a host name or *.suffix "
        "(no port, no IP address)"
    )


# -- the body budget --------------------------------------------------------------------------


async def test_request_bodies_held_at_once_are_bounded() -> None:
    release = asyncio.Event()
    seen: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message["body"]
            if not message["more_body"]:
                break
        seen.append(body)
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = HttpGuard(app, Audience.for_bind("127.0.0.1", "127.0.0.1", 9), max_body=100,
                      budget=150)

    async def request(body: bytes, declared: bool = True) -> tuple[int, bytes]:
        headers = [(b"host", b"127.0.0.1:9")]
        if declared:
            headers.append((b"content-length", str(len(body)).encode()))
        chunks = [body[:40], body[40:]]
        sent: list[Any] = []

        async def receive() -> Any:
            chunk = chunks.pop(0) if chunks else b""
            return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        await guard(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    first = asyncio.ensure_future(request(b"a" * 100))
    while guard.held < 100:
        await asyncio.sleep(0)
    assert await request(b"b" * 60) == (503, BUSY.encode())
    assert await request(b"c" * 101) == (413, b"Request body too large")
    assert await request(b"d" * 101, declared=False) == (413, b"Request body too large")
    assert guard.held == 100
    release.set()
    assert await first == (200, b"ok")
    assert await request(b"e" * 100) == (200, b"ok")
    assert guard.held == 0
    assert seen == [b"a" * 100, b"e" * 100]
    assert BUSY == (
        "runvil mcp is busy: the requests it is answering hold 64 MiB of request bodies; "
        "try again shortly"
    )


# -- runvil mcp --http on other binds ---------------------------------------------------------


async def start(env: dict[str, str], bind: str) -> tuple[asyncio.subprocess.Process, str, str]:
    """``runvil mcp --http BIND``: the process, its URL, and what it said before serving."""
    proc = await asyncio.create_subprocess_exec(
        *RUNVIL, "mcp", "--http", bind,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(REPO),
    )
    assert proc.stderr is not None
    said: list[str] = []
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode()
        if not line:
            raise AssertionError(f"runvil mcp --http {bind} exited: {said}")
        if line.startswith("runvil mcp: serving "):
            return proc, line[len("runvil mcp: serving "):].strip(), "".join(said)
        said.append(line)


async def post(url: str, **headers: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.post(
        url, data=INITIALIZE, headers={**HEADERS, **headers}
    ) as response:
        return response.status, await response.text()


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    await internet.serve(site_app())
    return child_env(write_seam(internet, tmp_path), tmp_path)


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    ("bind", "address"),
    [
        ("127.0.0.2:0", "127.0.0.2"),
        ("127.0.0.1:0", "127.0.0.1"),
        pytest.param("[::1]:0", "[::1]", marks=pytest.mark.skipif(
            not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback")),
    ],
)
async def test_a_loopback_bind_refuses_a_rebound_name_and_warns_of_nothing(
    env: dict[str, str], bind: str, address: str
) -> None:
    proc, url, said = await start(env, bind)
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        evil_host = await post(url, Host=f"evil.example:{port}")
        evil_origin = await post(url, Origin=f"http://evil.example:{port}")
        other_port = await post(url, Host=f"{address}:1")
        own = await post(url, Origin=f"http://{address}:{port}")
        async with Client(url, mode="legacy", cache=None) as client:
            page = await client.call_tool("web_fetch", {"url": "https://example.com/hello.txt"})
    finally:
        await stop(proc)
    assert url == f"http://{address}:{port}/mcp"
    assert said == ""
    assert evil_host == (421, "Invalid Host header")
    assert evil_origin == (403, "Invalid Origin header")
    assert other_port == (421, "Invalid Host header")
    assert own[0] == 200
    assert unwrap(page.content[0].text) == hello_text()


async def test_a_wildcard_bind_warns_and_answers_only_ip_literals_and_localhost(
    env: dict[str, str]
) -> None:
    proc, url, said = await start(env, "0.0.0.0:0")
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        local = f"http://127.0.0.1:{port}/mcp"
        evil_host = await post(local, Host=f"evil.example:{port}")
        evil_origin = await post(local, Origin=f"http://evil.example:{port}")
        by_ip = await post(local)
        by_name = await post(local, Host=f"localhost:{port}")
    finally:
        await stop(proc)
    assert said == (
        "runvil mcp: warning: 0.0.0.0 is not a loopback address; anyone who can reach it can "
        "make this machine fetch and search for them\n"
    )
    assert evil_host == (421, "Invalid Host header")
    assert evil_origin == (403, "Invalid Origin header")
    assert by_ip[0] == 200 and by_name[0] == 200


async def test_a_wildcard_bind_answers_the_names_the_operator_allows(
    env: dict[str, str]
) -> None:
    allowed = {**env, "RUNVIL_MCP_ALLOWED_HOSTS": "runvil.tools.svc.cluster.local,*.tools.svc"}
    proc, url, _ = await start(allowed, "0.0.0.0:0")
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        local = f"http://127.0.0.1:{port}/mcp"
        service = await post(local, Host="runvil.tools.svc.cluster.local:8765")
        short = await post(local, Host=f"runvil.tools.svc:{port}",
                           Origin="http://runvil.tools.svc")
        evil = await post(local, Host=f"evil.example:{port}")
    finally:
        await stop(proc)
    assert (service[0], short[0]) == (200, 200)
    assert evil == (421, "Invalid Host header")
