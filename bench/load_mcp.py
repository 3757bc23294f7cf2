"""Load on the MCP face: many concurrent calls over streamable HTTP against slow backends.

Starts the fault server and ``runvil mcp --http 127.0.0.1:0`` as two child processes (the MCP
server is started through the test launcher, ``tests/fixtures/launch.py``, which hands it a fake
network reaching the fault server, with the default fetch policy), then:

1. **Load**: ``--calls`` (default 500) ``web_fetch`` calls at once, spread over ``--clients``
   MCP client sessions, each to a backend that answers after one second. The server runs at
   most 128 calls at once (``MAX_CALLS_IN_FLIGHT``) and refuses the others at once with its
   busy text: every call must come back with the exact page text or that refusal, and at least
   128 with the page; the server's resident memory is sampled before, during (peak,
   ``VmHWM``) and after each of ``--repeat`` rounds: bounded memory means it levels off
   instead of growing round after round.
2. **Disconnect**: a client starts a fetch of a backend that never answers, then goes away
   (its call is cancelled and its session closed). The fault server's count of open
   connections for that path must drop to zero long before the fetch's own 20-second limit:
   the server cancelled the fetch and closed the upstream connection.

Usage (never part of the test suite)::

    python -m bench.load_mcp --calls 500 --clients 10

Exit status 0 when every check passed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

import trustme
from mcp import Client
from tests.fixtures.faults import FAULT_HOST, OK_BODY, FaultServer
from tests.fixtures.launch import LAUNCHER, SPEC_VAR

from runvil._faces.mcp import MAX_CALLS_IN_FLIGHT, TOO_MANY_CALLS

REPO = Path(__file__).resolve().parents[1]
ENVELOPED = re.compile(r"<untrusted_input_([0-9a-f]{16})>\n(.*)\n</untrusted_input_\1>", re.S)


def server_memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of process ``pid`` in MB."""
    fields: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields["VmHWM"]


def write_seam(server: FaultServer, ca: trustme.CA, directory: Path) -> Path:
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    spec = {
        "dns": server.dns(),
        "routes": {f"{ip}:{port}": f"{h}:{p}" for (ip, port), (h, p) in server.routes().items()},
        "default_route": "127.0.0.1:9",
        "ca_file": str(ca_file),
        "policy": {},
    }
    path = directory / "network.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


async def start_mcp(seam: Path, home: Path) -> tuple[asyncio.subprocess.Process, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        SPEC_VAR: str(seam),
        "PYTHONUNBUFFERED": "1",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(LAUNCHER), "mcp", "--http", "127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(REPO),
    )
    assert proc.stderr is not None
    prefix = "runvil mcp: serving "
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
        if not line:
            raise RuntimeError("runvil mcp --http exited before serving")
        if line.startswith(prefix):
            return proc, line[len(prefix) :].strip()


async def fetch_text(url: str, client: Client) -> str:
    result = await client.call_tool("web_fetch", {"url": url})
    text = result.content[0].text  # type: ignore[union-attr]
    match = ENVELOPED.fullmatch(text)
    return match.group(2) if match else f"(not enveloped) {text}"


async def open_connections(client: Client, path: str) -> int:
    text = await fetch_text(f"https://{FAULT_HOST}/open{path}", client)
    return int(text.rsplit("\n", 1)[1])


