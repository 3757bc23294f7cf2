"""Continuation benchmark: what keeping pages for reading on costs in memory, under load.

Fifty long pages are fetched at once, each by a run of its own (as fifty MCP sessions would),
first with the seeds' policy and then with ``continuation=True``, each mode in a fresh client
process, against one loopback TLS server (an ``aiohttp.web`` app in its own process). Then every
run reads its page on (``start_index=40000``), and the server counts the requests that needed a
new fetch (a page no longer kept). Measured per mode, repeated ``--repeat`` times (default 5),
medians and the spread (min-max):

- **peak RSS** of the client (``ru_maxrss``) and its growth over the process before the load;
- **kept**: the bytes and pages the process-wide store holds after the fifty fetches;
- **refetched**: of the fifty continuations, how many had to fetch again;
- **after end**: the bytes the store still holds once every run has ended (it must be 0).

Two shapes of long page, each 2 MiB: plain text (kept as it decodes) and HTML (a long list,
rendered whole to markdown, in the two render threads). Fifty of either are 100 MiB of text, over
the 64 MiB budget, so the store must evict, least recently used first.

Usage: ``python bench/continuation.py [--repeat N] [--json]`` (needs the ``test`` extra for
``trustme``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import ssl
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HOST = "bench.example"
PUBLIC_IP = "93.184.216.34"
PAGES = 50
PAGE_BYTES = 2 * 1024 * 1024
SHAPES = ("text", "html")


def _page(shape: str, number: int) -> bytes:
    if shape == "text":
        line = f"page {number:02d} line %07d: the quick brown fox jumps over the lazy dog\n"
        out = "".join(line % i for i in range(PAGE_BYTES // len(line % 0) + 1))
        return out.encode()[:PAGE_BYTES]
    item = f"<li>page {number:02d} item %07d: the quick brown fox jumps over the dog</li>"
    body = "".join(item % i for i in range(PAGE_BYTES // len(item % 0)))
    return f"<html><body><ul>{body}</ul></body></html>".encode()


# --- server process ---------------------------------------------------------------------------


def serve(cert_file: str) -> None:
    from aiohttp import web

    pages = {shape: [_page(shape, n) for n in range(PAGES)] for shape in SHAPES}
    counts: dict[str, int] = {}

    async def page(request: web.Request) -> web.Response:
        shape, number = request.match_info["shape"], int(request.match_info["n"])
        counts[request.path] = counts.get(request.path, 0) + 1
        kind = "text/plain" if shape == "text" else "text/html"
        return web.Response(body=pages[shape][number], content_type=kind, charset="utf-8")

    async def count(request: web.Request) -> web.Response:
        return web.json_response(counts)

    async def reset(request: web.Request) -> web.Response:
        counts.clear()
        return web.json_response({})

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/{shape}/{n}", page)
        app.router.add_get("/count", count)
        app.router.add_get("/reset", reset)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_file)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        server = site._server
        assert server is not None
        print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)  # type: ignore[attr-defined]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await runner.cleanup()

    asyncio.run(main())


# --- client process ---------------------------------------------------------------------------


def client(mode: str, shape: str, port: int, ca_file: str) -> dict[str, Any]:
    from runvil._tools import RunScope, current_run
    from runvil.web import FetchPolicy, Network, WebFetch
    from runvil.web._fetch import continuation

    context = ssl.create_default_context(cafile=ca_file)

    async def resolve(host: str) -> list[str]:
        return [PUBLIC_IP]

    def route(ip: str, dial_port: int) -> tuple[str, int]:
        return "127.0.0.1", port

    policy = FetchPolicy(continuation=mode == "continuation")
    network = Network(resolve=resolve, route=route, ssl_context=context)

    async def run() -> dict[str, Any]:
        async with WebFetch(policy=policy, network=network) as fetch:
            # The bench's own requests run in a run of their own (ended with the others), each
            # at a URL of its own: a kept answer would be a stale count.
            control = RunScope()
            current_run.set(control)
            await fetch.call({"url": f"https://{HOST}/count?warm-up"})  # imports, a connection
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            runs = [RunScope() for _ in range(PAGES)]

            async def read(number: int, start: int) -> str:
                current_run.set(runs[number])  # each page in a run of its own
                url = f"https://{HOST}/{shape}/{number}"
                return await fetch.call({"url": url, "start_index": start})

            first = await asyncio.gather(*(read(n, 0) for n in range(PAGES)))
            assert all(text.startswith("url: ") for text in first), first[0][:200]
            kept, held = continuation.PAGES.size, len(continuation.PAGES)
            await fetch.call({"url": f"https://{HOST}/reset?after-first-reads"})
            await asyncio.gather(*(read(n, 40_000) for n in range(PAGES)))
            counts = json.loads((await fetch.call({"url": f"https://{HOST}/count?at-end"}))
                                .split("\n\n", 1)[1])
            for scope in [*runs, control]:  # every run ends: nothing of theirs may stay held
                scope.end()
            after_end = continuation.PAGES.size
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return {
            "peak_rss_mib": peak / 1024, "growth_mib": (peak - before) / 1024,
            "kept_mib": kept / 2**20, "kept_pages": held, "refetched": sum(counts.values()),
            "kept_after_end_mib": after_end / 2**20,
        }

    return asyncio.run(run())


# --- orchestration ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--client", nargs=4, metavar=("MODE", "SHAPE", "PORT", "CA"))
    parser.add_argument("--serve", metavar="CERT")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.client:
        mode, shape, port, ca = args.client
        print(json.dumps(client(mode, shape, int(port), ca)))
        return

    import trustme

    with tempfile.TemporaryDirectory() as directory:
        ca = trustme.CA()
        cert = Path(directory) / "server.pem"
        ca.issue_cert(HOST, "127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(cert))
        ca_file = Path(directory) / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(cert)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        try:
            for _ in range(args.repeat):
                for shape in SHAPES:
                    for mode in ("default", "continuation"):
                        out = subprocess.run(
                            [sys.executable, __file__, "--client", mode, shape, str(port),
                             str(ca_file)],
                            capture_output=True, text=True, check=True,
                        )
                        row = json.loads(out.stdout.strip().splitlines()[-1])
                        results.setdefault((shape, mode), []).append(row)
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait()

    summary = []
    for (shape, mode), rows in results.items():
        entry: dict[str, Any] = {"shape": shape, "mode": mode}
        for key in rows[0]:
            values = [row[key] for row in rows]
            entry[key] = {"median": statistics.median(values), "min": min(values),
                          "max": max(values)}
        summary.append(entry)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"50 concurrent {PAGE_BYTES // 2**20} MiB pages, {args.repeat} runs, medians (min-max)")
    print(f"{'shape':6} {'mode':13} {'peak RSS MiB':>22} {'growth MiB':>22} {'kept MiB':>18}"
          f" {'kept pages':>11} {'refetched':>10} {'after end MiB':>14}")
    def cell(entry: dict[str, Any], key: str, digits: int = 0) -> str:
        value = entry[key]
        return (f"{value['median']:.{digits}f} ({value['min']:.{digits}f}-"
                f"{value['max']:.{digits}f})")

    for entry in summary:
        print(f"{entry['shape']:6} {entry['mode']:13} {cell(entry, 'peak_rss_mib'):>22} "
              f"{cell(entry, 'growth_mib'):>22} {cell(entry, 'kept_mib', 1):>18} "
              f"{entry['kept_pages']['median']:11.0f} {entry['refetched']['median']:10.0f} "
              f"{entry['kept_after_end_mib']['max']:14.1f}")


if __name__ == "__main__":
    main()
