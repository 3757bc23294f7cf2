"""Fetch benchmark: the full guarded ``WebFetch`` against a bare aiohttp client, same server.

One run measures, on loopback TLS:

1. **CPU per fetch** at concurrency 50: 2,000 fetches of a 20 KB page. ``guarded`` is
   ``WebFetch.call`` on ``https://bench.example/page`` (arguments, URL admission, a fresh lookup
   and address check per fetch, the guarded dial and pool check, header checks, the streaming
   decoded-byte cap, charset decoding, the provenance header). ``bare`` is a stock
   ``aiohttp.ClientSession`` doing ``await resp.read()`` on ``https://127.0.0.1:PORT/page``.
   ``bare-noreuse`` is the bare client with ``force_close=True``: what a fetch would cost if
   connections were never pooled (a TLS handshake each).
2. **Throughput** on 8 MiB bodies (exactly the byte cap, so the guarded fetch accepts them
   whole): 20 fetches at concurrency 4, MB/s of body over wall time.
3. **Peak RSS** of the client process with 50 concurrent 8 MiB fetches.

The 20 KB page is served as ``text/plain`` so the comparison measures the fetch path, not HTML
extraction (which has its own benchmark, ``bench/extraction.py``).

The server is an ``aiohttp.web`` app in its own process. Every (mode, workload) measurement runs
in a fresh client process; CPU is the client process's user+sys time over the workload only
(after one warm-up fetch), peak RSS is its ``ru_maxrss``. Each measurement is repeated
(``--repeat``, default 9) with the modes interleaved, and medians are reported.

Usage: ``python bench/fetch.py [--repeat N] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PAGE_BYTES = 20 * 1024
BIG_BYTES = 8 * 1024 * 1024
HOST = "bench.example"
PUBLIC_IP = "93.184.216.34"

WORKLOADS: dict[str, dict[str, int]] = {
    "page": {"fetches": 2000, "concurrency": 50},
    "big": {"fetches": 20, "concurrency": 4},
    "big-rss": {"fetches": 50, "concurrency": 50},
}


# --- server process ---------------------------------------------------------------------------


def serve(cert_dir: Path) -> None:
    """Serve /page and /big over TLS on 127.0.0.1 until stdin closes."""
    from aiohttp import web

    page = (b"The quick brown fox jumps over the lazy dog. " * 1000)[:PAGE_BYTES]
    big = (b"0123456789abcdef" * (BIG_BYTES // 16))[:BIG_BYTES]

    async def page_handler(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/plain", charset="utf-8")

    async def big_handler(request: web.Request) -> web.Response:
        return web.Response(body=big, content_type="text/plain", charset="utf-8")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/page", page_handler)
        app.router.add_get("/big", big_handler)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_dir / "server.pem")
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        print(json.dumps({"port": port}), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
        await runner.cleanup()

    asyncio.run(main())


# --- client process ---------------------------------------------------------------------------


def client(mode: str, workload: str, port: int, ca_file: str) -> dict[str, Any]:
    """Run one workload in this (fresh) process and report its cost."""
    import aiohttp

    from runvil.web import Network, WebFetch

    spec = WORKLOADS[workload]
    path = "/page" if workload == "page" else "/big"
    context = ssl.create_default_context(cafile=ca_file)

    async def resolve(host: str) -> list[str]:
        return [PUBLIC_IP]

    def route(ip: str, dial_port: int) -> tuple[str, int]:
        return "127.0.0.1", port

    async def run() -> dict[str, Any]:
        received = 0
        if mode == "guarded":
            tool = WebFetch(network=Network(resolve=resolve, route=route, ssl_context=context))
            url = f"https://{HOST}{path}"

            async def one(n: int = 0) -> int:
                # A distinct URL per fetch, as in real use: nothing per-URL can be cached.
                text = await tool.call({"url": f"{url}?n={n}"})
                assert text.startswith(f"url: {url}?n={n}\n"), text[:200]
                return len(text)

            close = tool.aclose
        else:
            connector = aiohttp.TCPConnector(ssl=context, force_close=mode == "bare-noreuse")
            session = aiohttp.ClientSession(connector=connector)
            url = f"https://127.0.0.1:{port}{path}"

            async def one(n: int = 0) -> int:
                async with session.get(f"{url}?n={n}") as response:
                    assert response.status == 200
                    return len(await response.read())

            close = session.close

        await one()  # warm-up: imports, first connection
        fetches, concurrency = spec["fetches"], spec["concurrency"]
        remaining = fetches

        async def worker() -> None:
            nonlocal remaining, received
            while remaining > 0:
                remaining -= 1
                received += await one(remaining)

        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        await close()
        result = {"cpu": cpu, "wall": wall, "fetches": fetches, "received": received}
        if mode == "guarded":
            result["admission_ms"] = _admission_cpu_ms(f"https://{HOST}{path}", fetches)
        return result

    result = asyncio.run(run())
    result["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def _admission_cpu_ms(url: str, count: int) -> float:
    """CPU ms per call of URL admission alone (the WHATWG parse and the five checks), on the
    same distinct URLs the workload fetched: the part of a guarded fetch's cost that is the
    URL parser's."""
    from runvil.web.fetch.admission import admit_url

    urls = [f"{url}?n={n}" for n in range(count)]
    cpu0 = time.process_time()
    for each in urls:
        admit_url(each)
    return 1000 * (time.process_time() - cpu0) / count


