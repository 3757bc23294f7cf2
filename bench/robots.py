"""robots.txt benchmark: what K hostile sites' robots.txt files cost another caller's fetch.

A hostile run fetches a page from each of K sites at once (``--runs one``: all K in one run, as
one session would; ``--runs each``: each site in a run of its own, as K sessions would), every
site serving a 512 KiB robots.txt of the chosen shape; a moment later (0.05 s) an innocent run
fetches one page from its own site, whose robots.txt is 64 KiB of ordinary rules (a big site's
file, over the 16 KiB parsed on the event loop). A warm-up fetch from a site with a two-line
file comes first (imports, the connection pool). Measured: the innocent fetch's wall time, and
the whole scene's. The server is an ``aiohttp.web`` app in its own process on loopback (TLS, the
fetch's injected resolver and route map); each measurement runs in a fresh client process,
``--repeat`` times (default 3), medians.

Shapes of the hostile file (each 512 KiB, the cap):

- ``rules``: percent-encoded ``Disallow`` lines under ``User-agent: *`` (parsed whole, linear);
- ``wildcards``: ``Disallow: /*aN*b`` lines, and the hostile page's URL 8,000 characters long
  (each check matches every rule against the URL);
- ``agents``: 2,048 ``User-agent`` lines over the group's rules (Protego copied every rule for
  every agent: too slow to measure whole before; ``--agents-kib`` sets the file's size).

``--code DIR`` runs the clients on another checkout's ``src`` (the measurement before a change:
``git archive COMMIT src | tar -x -C DIR``).

Usage: ``python bench/robots.py [--shape rules] [--runs one] [--k 0 2 4 8 16] [--repeat 3]``
(needs the ``test`` extra for ``trustme``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PUBLIC_IP = "93.184.216.34"
CAP = 512 * 1024


def hostile_file(shape: str, size: int = CAP) -> bytes:
    if shape == "rules":
        body = "".join(f"Disallow: /%E2%82%AC/{i}/%C3%A9\n" for i in range(size // 24))
        text = "User-agent: *\n" + body
    elif shape == "wildcards":
        text = "User-agent: *\n" + "".join(f"Disallow: /*a{i}*b\n" for i in range(size // 16))
    elif shape == "agents":
        agents = "".join(f"User-agent: bot{i}\n" for i in range(2048))
        rules = "".join(f"Disallow: /p{i}\n" for i in range(size // 12))
        text = "User-agent: *\n" + agents + rules
    else:
        raise ValueError(shape)
    return _whole_lines(text.encode(), size)


def innocent_file() -> bytes:
    rules = "".join(f"Disallow: /section-{i}/private/\nAllow: /section-{i}/public/\n"
                    for i in range(64 * 1024 // 60))
    return _whole_lines(("User-agent: *\n" + rules).encode(), 64 * 1024)


def _whole_lines(data: bytes, size: int) -> bytes:
    """``data`` cut to at most ``size`` bytes, at the end of a line."""
    return data if len(data) <= size else data[: data.rfind(b"\n", 0, size) + 1]


# --- server process ---------------------------------------------------------------------------


def serve(cert_file: str, shape: str, agents_kib: int) -> None:
    from aiohttp import web

    size = agents_kib * 1024 if shape == "agents" else CAP
    files = {
        "hostile": hostile_file(shape, size), "innocent": innocent_file(),
        "warm": b"User-agent: *\nDisallow: /private/\n",
    }

    async def robots(request: web.Request) -> web.Response:
        kind = request.host.split("-")[0].split(".")[0]
        return web.Response(body=files[kind], content_type="text/plain")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="a page", content_type="text/plain")

    async def main() -> None:
        app = web.Application()
        app.router.add_get("/robots.txt", robots)
        app.router.add_get("/{tail:.*}", page)
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


def client(shape: str, k: int, runs: str, port: int, ca_file: str) -> dict[str, Any]:
    from runvil._tools import RunScope, current_run
    from runvil.web import FetchPolicy, Network, WebFetch

    context = ssl.create_default_context(cafile=ca_file)

    async def resolve(host: str) -> list[str]:
        return [PUBLIC_IP]

    def route(ip: str, dial_port: int) -> tuple[str, int]:
        return "127.0.0.1", port

    network = Network(resolve=resolve, route=route, ssl_context=context)
    path = "/" + "a" * 8000 if shape == "wildcards" else "/page"

    async def run() -> dict[str, Any]:
        async with WebFetch(policy=FetchPolicy(robots=True), network=network) as fetch:
            await fetch.call({"url": "https://warm.example/page"})  # imports, the session
            hostile_run = RunScope()

            async def hostile(n: int) -> str:
                current_run.set(hostile_run if runs == "one" else RunScope())
                return await fetch.call({"url": f"https://hostile-{n}.example{path}"})

            async def innocent() -> tuple[float, str]:
                await asyncio.sleep(0.05)
                current_run.set(RunScope())
                began = time.perf_counter()
                text = await fetch.call({"url": "https://innocent.example/page"})
                return time.perf_counter() - began, text

            began = time.perf_counter()
            *_, (took, text) = await asyncio.gather(*(hostile(n) for n in range(k)), innocent())
            scene = time.perf_counter() - began
        if not text.endswith("a page"):
            print(text[:300], file=sys.stderr)
        return {"innocent_s": took, "scene_s": scene, "innocent_ok": text.endswith("a page")}

    return asyncio.run(run())


# --- orchestration ------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="rules", choices=("rules", "wildcards", "agents"))
    parser.add_argument("--runs", default="one", choices=("one", "each"))
    parser.add_argument("--k", type=int, nargs="+", default=[0, 2, 4, 8, 16])  # 64 at most
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--agents-kib", type=int, default=512)
    parser.add_argument("--code", help="a checkout's root whose src the clients run")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--client", nargs=5, metavar=("SHAPE", "K", "RUNS", "PORT", "CA"))
    parser.add_argument("--serve", nargs=3, metavar=("CERT", "SHAPE", "AGENTS_KIB"))
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1], int(args.serve[2]))
        return
    if args.client:
        shape, k, runs, port, ca = args.client
        print(json.dumps(client(shape, int(k), runs, int(port), ca)))
        return

    import trustme

    env = dict(os.environ)
    if args.code:
        env["PYTHONPATH"] = str(Path(args.code).resolve() / "src")
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        ca = trustme.CA()
        cert = Path(directory) / "server.pem"
        names = ["innocent.example", "warm.example"]
        names += [f"hostile-{n}.example" for n in range(64)]
        ca.issue_cert(*names).private_key_and_cert_chain_pem.write_to_path(str(cert))
        ca_file = Path(directory) / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(cert), args.shape, str(args.agents_kib)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert server.stdout is not None
        port = json.loads(server.stdout.readline())["port"]
        try:
            for k in args.k:
                samples = []
                for _ in range(args.repeat):
                    out = subprocess.run(
                        [sys.executable, __file__, "--client", args.shape, str(k), args.runs,
                         str(port), str(ca_file)],
                        stdout=subprocess.PIPE, text=True, check=True, env=env,
                    )
                    samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
                rows.append({
                    "k": k,
                    "innocent_s": statistics.median(s["innocent_s"] for s in samples),
                    "innocent_max_s": max(s["innocent_s"] for s in samples),
                    "scene_s": statistics.median(s["scene_s"] for s in samples),
                    "innocent_ok": all(s["innocent_ok"] for s in samples),
                })
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"shape {args.shape}, hostile sites in {args.runs} run(s), {args.repeat} repetitions,"
          f" code {args.code or 'this checkout'}")
    print(f"{'K':>3} {'innocent s (median)':>20} {'max':>7} {'whole scene s':>14} {'ok':>4}")
    for row in rows:
        print(f"{row['k']:3d} {row['innocent_s']:20.3f} {row['innocent_max_s']:7.3f} "
              f"{row['scene_s']:14.3f} {row['innocent_ok']!s:>4}")


if __name__ == "__main__":
    main()