async def load(url: str, pid: int, calls: int, clients: int) -> dict[str, object]:
    rss_before, _ = server_memory_mb(pid)
    expected = {}
    per_client = [list(range(i, calls, clients)) for i in range(clients)]
    results: dict[int, str] = {}

    async def one_client(indexes: list[int]) -> None:
        async with Client(url, cache=None) as client:
            async def one(i: int) -> None:
                page = f"https://{FAULT_HOST}/delay/{i}"
                body = OK_BODY.decode()
                expected[i] = f"url: {page}\ntruncated: false\nextraction: plain\n\n{body}"
                results[i] = await fetch_text(page, client)

            await asyncio.gather(*(one(i) for i in indexes))

    started = time.monotonic()
    await asyncio.gather(*(one_client(ix) for ix in per_client))
    wall = time.monotonic() - started
    rss_after, peak = server_memory_mb(pid)
    refused = [i for i in range(calls) if results.get(i) == f"(not enveloped) {TOO_MANY_CALLS}"]
    wrong = [
        i for i in range(calls) if results.get(i) != expected.get(i) and i not in set(refused)
    ]
    return {
        "calls": calls,
        "clients": clients,
        "wall_s": round(wall, 2),
        "refused_busy": len(refused),
        "exact": calls - len(wrong) - len(refused),
        "wrong": len(wrong),
        "first_wrong": results.get(wrong[0]) if wrong else None,
        "server_rss_before_mb": round(rss_before, 1),
        "server_rss_after_mb": round(rss_after, 1),
        "server_peak_rss_mb": round(peak, 1),
    }


async def disconnect(url: str) -> dict[str, object]:
    path = f"/hang/{uuid.uuid4().hex}"
    async with Client(url, cache=None) as observer:
        async def caller() -> None:
            async with Client(url, cache=None) as client:
                await client.call_tool("web_fetch", {"url": f"https://{FAULT_HOST}{path}"})

        task = asyncio.create_task(caller())
        opened = 0
        for _ in range(100):
            await asyncio.sleep(0.1)
            opened = await open_connections(observer, path)
            if opened:
                break
        gone_at = time.monotonic()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        still_open = opened
        waited = 0.0
        while still_open and waited < 15.0:
            await asyncio.sleep(0.1)
            still_open = await open_connections(observer, path)
            waited = time.monotonic() - gone_at
    return {
        "upstream_opened": opened,
        "upstream_open_after_disconnect": still_open,
        "seconds_until_closed": round(waited, 2) if not still_open else None,
    }


async def main_async(calls: int, clients: int, repeat: int) -> bool:
    ca = trustme.CA()
    server = FaultServer()
    server.start(ca)
    proc: asyncio.subprocess.Process | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="runvil-load-") as tmp:
            seam = write_seam(server, ca, Path(tmp))
            proc, url = await start_mcp(seam, Path(tmp))
            rounds = [await load(url, proc.pid, calls, clients) for _ in range(repeat)]
            report_load = rounds[-1]
            report_load["server_rss_idle_mb"] = rounds[0]["server_rss_before_mb"]
            report_load["server_rss_after_each_round_mb"] = [
                r["server_rss_after_mb"] for r in rounds
            ]
            report_load["exact"] = min(int(r["exact"]) for r in rounds)  # type: ignore[call-overload]
            report_load["wrong"] = max(int(r["wrong"]) for r in rounds)  # type: ignore[call-overload]
            report_load["exact_each_round"] = [r["exact"] for r in rounds]
            report_disconnect = await disconnect(url)
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5)
        server.stop()
    print(json.dumps({"load": report_load, "disconnect": report_disconnect}, indent=2))
    checks = {
        "every call returned its exact page or the busy refusal": report_load["wrong"] == 0,
        "at least the calls the server runs at once returned their page":
            int(report_load["exact"]) >= min(calls, MAX_CALLS_IN_FLIGHT),  # type: ignore[call-overload]
        "the upstream connection opened": report_disconnect["upstream_opened"] == 1,
        "a disconnected client's upstream connection closed well before the 20 s limit":
            report_disconnect["seconds_until_closed"] is not None
            and float(report_disconnect["seconds_until_closed"]) < 5.0,  # type: ignore[arg-type]
    }
    for check, ok in checks.items():
        print(f"[{'ok' if ok else 'FAIL'}] {check}")
    return all(checks.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="load rounds (memory must level)")
    args = parser.parse_args()
    sys.exit(0 if asyncio.run(main_async(args.calls, args.clients, args.repeat)) else 1)


if __name__ == "__main__":
    main()