# --- orchestration ------------------------------------------------------------------------------


def _make_certificates(directory: Path) -> Path:
    import trustme

    ca = trustme.CA()
    ca.issue_cert(HOST, "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(
        str(directory / "server.pem")
    )
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return ca_file


def _run_client(mode: str, workload: str, port: int, ca_file: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--client", mode, workload, str(port), str(ca_file)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"client {mode}/{workload} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", action="store_true", help="print raw results as JSON")
    parser.add_argument("--serve", metavar="CERT_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=4, metavar="X", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve))
        return
    if args.client:
        mode, workload, port, ca_file = args.client
        print(json.dumps(client(mode, workload, int(port), ca_file)))
        return

    plan = [
        ("bare", "page"),
        ("guarded", "page"),
        ("bare-noreuse", "page"),
        ("bare", "big"),
        ("guarded", "big"),
        ("bare", "big-rss"),
        ("guarded", "big-rss"),
    ]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in plan}
    with tempfile.TemporaryDirectory() as tmp:
        ca_file = _make_certificates(Path(tmp))
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", tmp],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            port = json.loads(server.stdout.readline())["port"]
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                pass
            for repetition in range(args.repeat):
                # bare and guarded page runs are pairs, run back to back; which goes first
                # alternates, so neither is always the one after the heavier workloads.
                order = plan if repetition % 2 == 0 else [plan[1], plan[0], *plan[2:]]
                for mode, workload in order:
                    results[(mode, workload)].append(_run_client(mode, workload, port, ca_file))
                print(f"repetition {repetition + 1}/{args.repeat} done", file=sys.stderr)
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)

    if args.json:
        print(json.dumps({f"{m}/{w}": r for (m, w), r in results.items()}, indent=1))
    _report(results)


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _report(results: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    def cpu_ms(mode: str, workload: str) -> float:
        runs = results[(mode, workload)]
        return statistics.median(1000 * r["cpu"] / r["fetches"] for r in runs)

    def rate(mode: str, workload: str) -> float:
        return statistics.median(r["fetches"] / r["wall"] for r in results[(mode, workload)])

    def mbps(mode: str, workload: str) -> float:
        runs = results[(mode, workload)]
        return statistics.median(r["fetches"] * BIG_BYTES / r["wall"] / 1e6 for r in runs)

    def mb_per_cpu_s(mode: str, workload: str) -> float:
        return BIG_BYTES / 1e6 / (cpu_ms(mode, workload) / 1000)

    repeats = len(results[("bare", "page")])
    print(f"\nmedians of {repeats} runs; client CPU = user+sys of the client process")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(
        "| workload | mode | fetches/s | CPU ms/fetch | MB/s (wall) | MB per CPU-s "
        "| peak RSS MiB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for (mode, workload), runs in results.items():
        big = workload != "page"
        mb = f"{mbps(mode, workload):.0f}" if big else ""
        mb_cpu = f"{mb_per_cpu_s(mode, workload):.0f}" if big else ""
        print(
            f"| {workload} | {mode} | {rate(mode, workload):,.0f} | {cpu_ms(mode, workload):.3f} "
            f"| {mb} | {mb_cpu} | {_median(runs, 'maxrss_mib'):.0f} |"
        )
    ratio = cpu_ms("guarded", "page") / cpu_ms("bare", "page")
    # Each repetition's guarded and bare runs are back to back: the spread of their ratios shows
    # how much the rest of the machine moved the figure during the run.
    paired = sorted(
        (g["cpu"] / g["fetches"]) / (b["cpu"] / b["fetches"])
        for g, b in zip(results[("guarded", "page")], results[("bare", "page")], strict=True)
    )
    admission = statistics.median(r["admission_ms"] for r in results[("guarded", "page")])
    print(
        f"\nguarded / bare CPU per 20 KB fetch at concurrency 50: {ratio:.2f}x (target <= 1.25); "
        f"the {len(paired)} back-to-back pairs: median {statistics.median(paired):.2f}x, "
        f"range {paired[0]:.2f}-{paired[-1]:.2f}"
    )
    print(
        f"  of which URL admission alone: {admission:.3f} ms per fetch; without it the ratio "
        f"would be {(cpu_ms('guarded', 'page') - admission) / cpu_ms('bare', 'page'):.2f}x"
    )
    print(
        f"guarded 8 MiB throughput: {mbps('guarded', 'big'):.0f} MB/s wall, "
        f"{mb_per_cpu_s('guarded', 'big'):.0f} MB per client CPU second (target >= 300)"
    )
    rss = _median(results[("guarded", "big-rss")], "maxrss_mib")
    print(f"guarded peak RSS, 50 concurrent 8 MiB fetches: {rss:.0f} MiB (target <= 600 MB)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
