"""What a hostile MCP client can make ``runvil mcp`` spend: the figures behind docs/reliability.md.

Starts the fault server and ``runvil mcp`` (through the test launcher, which hands it a fake
network reaching the fault server, default fetch policy) as child processes, then measures:

* ``long-urls``: the server's resident memory before and after ``--calls`` (default 128)
  ``web_fetch`` calls over streamable HTTP, each with a distinct URL of ``--url-chars``
  characters (default 4,000,000), sent one after another; and what the first call answered.
* ``worst-urls``: the same with URLs just under the cap (8,192 characters, every one a
  four-byte character, so the WHATWG serialisation percent-encodes each into 12), which is the
  most a URL can still make the fetch's URL library hold per entry.
* ``stdio-frames``: one large stdio frame (``--frame-mb`` MB of JSON with no newline, then a
  newline), then a ``ping``: the answer to each and the server's peak memory.
* ``concurrent``: ``--burst`` (default 300) calls to a backend that answers after one second,
  all at once over stdio: how many ran, how many were refused, and the peak memory.
* ``sessions``: ``--sessions`` (default 10,000) ``initialize`` requests over streamable HTTP,
  16 at a time, none ever closed, from ``--peers`` client addresses (default 1; more are
  127.0.0.2, 127.0.0.3, ... as source addresses on loopback): the answers, the sessions the
  server keeps, its memory, whether a newcomer is then served and whether the first session
  was ended; ``--max-sessions``/``--per-peer`` set the server's limits (past both, the memory
  divided by the sessions is what one session costs).

Usage (never part of the test suite)::

    python -m bench.hostile_mcp long-urls
    python -m bench.hostile_mcp worst-urls
    python -m bench.hostile_mcp stdio-frames
    python -m bench.hostile_mcp concurrent
    python -m bench.hostile_mcp sessions [--peers 64] [--max-sessions N --per-peer N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trustme
from bench.load_mcp import server_memory_mb, write_seam
from mcp import Client
from tests.fixtures.faults import FAULT_HOST, FaultServer
from tests.fixtures.launch import LAUNCHER, SPEC_VAR

REPO = Path(__file__).resolve().parents[1]


def _env(seam: Path, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        SPEC_VAR: str(seam),
        "PYTHONUNBUFFERED": "1",
    }


async def _start_http(
    seam: Path, home: Path, extra_env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(LAUNCHER), "mcp", "--http", "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env={**_env(seam, home), **(extra_env or {})},
        cwd=str(REPO),
    )
    assert proc.stderr is not None
    prefix = "runvil mcp: serving "
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
        if not line:
            raise RuntimeError("runvil mcp --http exited before serving")
        if line.startswith(prefix):
            return proc, line[len(prefix) :].strip()


async def _start_stdio(seam: Path, home: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, str(LAUNCHER), "mcp",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=_env(seam, home), cwd=str(REPO),
        limit=64 * 1024 * 1024,
    )


async def long_urls(url: str, pid: int, calls: int, chars: int, *, astral: bool) -> dict[str, Any]:
    await asyncio.sleep(0.5)
    before, _ = server_memory_mb(pid)
    first: Any = None
    started = time.monotonic()
    async with Client(url, cache=None) as client:
        for i in range(calls):
            head = f"https://{FAULT_HOST}/ok?n={i}&q="
            fill = "\U0001f600" if astral else "a"
            result = await client.call_tool(
                "web_fetch", {"url": head + fill * (chars - len(head))}
            )
            if first is None:
                text = result.content[0].text  # type: ignore[union-attr]
                first = {"is_error": result.is_error, "text": text[:200]}
    wall = time.monotonic() - started
    await asyncio.sleep(0.5)
    after, peak = server_memory_mb(pid)
    return {
        "calls": calls,
        "url_chars": chars,
        "first_answer": first,
        "wall_s": round(wall, 1),
        "server_rss_before_mb": round(before, 1),
        "server_rss_after_mb": round(after, 1),
        "server_peak_rss_mb": round(peak, 1),
    }


async def _exchange(proc: asyncio.subprocess.Process, frame: bytes, wait: float) -> str | None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame)
    await proc.stdin.drain()
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), wait)
    except TimeoutError:
        return None
    return line.decode("utf-8", "replace").strip()


async def _initialise(proc: asyncio.subprocess.Process) -> None:
    hello = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}},
    }
    await _exchange(proc, json.dumps(hello).encode() + b"\n", 30)
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    await proc.stdin.drain()


async def stdio_frames(seam: Path, home: Path, megabytes: int) -> dict[str, Any]:
    proc = await _start_stdio(seam, home)
    try:
        await _initialise(proc)
        await asyncio.sleep(0.5)
        before, _ = server_memory_mb(proc.pid)
        url = "https://faults.example/ok?q=" + "a" * (megabytes * 1_000_000)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "web_fetch", "arguments": {"url": url}}}
        started = time.monotonic()
        big = await _exchange(proc, json.dumps(call).encode() + b"\n", 60)
        big_s = time.monotonic() - started
        bad = await _exchange(proc, b'{"jsonrpc": "2.0", "id": 8, "method"\n', 5)
        ping = await _exchange(proc, b'{"jsonrpc":"2.0","id":9,"method":"ping"}\n', 5)
        after, peak = server_memory_mb(proc.pid)
    finally:
        proc.kill()
        await proc.wait()
    return {
        "frame_mb": megabytes,
        "answer_to_large_frame": None if big is None else big[:300],
        "large_frame_answered_in_s": round(big_s, 2),
        "answer_to_malformed_frame": bad,
        "answer_to_ping_after": ping,
        "server_rss_before_mb": round(before, 1),
        "server_rss_after_mb": round(after, 1),
        "server_peak_rss_mb": round(peak, 1),
    }


async def concurrent(seam: Path, home: Path, burst: int) -> dict[str, Any]:
    proc = await _start_stdio(seam, home)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        await _initialise(proc)
        await asyncio.sleep(0.5)
        before, _ = server_memory_mb(proc.pid)
        frames = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                        "params": {"name": "web_fetch",
                                   "arguments": {"url": f"https://{FAULT_HOST}/delay/{i}"}}}
                       ).encode() + b"\n"
            for i in range(burst)
        )
        started = time.monotonic()
        proc.stdin.write(frames)
        await proc.stdin.drain()
        answers: dict[str, int] = {}
        for _ in range(burst):
            line = await asyncio.wait_for(proc.stdout.readline(), 120)
            message = json.loads(line)
            result = message.get("result", {})
            text = result.get("content", [{}])[0].get("text", "")
            key = "refused" if result.get("isError") else "page" if "fault server ok" in text else (
                "other: " + text[:120])
            answers[key] = answers.get(key, 0) + 1
        wall = time.monotonic() - started
        after, peak = server_memory_mb(proc.pid)
    finally:
        proc.kill()
        await proc.wait()
    return {
        "calls": burst,
        "answers": answers,
        "wall_s": round(wall, 1),
        "server_rss_before_mb": round(before, 1),
        "server_rss_after_mb": round(after, 1),
        "server_peak_rss_mb": round(peak, 1),
    }


_INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "flood", "version": "0"}},
})
_HTTP_HEADERS = {
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
}


async def sessions(url: str, pid: int, count: int, peers: int) -> dict[str, Any]:
    """``count`` initializes never closed, from ``peers`` source addresses, then a newcomer."""
    import aiohttp

    host = url.split("//", 1)[1].split("/", 1)[0]
    headers = {**_HTTP_HEADERS, "Host": host}
    clients = [
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(
            local_addr=(f"127.0.0.{1 + i}", 0), limit=16))
        for i in range(peers)
    ]
    statuses: dict[int, int] = {}
    ids: list[str] = []
    rss_before, _ = server_memory_mb(pid)
    started = time.monotonic()
    try:
        queue = iter(range(count))

        async def worker() -> None:
            for n in queue:
                client = clients[n % peers]
                async with client.post(url, data=_INITIALIZE, headers=headers) as response:
                    await response.read()
                    statuses[response.status] = statuses.get(response.status, 0) + 1
                    if response.status == 200:
                        ids.append(response.headers["mcp-session-id"])

        await asyncio.gather(*(worker() for _ in range(16)))
        flood_s = time.monotonic() - started
        rss_after, peak = server_memory_mb(pid)
        t0 = time.monotonic()
        async with aiohttp.ClientSession() as newcomer_client:
            async with newcomer_client.post(url, data=_INITIALIZE, headers=headers) as response:
                newcomer_status = response.status
                newcomer = response.headers.get("mcp-session-id", "")
                await response.read()
            newcomer_s = time.monotonic() - t0
            ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            session_headers = {**headers, "Mcp-Protocol-Version": "2025-06-18"}
            async with newcomer_client.post(
                url, data=ping, headers={**session_headers, "Mcp-Session-Id": newcomer}
            ) as response:
                newcomer_ping = response.status
            async with newcomer_client.post(
                url, data=ping, headers={**session_headers, "Mcp-Session-Id": ids[0]}
            ) as response:
                first_ping = response.status
    finally:
        for client in clients:
            await client.close()
    return {
        "initializes": count,
        "peers": peers,
        "answers": {str(k): v for k, v in sorted(statuses.items())},
        "flood_s": round(flood_s, 1),
        "server_rss_mb_before": round(rss_before, 1),
        "server_rss_mb_after": round(rss_after, 1),
        "server_peak_rss_mb": round(peak, 1),
        "kb_per_initialize": round((rss_after - rss_before) * 1024 / count, 2),
        "newcomer_status": newcomer_status,
        "newcomer_s": round(newcomer_s, 3),
        "newcomer_ping_status": newcomer_ping,
        "first_session_ping_status": first_ping,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    ca = trustme.CA()
    server = FaultServer()
    server.start(ca)
    proc: asyncio.subprocess.Process | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="runvil-hostile-") as tmp:
            seam = write_seam(server, ca, Path(tmp))
            if args.what in ("long-urls", "worst-urls"):
                proc, url = await _start_http(seam, Path(tmp))
                if args.what == "long-urls":
                    return await long_urls(url, proc.pid, args.calls, args.url_chars,
                                           astral=False)
                return await long_urls(url, proc.pid, args.calls, 8192, astral=True)
            if args.what == "sessions":
                limits = {}
                if args.max_sessions:
                    limits["RUNVIL_MCP_MAX_SESSIONS"] = str(args.max_sessions)
                if args.per_peer:
                    limits["RUNVIL_MCP_SESSIONS_PER_PEER"] = str(args.per_peer)
                proc, url = await _start_http(seam, Path(tmp), limits)
                return await sessions(url, proc.pid, args.sessions, args.peers)
            if args.what == "stdio-frames":
                return await stdio_frames(seam, Path(tmp), args.frame_mb)
            return await concurrent(seam, Path(tmp), args.burst)
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5)
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("what", choices=["long-urls", "worst-urls", "stdio-frames", "concurrent",
                                         "sessions"])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--peers", type=int, default=1)
    parser.add_argument("--max-sessions", type=int, default=0)
    parser.add_argument("--per-peer", type=int, default=0)
    parser.add_argument("--calls", type=int, default=128)
    parser.add_argument("--url-chars", type=int, default=4_000_000)
    parser.add_argument("--frame-mb", type=int, default=64)
    parser.add_argument("--burst", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
