"""What one run's PDFs may cost another, and what a PDF may write into a result.

- **Fair between runs**: the worker pool is shared by runs, a run converts one PDF at a time,
  so a run whose bombs hold a worker never queues another run's PDF behind them. Stand-in
  workers (a script that speaks the worker protocol and stalls on request) make "still running"
  certain; what is asserted is which conversion finished while which was held, never a time.
- **Bounded in CPU**: each conversion has a CPU budget in its worker (``RLIMIT_CPU``); a
  stand-in conversion that burns CPU is ended by the kernel with ``SIGXCPU`` and the call gets
  the over-limits text, long before its own time limit.
- **Escaped**: a PDF's text is escaped exactly as a rendered page's text is.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from runvil._tools import RunScope
from runvil.web import FetchPolicy
from runvil.web._fetch import pdf as pdf_module
from runvil.web._fetch.admission import admit_url
from runvil.web._fetch.content import BodyKind
from runvil.web._fetch.continuation import Held
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.fairpool import FairPool
from runvil.web._fetch.http import Page
from tests.fixtures.pdfs import text_pdf
from tests.web.fetch.conftest import FetchFactory, SiteFactory

URL = "https://example.com/report.pdf"
OVER_LIMITS = (
    "the PDF from https://example.com/report.pdf could not be converted within the time and "
    "memory limits; try a different URL"
)

#: A worker that speaks the protocol: it answers a body as the text of one page, and stalls
#: forever on a body that starts with ``STALL``.
STAND_IN = """
import json, struct, sys, time
requests, replies = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = requests.read(16)
    if len(head) < 16:
        break
    _, _, _, length = struct.unpack("!4sIII", head)
    body = requests.read(length)
    if body.startswith(b"STALL"):
        time.sleep(600)
    data = json.dumps({"status": "ok", "pages": [body.decode()], "cut": False}).encode()
    replies.write(struct.pack("!I", len(data)) + data)
    replies.flush()
"""


class StandIns:
    """Stand-in workers on a pool of their own, closed at the end of the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, threads: int, command: list[str]) -> None:
        self.workers: list[Any] = []
        made = self.workers

        class Recorded(pdf_module._Worker):
            def __init__(self) -> None:
                super().__init__()
                made.append(self)

        monkeypatch.setattr(pdf_module, "_Worker", Recorded)
        monkeypatch.setattr(pdf_module, "_pool", FairPool(threads, "test-pdf", idle_seconds=None))
        monkeypatch.setattr(pdf_module, "_worker_command", lambda: command)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIns]:
    workers = StandIns(monkeypatch, pdf_module.PDF_WORKERS, [sys.executable, "-c", STAND_IN])
    yield workers
    workers.close()


def page(body: bytes) -> Page:
    return Page(admit_url(URL), BodyKind.PDF, None, body)


async def convert(body: bytes, run: RunScope, timeout: float = 60.0) -> Held | str:
    return await pdf_module.convert_pdf(
        page(body), max_pages=10, char_limit=1000, timeout=timeout, run=run
    )


async def test_a_runs_bombs_never_queue_another_runs_pdf(stand_ins: StandIns) -> None:
    """Three bombs of one run (the first holding its worker) and then another run's PDF: the
    other run's PDF is converted while the bomb still runs, and the hostile run's other bombs
    have not started (a run converts one PDF at a time, so it never holds both workers)."""
    hostile, innocent = RunScope(), RunScope()
    bombs = [asyncio.ensure_future(convert(b"STALL %d" % n, hostile)) for n in range(3)]
    while not stand_ins.workers:
        await asyncio.sleep(0.01)
    mine = await asyncio.wait_for(convert(b"the innocent page", innocent), 30)
    assert isinstance(mine, Held)
    assert mine.text == "## Page 1\n\nthe innocent page"
    assert not any(bomb.done() for bomb in bombs)
    assert len(stand_ins.workers) == 2  # one for the first bomb, one for the innocent PDF
    for bomb in bombs:
        bomb.cancel()
    await asyncio.gather(*bombs, return_exceptions=True)


