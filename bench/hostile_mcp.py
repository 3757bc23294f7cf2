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

Usage (never part of the test suite)::

    python -m bench.hostile_mcp long-urls
    python -m bench.hostile_mcp worst-urls
    python -m bench.hostile_mcp stdio-frames
    python -m bench.hostile_mcp concurrent
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


async def _start_http(seam: Path, home: Path) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(LAUNCHER), "mcp", "--http", "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env=_env(seam, home), cwd=str(REPO),
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
    parser.add_argument("what", choices=["long-urls", "worst-urls", "stdio-frames", "concurrent"])
    parser.add_argument("--calls", type=int, default=128)
    parser.add_argument("--url-chars", type=int, default=4_000_000)
    parser.add_argument("--frame-mb", type=int, default=64)
    parser.add_argument("--burst", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args)), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
