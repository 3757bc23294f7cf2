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

The server (``--server``) is either an ``aiohttp.web`` app in its own process (``python``, the
default: it needs nothing installed) or nginx (``nginx``: one worker, TLS, keep-alive, the two
bodies as static files). For nginx the bench writes a config into a temporary directory, starts
its own nginx on a free loopback port with a trustme certificate and stops it at the end; it
needs the ``nginx`` binary on ``PATH`` or in ``/usr/sbin`` (``apt-get install nginx``), and no
root. Both servers send a ``Content-Length`` and no content coding, in 16 KB TLS records; nginx
is not another Python process competing with the client for the same cores, and it is the kind
of server a fetch meets.

Every (mode, workload) measurement runs in a fresh client process; CPU is the client process's
user+sys time over the workload only (after one warm-up fetch), peak RSS is its ``ru_maxrss``,
and the collector's runs (young, middle, full) and their CPU time are counted over the workload
too (docs/benchmarks.md, "Keeping the fetch fast": they are most of the guarded fetch's extra).
Each measurement is repeated (``--repeat``, default 9) with the modes interleaved, and medians
are reported; a guarded/bare ratio is given both as the median of the back-to-back pairs'
ratios (the statistic the targets are judged on) and as the ratio of the medians. ``--pin``
puts the server on the first allowed CPU and the clients on the last.

``--serve-only`` starts the server, prints its port and CA file, and serves until interrupted,
so one client can be run by hand under a profiler::

    python bench/fetch.py --server nginx --serve-only
    valgrind --tool=callgrind --dump-before=os_sched_yield \\
        python bench/fetch.py --client guarded page PORT CA_FILE --fetches 1000 --profiled

(the second of callgrind's three dumps is the measured fetches: instructions per fetch are its
total over ``--fetches``).

Usage: ``python bench/fetch.py [--server python|nginx] [--repeat N] [--only WORKLOAD]
[--fetches N] [--pin] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
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


def _bodies() -> tuple[bytes, bytes]:
    """The 20 KB page and the 8 MiB body, the same bytes from either server."""
    page = (b"The quick brown fox jumps over the lazy dog. " * 1000)[:PAGE_BYTES]
    big = (b"0123456789abcdef" * (BIG_BYTES // 16))[:BIG_BYTES]
    return page, big


def serve(cert_dir: Path) -> None:
    """Serve /page and /big over TLS on 127.0.0.1 until stdin closes."""
    from aiohttp import web

    page, big = _bodies()

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


def client(
    mode: str,
    workload: str,
    port: int,
    ca_file: str,
    fetches: int | None = None,
    *,
    profiled: bool = False,
) -> dict[str, Any]:
    """Run one workload in this (fresh) process and report its cost.

    ``profiled``: for a run under valgrind. The fetch's timeouts are 10 minutes instead of the
    default policy's 5 and 20 seconds, so a client slowed 50x still finishes (the work is the
    same); the pool is filled before the measured fetches, which ``os.sched_yield()`` calls
    mark on both sides (``--dump-before=os_sched_yield`` turns them into three profiles:
    start-up, the measured fetches, the end).
    """
    import aiohttp

    from runvil.web import FetchPolicy, Network, WebFetch

    spec = dict(WORKLOADS[workload])
    if fetches is not None:
        spec["fetches"] = fetches
    path = "/page" if workload == "page" else "/big"
    context = ssl.create_default_context(cafile=ca_file)

    async def resolve(host: str) -> list[str]:
        return [PUBLIC_IP]

    def route(ip: str, dial_port: int) -> tuple[str, int]:
        return "127.0.0.1", port

    async def run() -> dict[str, Any]:
        received = 0
        if mode == "guarded":
            policy = FetchPolicy(connect_timeout=600, timeout=600) if profiled else FetchPolicy()
            tool = WebFetch(
                policy=policy,
                network=Network(resolve=resolve, route=route, ssl_context=context),
            )
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
        remaining = 0

        async def worker() -> None:
            nonlocal remaining, received
            while remaining > 0:
                remaining -= 1
                size = await one(remaining)
                received += size  # after the await: another worker may have added meanwhile

        if profiled:
            # Steady state only: open the pool's connections first, and mark the measured
            # part for ``valgrind --tool=callgrind --dump-before=os_sched_yield``.
            remaining = 2 * concurrency
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            received = 0
            os.sched_yield()
        remaining = fetches
        collector = _CollectorWatch()
        gc.callbacks.append(collector)
        faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        times0 = os.times()
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        times = os.times()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
        gc.callbacks.remove(collector)
        if profiled:
            os.sched_yield()
        await close()
        result = {
            "cpu": cpu,
            "wall": wall,
            "fetches": fetches,
            "received": received,
            "faults": faults,
            "gc_collections": collector.collections,
            "gc_seconds": collector.seconds,
            "user": times.user - times0.user,
            "sys": times.system - times0.system,
        }
        if mode == "guarded" and not profiled:
            result["admission_ms"] = _admission_cpu_ms(f"https://{HOST}{path}", fetches)
        return result

    result = asyncio.run(run())
    result["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


class _CollectorWatch:
    """Python's cyclic collector during the workload: collections per generation and the CPU
    time they took. A young collection runs whenever the count of container objects allocated
    and not yet freed passes 700, a middle one every tenth young one, and a full one (the whole
    heap) every tenth middle one once enough has moved there: a cost a client adds without any
    code of its own on a profile (docs/benchmarks.md, "Python's collector")."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        else:
            self.collections[info["generation"]] += 1
            self.seconds += time.process_time() - self._started


def _admission_cpu_ms(url: str, count: int) -> float:
    """CPU ms per call of URL admission alone (the WHATWG parse and the five checks), on the
    same distinct URLs the workload fetched: the part of a guarded fetch's cost that is the
    URL parser's."""
    from runvil.web._fetch.admission import admit_url

    urls = [f"{url}?n={n}" for n in range(count)]
    cpu0 = time.process_time()
    for each in urls:
        admit_url(each)
    return 1000 * (time.process_time() - cpu0) / count


# --- orchestration ------------------------------------------------------------------------------


def _make_certificates(directory: Path) -> Path:
    import trustme

    ca = trustme.CA()
    leaf = ca.issue_cert(HOST, "127.0.0.1")
    leaf.private_key_and_cert_chain_pem.write_to_path(str(directory / "server.pem"))
    leaf.private_key_pem.write_to_path(str(directory / "server.key"))
    for number, blob in enumerate(leaf.cert_chain_pems):
        blob.write_to_path(str(directory / "server.crt"), append=number > 0)
    ca_file = directory / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    return ca_file


def _wait_listening(port: int, server: subprocess.Popen[Any], describe: str) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the {describe} did not start") from None
            time.sleep(0.05)


@contextlib.contextmanager
def _python_server(directory: Path, cpu: int | None) -> Iterator[int]:
    """The ``aiohttp.web`` server in its own process; yields its port."""
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=_pinned(cpu),
    )
    try:
        assert server.stdout is not None
        port: int = json.loads(server.stdout.readline())["port"]
        _wait_listening(port, server, "Python server")
        yield port
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


NGINX_CONFIG = """\
daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{
    worker_connections 1024;
}}
http {{
    access_log off;
    default_type text/plain;
    charset utf-8;
    gzip off;
    keepalive_timeout 300s;
    keepalive_requests 1000000;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port} ssl;
        server_name {host};
        ssl_certificate {dir}/server.crt;
        ssl_certificate_key {dir}/server.key;
        root {dir}/www;
    }}
}}
"""


def _nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise SystemExit("--server nginx needs nginx (apt-get install -y nginx)")
    return found


@contextlib.contextmanager
def _nginx_server(directory: Path, cpu: int | None) -> Iterator[int]:
    """Our own nginx on a free loopback port, configured in ``directory``; yields its port.

    One worker, TLS with the trustme certificate, keep-alive, no gzip, ``/page`` and ``/big``
    as static ``text/plain; charset=utf-8`` files. It runs in the foreground (``daemon off``) as
    a child of this process and is stopped with SIGTERM. Run as root, nginx starts its worker
    as ``nobody``, so the served files and their directory are made world-readable (the key
    is read by the master only); as any other user nothing needs root.
    """
    binary = _nginx_binary()
    www = directory / "www"
    (directory / "tmp").mkdir()
    www.mkdir()
    page, big = _bodies()
    (www / "page").write_bytes(page)
    (www / "big").write_bytes(big)
    for path in (directory, www, www / "page", www / "big"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    for attempt in range(5):
        with socket.socket() as probe:  # a free port; nginx cannot report one it chose
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        config = directory / "nginx.conf"
        config.write_text(NGINX_CONFIG.format(dir=directory, port=port, host=HOST))
        error_log = directory / "error.log"
        server = subprocess.Popen(
            [binary, "-p", str(directory), "-e", str(error_log), "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_pinned(cpu),
        )
        try:
            _wait_listening(port, server, "nginx")
        except SystemExit:
            server.kill()
            _, stderr = server.communicate(timeout=10)
            log = error_log.read_text() if error_log.exists() else ""
            if "Address already in use" in stderr + log and attempt < 4:
                continue  # another process took the port between the probe and nginx
            raise SystemExit(f"nginx did not start:\n{stderr}{log}") from None
        try:
            yield port
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=10)
        return


SERVERS = {"python": _python_server, "nginx": _nginx_server}


def _pinned(cpu: int | None) -> Any:
    """A ``preexec_fn`` that pins the child to ``cpu`` (None: no pinning)."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def _cpus(pin: bool) -> tuple[int | None, int | None]:
    """(server CPU, client CPU) for ``--pin``: the first and the last this process may use."""
    if not pin:
        return None, None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        raise SystemExit("--pin needs two CPUs")
    return allowed[0], allowed[-1]


def _run_client(
    mode: str,
    workload: str,
    port: int,
    ca_file: Path,
    cpu: int | None = None,
    fetches: int | None = None,
) -> dict[str, Any]:
    count = [] if fetches is None else ["--fetches", str(fetches)]
    out = subprocess.run(
        [sys.executable, __file__, "--client", mode, workload, str(port), str(ca_file), *count],
        capture_output=True,
        text=True,
        preexec_fn=_pinned(cpu),
    )
    if out.returncode != 0:
        raise SystemExit(f"client {mode}/{workload} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=sorted(SERVERS), default="python")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--only", choices=sorted(WORKLOADS), action="append", help="run only these workloads"
    )
    parser.add_argument("--fetches", type=int, help="fetches per measurement (default: set)")
    parser.add_argument("--pin", action="store_true", help="server and clients on their own CPU")
    parser.add_argument("--serve-only", action="store_true", help="serve until interrupted")
    parser.add_argument("--profiled", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print raw results as JSON")
    parser.add_argument("--serve", metavar="CERT_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=4, metavar="X", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve))
        return
    if args.client:
        mode, workload, port, ca_file = args.client
        result = client(mode, workload, int(port), ca_file, args.fetches, profiled=args.profiled)
        print(json.dumps(result))
        return

    plan = [
        (mode, workload)
        for mode, workload in PLAN
        if args.only is None or workload in args.only
    ]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {key: [] for key in plan}
    server_cpu, client_cpu = _cpus(args.pin)
    with contextlib.ExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        ca_file = _make_certificates(directory)
        port = stack.enter_context(SERVERS[args.server](directory, server_cpu))
        if args.serve_only:
            # Ctrl-C or a plain kill ends it, and either way nginx is stopped on the way out (a
            # shell starts a background job with SIGINT ignored, so SIGTERM is handled too).
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.default_int_handler)
            print(json.dumps({"port": port, "ca_file": str(ca_file)}), flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()
            return
        for repetition in range(args.repeat):
            # Each bare/guarded pair of a workload runs back to back; which of the two goes
            # first alternates, so neither is always the one after the heavier workloads.
            for mode, workload in _ordered(plan, swap=repetition % 2 == 1):
                results[(mode, workload)].append(
                    _run_client(mode, workload, port, ca_file, client_cpu, args.fetches)
                )
            print(f"repetition {repetition + 1}/{args.repeat} done", file=sys.stderr)

    if args.json:
        print(json.dumps({f"{m}/{w}": r for (m, w), r in results.items()}, indent=1))
    _report(results, args.server)


PLAN = [
    ("bare", "page"),
    ("guarded", "page"),
    ("bare-noreuse", "page"),
    ("bare", "big"),
    ("guarded", "big"),
    ("bare", "big-rss"),
    ("guarded", "big-rss"),
]


def _ordered(plan: list[tuple[str, str]], *, swap: bool) -> list[tuple[str, str]]:
    """``plan``, with each workload's bare and guarded runs swapped when ``swap``."""
    if not swap:
        return plan
    ordered = list(plan)
    for index in range(len(ordered) - 1):
        (mode, workload), (next_mode, next_workload) = ordered[index], ordered[index + 1]
        if (mode, next_mode) == ("bare", "guarded") and workload == next_workload:
            ordered[index], ordered[index + 1] = ordered[index + 1], ordered[index]
    return ordered


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _report(results: dict[tuple[str, str], list[dict[str, Any]]], server: str) -> None:
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

    repeats = max(len(runs) for runs in results.values())
    print(f"\n{server} server; medians of {repeats} runs; client CPU = user+sys of the client")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print(
        "| workload | mode | fetches/s | CPU ms/fetch | MB/s (wall) | MB per CPU-s "
        "| page faults/fetch | collections per 1,000 fetches (young/middle/full) "
        "| collector ms/fetch | peak RSS MiB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (mode, workload), runs in results.items():
        big = workload != "page"
        mb = f"{mbps(mode, workload):.0f}" if big else ""
        mb_cpu = f"{mb_per_cpu_s(mode, workload):.0f}" if big else ""
        faults = statistics.median(r["faults"] / r["fetches"] for r in runs)
        collections = "/".join(
            f"{statistics.median(1000 * r['gc_collections'][g] / r['fetches'] for r in runs):.1f}"
            for g in range(3)
        )
        collector = statistics.median(1000 * r["gc_seconds"] / r["fetches"] for r in runs)
        print(
            f"| {workload} | {mode} | {rate(mode, workload):,.0f} | {cpu_ms(mode, workload):.3f} "
            f"| {mb} | {mb_cpu} | {faults:.1f} | {collections} | {collector:.4f} "
            f"| {_median(runs, 'maxrss_mib'):.0f} |"
        )
    print()
    if ("guarded", "page") in results and ("bare", "page") in results:
        ratio = cpu_ms("guarded", "page") / cpu_ms("bare", "page")
        print(
            f"guarded / bare CPU per 20 KB fetch at concurrency 50: ratio of the medians "
            f"{ratio:.2f}x (target <= 1.10); {_pairs(results, 'page', _cpu_per_fetch)}"
        )
        admission = statistics.median(r["admission_ms"] for r in results[("guarded", "page")])
        without = (cpu_ms("guarded", "page") - admission) / cpu_ms("bare", "page")
        print(
            f"  of which URL admission alone: {admission:.3f} ms per fetch; without it the "
            f"ratio would be {without:.2f}x"
        )
    if ("guarded", "big") in results and ("bare", "big") in results:
        print(
            f"guarded 8 MiB throughput: {mbps('guarded', 'big'):.0f} MB/s wall, "
            f"{mb_per_cpu_s('guarded', 'big'):.0f} MB per client CPU second"
        )
        print(
            f"  guarded / bare CPU per 8 MiB fetch: ratio of the medians "
            f"{cpu_ms('guarded', 'big') / cpu_ms('bare', 'big'):.2f}x (target <= 1.15); "
            f"{_pairs(results, 'big', _cpu_per_fetch)}"
        )
        print(
            f"  guarded / bare MB/s: {mbps('guarded', 'big') / mbps('bare', 'big'):.2f}x; "
            f"{_pairs(results, 'big', _mb_per_s)}"
        )
    if ("guarded", "big-rss") in results:
        rss = _median(results[("guarded", "big-rss")], "maxrss_mib")
        print(f"guarded peak RSS, 50 concurrent 8 MiB fetches: {rss:.0f} MiB (target <= 600 MB)")


def _cpu_per_fetch(run: dict[str, Any]) -> float:
    return float(run["cpu"] / run["fetches"])


def _mb_per_s(run: dict[str, Any]) -> float:
    return float(run["fetches"] / run["wall"])


def _pairs(
    results: dict[tuple[str, str], list[dict[str, Any]]], workload: str, measure: Any
) -> str:
    """The guarded/bare ratios of the back-to-back pairs: their spread shows how much the rest
    of the machine moved the figure during the run."""
    paired = sorted(
        measure(g) / measure(b)
        for g, b in zip(results[("guarded", workload)], results[("bare", workload)], strict=True)
    )
    quartiles = statistics.quantiles(paired, n=4) if len(paired) > 1 else paired * 3
    return (
        f"the {len(paired)} back-to-back pairs: median {statistics.median(paired):.2f}x, "
        f"middle half {quartiles[0]:.2f}-{quartiles[2]:.2f}, range {paired[0]:.2f}-{paired[-1]:.2f}"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