async def test_a_run_waits_for_its_own_pdf_not_for_others(stand_ins: StandIns) -> None:
    """Two runs each holding a worker with a bomb: a third run's PDF is next, ahead of the
    bombs the first two runs queued after theirs."""
    first, second, innocent = RunScope(), RunScope(), RunScope()
    held = [asyncio.ensure_future(convert(b"STALL", run)) for run in (first, second)]
    while len(stand_ins.workers) < 2:
        await asyncio.sleep(0.01)
    queued = [asyncio.ensure_future(convert(b"later", run)) for run in (first, second)]
    mine = asyncio.ensure_future(convert(b"mine", innocent))
    await asyncio.sleep(0)
    held[0].cancel()  # the first bomb is killed: its worker goes to the next job
    result = await asyncio.wait_for(mine, 30)
    assert isinstance(result, Held) and result.text == "## Page 1\n\nmine"
    assert not any(job.done() for job in queued[1:])  # the second run's next waits its bomb
    for task in (*held, *queued):
        task.cancel()
    await asyncio.gather(*held, *queued, return_exceptions=True)


BURN = """
import sys
sys.path[:0] = sys.argv[3:]
from runvil.web._fetch import _pdfworker

def burn(body, max_pages, char_limit):
    while True:
        pass

_pdfworker.convert = burn
_pdfworker.main()
"""


async def test_a_conversion_over_its_cpu_budget_is_ended_by_the_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pdf_module, "WORKER_CPU_SECONDS", 1)
    command = pdf_module._worker_command()
    assert command[4:6] == [str(pdf_module.WORKER_MEMORY), "1"]
    workers = StandIns(monkeypatch, 1, [command[0], "-c", BURN, *command[4:]])
    try:
        result = await asyncio.wait_for(convert(b"%PDF-1.4 burn", RunScope(), timeout=120), 60)
        assert result == OVER_LIMITS
        assert len(workers.workers) == 1
        process = workers.workers[0].process
        assert await asyncio.to_thread(process.wait, 10) == -signal.SIGXCPU
    finally:
        workers.close()


def test_the_cpu_budget_is_well_under_the_calls_time() -> None:
    assert FetchPolicy().timeout >= pdf_module.WORKER_CPU_SECONDS * 4
    assert pdf_module._worker_command()[5] == str(pdf_module.WORKER_CPU_SECONDS)


# -- escaped like page text ------------------------------------------------------------------------

HOSTILE_LINES = [
    "[click](javascript:alert(1))",
    "![](https://tracker.example/pixel.png)",
    "<img src=x onerror=y>",
    "## Page 2",
    "url: https://evil.example/",
]
ESCAPED_LINES = [
    "\\[click](javascript:alert(1))",
    "!\\[](https://tracker.example/pixel.png)",
    "\\<img src=x onerror=y>",
    "\\## Page 2",
    "url: https://evil.example/",  # not markdown: kept, as in a rendered page
]


async def test_pdf_text_is_escaped_exactly_as_page_text(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def handler(request: web.Request) -> web.Response:
        body = text_pdf([HOSTILE_LINES, "   ## indented heading"])
        return web.Response(body=body, headers={"Content-Type": "application/pdf"})

    await site({"/report.pdf": handler})
    text = await make_fetch(FetchPolicy(pdf=True)).call({"url": URL})
    assert text == (
        f"url: {URL}\ntruncated: false\nextraction: pdf\n\n## Page 1\n\n"
        + "\n".join(ESCAPED_LINES)
        + "\n\n## Page 2\n\n\\## indented heading"
    )
    html = "".join(
        f"<p>{line.replace('<', '&lt;')}</p>" for line in HOSTILE_LINES
    )
    rendered, _ = render_html(f"<html><body>{html}</body></html>", URL, True)
    assert rendered.split("\n\n") == ESCAPED_LINES


async def test_each_hostile_line_alone_is_escaped(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    pages = {f"/{n}.pdf": text_pdf([line]) for n, line in enumerate(HOSTILE_LINES)}

    def serve(body: bytes) -> Any:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(body=body, headers={"Content-Type": "application/pdf"})

        return handler

    await site({path: serve(body) for path, body in pages.items()})
    fetch = make_fetch(FetchPolicy(pdf=True))
    for n, escaped in enumerate(ESCAPED_LINES):
        url = f"https://example.com/{n}.pdf"
        assert await fetch.call({"url": url}) == (
            f"url: {url}\ntruncated: false\nextraction: pdf\n\n## Page 1\n\n{escaped}"
        )
