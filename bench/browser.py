"""Browser benchmark: a page rendered in the browser against the static path, and the guard's
cost against Playwright with a network of its own.

On loopback TLS (a trustme CA, an ``aiohttp.web`` server in this process, the ``Network`` seam
mapping ``bench.example`` to it), three ways to read the same pages:

- ``static``: ``WebFetch(FetchPolicy())``: no browser;
- ``guarded``: ``WebFetch(FetchPolicy(browser="always"))``: Chromium with no network of its own,
  every request answered through the fetch's guard, a fresh context per page;
- ``own-network``: the same Chromium (same executable, same sandbox, a fresh context per page),
  started without runvil's network flags and with no interception: ``page.goto`` straight to
  ``https://127.0.0.1:PORT/``, settled by Playwright's ``networkidle`` (500 ms with no request:
  the same rule), then ``page.content()`` through the same ``render_html``. What a browser-based
  fetcher without a guard does.

Pages: ``shell`` (an app shell whose script fetches its article as JSON from the same site:
three requests) and ``article`` (a static 20 KB article with a stylesheet and a script). Each
(mode, page) pair runs ``--pages`` times after one warm-up; the median and 90th percentile of
the wall time per page are reported. Peak memory is sampled every 20 ms during a mode's pages:
the RSS of this process and the summed PSS (proportional set size: shared pages counted once)
of every process under it (Chromium and its Playwright driver).

Usage: ``python bench/browser.py [--pages N]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trustme
from aiohttp import web

from runvil.web import FetchPolicy, Network, WebFetch
from runvil.web._fetch.browser.discovery import find_browser
from runvil.web._fetch.browser.process import close_browsers
from runvil.web._fetch.browser.sandbox import launcher_for
from runvil.web._fetch.extract import render_html

TITLE = "Field notes from the river delta"
PARAGRAPH = (
    "The survey boats left at dawn, when the water was still and the light came in low over the "
    "reeds, and by noon the team had mapped four new channels cut by the spring floods. "
)
STORY = {"title": TITLE, "paragraphs": [PARAGRAPH * 3] * 12}
SHELL = (
    "<!doctype html><html><head><title>Delta</title><script src='/app.js' defer></script>"
    "</head><body><div id='app'></div></body></html>"
)
APP_JS = (
    "fetch('/story.json').then(r => r.json()).then(d => {"
    " const a = document.createElement('article'); const h = document.createElement('h1');"
    " h.textContent = d.title; a.append(h);"
    " for (const t of d.paragraphs) { const p = document.createElement('p'); p.textContent = t;"
    " a.append(p); }"
    " document.getElementById('app').append(a); });"
)
ARTICLE = (
    "<!doctype html><html><head><title>Delta</title><link rel='stylesheet' href='/site.css'>"
    "<script src='/site.js'></script></head><body><nav><a href='/'>Home</a></nav><article>"
    f"<h1>{TITLE}</h1>" + "".join(f"<p>{PARAGRAPH * 3}</p>" for _ in range(40))
    + "</article><footer>Footer</footer></body></html>"
)


def site() -> web.Application:
    def serve(body: str, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=body, content_type=content_type)

        return handler

    app = web.Application()
    app.router.add_get("/shell", serve(SHELL, "text/html"))
    app.router.add_get("/app.js", serve(APP_JS, "application/javascript"))
    app.router.add_get("/story.json", serve(json.dumps(STORY), "application/json"))
    app.router.add_get("/article", serve(ARTICLE, "text/html"))
    app.router.add_get("/site.css", serve("body { font: 16px serif; }", "text/css"))
    app.router.add_get("/site.js", serve("window.ready = true;", "application/javascript"))
    return app


def descendants_rss_kb(root: int) -> int:
    """The summed PSS of every process under ``root`` (not ``root`` itself), in kB: shared pages
    counted once in all (summing RSS would count Chromium's shared zygote pages per process)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            rollup = Path(f"/proc/{entry}/smaps_rollup").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                rss[int(entry)] = int(line.split()[1])
    total, frontier = 0, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                total += rss.get(pid, 0)
                frontier.append(pid)
    return total


def tree_cpu_seconds(root: int) -> float:
    """User+system CPU of ``root`` and every process under it, with what each has reaped of its
    own children (Chromium's zygote reaps its renderers), in seconds: a figure that load from
    other work on the machine does not inflate, as it does wall time."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(value) for value in fields[11:15])
    total, frontier = ticks.get(root, 0), [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                total += ticks.get(pid, 0)
                frontier.append(pid)
    return total / os.sysconf("SC_CLK_TCK")


def own_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Peak:
    """Samples this process's RSS and its children's every 20 ms while running."""

    def __init__(self) -> None:
        self.own = 0
        self.children = 0
        self.cpu = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            self.own = max(self.own, own_rss_kb())
            self.children = max(self.children, descendants_rss_kb(os.getpid()))
            await asyncio.sleep(0.02)

    def __enter__(self) -> Peak:
        self._task = asyncio.get_running_loop().create_task(self._sample())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def run_mode(
    mode: str, path: str, pages: int, network: Network, port: int, ca: trustme.CA
) -> tuple[list[float], Peak, str]:
    timings: list[float] = []
    text = ""
    if mode in ("static", "guarded"):
        policy = FetchPolicy(browser="always" if mode == "guarded" else "never")
        fetch = WebFetch(policy, network)
        url = f"https://bench.example{path}"
        await fetch.call({"url": url})  # warm-up: the pool, and the browser's start
        with Peak() as peak:
            cpu = tree_cpu_seconds(os.getpid())
            for _ in range(pages):
                start = time.perf_counter()
                text = await fetch.call({"url": url})
                timings.append(time.perf_counter() - start)
            peak.cpu = (tree_cpu_seconds(os.getpid()) - cpu) / pages
        await fetch.aclose()
        await close_browsers()
        return timings, peak, text
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=launcher_for(find_browser()), headless=True, chromium_sandbox=True
        )
        url = f"https://127.0.0.1:{port}{path}"

        async def one() -> str:
            context = await browser.new_context(ignore_https_errors=True)
            page = await context.new_page()
            await page.goto(url, wait_until="networkidle")
            html = await page.content()
            await context.close()
            rendered, _ = render_html(html, url, False)
            return rendered

        await one()
        with Peak() as peak:
            cpu = tree_cpu_seconds(os.getpid())
            for _ in range(pages):
                start = time.perf_counter()
                text = await one()
                timings.append(time.perf_counter() - start)
            peak.cpu = (tree_cpu_seconds(os.getpid()) - cpu) / pages
        await browser.close()
    return timings, peak, text


async def main_async(pages: int) -> None:
    ca = trustme.CA()
    server_ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("bench.example", "127.0.0.1").configure_cert(server_ssl)
    runner = web.AppRunner(site())
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl)
    await tcp.start()
    port = runner.addresses[0][1]
    client_ssl = ssl.create_default_context()
    ca.configure_trust(client_ssl)

    async def resolve(host: str) -> list[str]:
        return ["93.184.216.34"]

    network = Network(
        resolve=resolve, route=lambda ip, p: ("127.0.0.1", port), ssl_context=client_ssl
    )
    print(f"{'page':8} {'mode':12} {'median ms':>10} {'p90 ms':>8} {'CPU ms':>7} {'own MB':>7} "
          f"{'browser MB':>11} {'chars':>6}")
    for path in ("/shell", "/article"):
        for mode in ("static", "guarded", "own-network"):
            timings, peak, text = await run_mode(mode, path, pages, network, port, ca)
            body = text.partition("\n\n")[2]
            p90 = statistics.quantiles(timings, n=10)[-1] if len(timings) > 1 else timings[0]
            print(f"{path[1:]:8} {mode:12} {1000 * statistics.median(timings):10.1f} "
                  f"{1000 * p90:8.1f} {1000 * peak.cpu:7.0f} {peak.own / 1024:7.1f} "
                  f"{peak.children / 1024:11.1f} {len(body):6}")
    await concurrent(network)
    await runner.cleanup()


async def concurrent(network: Network, pages: int = 4, rounds: int = 3) -> None:
    """The memory bound: ``pages`` shells at once (the most one process renders), from as many
    runs, ``rounds`` times; the peak PSS of the browser and the wall time of a round."""
    from runvil._tools import RunScope, current_run

    fetch = WebFetch(FetchPolicy(browser="always"), network)
    await fetch.call({"url": "https://bench.example/shell"})

    async def one_run() -> str:
        token = current_run.set(RunScope())
        try:
            return await fetch.call({"url": "https://bench.example/shell"})
        finally:
            current_run.reset(token)

    walls = []
    with Peak() as peak:
        for _ in range(rounds):
            start = time.perf_counter()
            await asyncio.gather(*(one_run() for _ in range(pages)))
            walls.append(time.perf_counter() - start)
    await fetch.aclose()
    await close_browsers()
    print(f"{pages} shells at once: round median {1000 * statistics.median(walls):.0f} ms, "
          f"browser peak {peak.children / 1024:.1f} MB (PSS), own peak {peak.own / 1024:.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    options = parser.parse_args()
    if not find_browser().usable:
        print(f"no usable browser: {find_browser().reason}", file=sys.stderr)
        return 1
    asyncio.run(main_async(options.pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
