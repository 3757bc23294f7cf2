"""PDFs as text (``FetchPolicy(pdf=True)``): which responses are PDFs, and converting one
in a worker process under the fetch's limits.

**Which responses.** ``application/pdf``, and ``application/octet-stream`` whose body starts
with ``%PDF-`` (servers that do not know better send PDFs that way):
:func:`~runvil.web._fetch.content.pdf_admission` decides on the head, and the fetch refuses an
octet-stream body that turns out not to start so, with the seed's content-type text. Without
``pdf`` both stay the seed's refusals. A PDF is read like HTML: whole, or refused whole when over
the byte cap (a prefix of a PDF is not a PDF).

**Converting.** pdfium (through pypdfium2) runs in a child process, :mod:`._pdfworker`, that is
started with an address-space limit and killed when the conversion's time is up: a hostile PDF
can make pdfium spin for minutes or allocate gigabytes, and neither can be stopped in a thread.
Each conversion also has a CPU budget of its own, :data:`WORKER_CPU_SECONDS`, enforced by the
kernel in the worker (``RLIMIT_CPU``), well under the call's time. Workers are kept warm between
conversions (starting one and loading pdfium costs about 0.2 s): each of the :data:`PDF_WORKERS`
threads of this module's pool owns at most one worker process and hands it one job at a time.
The pool is shared fairly between runs (:mod:`.fairpool`): a run converts one PDF at a time, and
the least served run goes next, so one run's bombs hold at most one worker, for at most the CPU
budget each, and never queue another run's PDF behind them. The time limit (the policy's
``timeout``, 20 s) covers the wait and the conversion together, so under any load a call is
answered in time. A worker that was killed, crashed or answered out of protocol is discarded,
and the next job starts a new one.

**Escaped.** The worker sends each page's raw text; :func:`~.pagetext.pdf_text` writes the
headings and escapes every line exactly as a line of a rendered page's text is escaped, so a PDF
cannot write a link, an image, HTML or a fake ``## Page`` heading into the result.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, NamedTuple

from runvil._tools import RunScope
from runvil.web._fetch import _pdfworker, failures
from runvil.web._fetch.content import BodyKind
from runvil.web._fetch.continuation import Held
from runvil.web._fetch.fairpool import FairPool
from runvil.web._fetch.http import Page
from runvil.web._fetch.pagetext import PageText, cut_text, pdf_text

__all__ = ["PDF_WORKERS", "WORKER_CPU_SECONDS", "WORKER_MEMORY", "convert_pdf"]

#: Conversions that run at once, per process (each in a worker process of its own).
PDF_WORKERS = 2
#: The CPU seconds one conversion may use (a fifth of the default 20 s time limit; a 400-page
#: book of prose takes 0.3 s).
WORKER_CPU_SECONDS = 4
#: The address space one worker may use, in bytes. pdfium needs a few times a big PDF's size;
#: a bomb that needs more fails inside the worker.
WORKER_MEMORY = 1 << 30
#: The most reply bytes read from a worker per kept character (4 for UTF-8, 2 for JSON escapes)
#: plus a margin for the JSON around it: a worker answering more is out of protocol.
_REPLY_BYTES_PER_CHAR = 8
_REPLY_MARGIN = 64 * 1024
#: The largest number the request header carries (page and character limits are lowered to it).
_U32 = 0xFFFFFFFF

async def convert_pdf(
    page: Page, *, max_pages: int, char_limit: int, timeout: float, run: RunScope | None = None
) -> Held | str:
    """``page`` (a PDF) as text with one ``## Page N`` heading per page, at most ``max_pages``
    pages and ``char_limit`` characters of it; or the soft failure text naming the URL.
    ``run`` is the run the conversion is for (None: a run of its own), which the pool is fair
    between.

    Never raises for anything the PDF does. Cancelling the call kills the conversion.
    """
    assert page.kind is BodyKind.PDF
    display = page.target.display
    if len(page.body) > _pdfworker.MAX_BODY:  # only a policy with a byte cap over 1 GiB
        return failures.pdf_over_limits(display).text
    job = _Job(
        _pdfworker.REQUEST.pack(
            _pdfworker.MAGIC, min(max_pages, _U32), min(char_limit, _U32), len(page.body)
        )
        + page.body,
        reply_cap=(char_limit + _pdfworker.LOOKAHEAD) * _REPLY_BYTES_PER_CHAR + _REPLY_MARGIN,
    )
    future = _pool.submit(run or RunScope(), lambda: _convert(job, char_limit), len(page.body))
    try:
        converted = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    except TimeoutError:
        future.cancel()
        job.kill()
        return failures.pdf_over_limits(display).text
    except BaseException:
        future.cancel()
        job.kill()  # the call was cancelled: so is the conversion
        raise
    if isinstance(converted, _Converted):
        return Held(page.target.href, converted.text, "pdf", converted.cut)
    if converted == "encrypted":
        return failures.pdf_encrypted(display).text
    if converted == "damaged":
        return failures.pdf_damaged(display).text
    if converted == "no-text":
        return failures.pdf_no_text(display).text
    return failures.pdf_over_limits(display).text  # killed, out of limits or out of protocol


class _Converted(NamedTuple):
    text: PageText
    cut: bool


def _convert(job: _Job, char_limit: int) -> _Converted | str | None:
    """Run ``job`` and make its text, in the pool thread: escaping up to the hold limit's 8 Mi
    characters is seconds of work, which belongs to the run's share of the pool, not to the
    event loop. A failure is the worker's status, or None for a worker that failed."""
    reply = _run_job(job)
    if reply is None:  # killed, crashed (out of memory) or out of protocol
        return None
    status = reply.get("status")
    if status == "ok":
        pages, more = reply.get("pages"), reply.get("cut")
        if (
            isinstance(pages, list)
            and all(isinstance(text, str) for text in pages)
            and isinstance(more, bool)
        ):
            text = pdf_text(pages)
            return _Converted(cut_text(text, char_limit), more or len(text) > char_limit)
        return None
    return status if isinstance(status, str) else None


# -- the workers -----------------------------------------------------------------------------

#: The threads, each owning at most one worker process for its whole life.
_pool = FairPool(PDF_WORKERS, "runvil-pdf", idle_seconds=None)
_local = threading.local()
_workers: set[_Worker] = set()
_workers_lock = threading.Lock()

_BOOT = (
    "import sys; sys.path[:0] = sys.argv[3:]; "
    "from runvil.web._fetch._pdfworker import main; main()"
)


def _worker_command() -> list[str]:
    """The child's command line. ``-I`` (isolated): no ``PYTHON*`` variable, user site or
    working directory can change what the child imports; instead it is told where this runvil
    and pypdfium2 live, so it loads the same code the server runs."""
    roots = [str(Path(__file__).resolve().parents[3])]
    spec = importlib.util.find_spec("pypdfium2")
    if spec is not None and spec.origin is not None:
        roots.append(str(Path(spec.origin).resolve().parents[1]))
    return [
        sys.executable, "-I", "-c", _BOOT, str(WORKER_MEMORY), str(WORKER_CPU_SECONDS),
        *dict.fromkeys(roots),
    ]


class _Worker:
    """One worker process, owned by one pool thread."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            _worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self.jobs = 0
        with _workers_lock:
            _workers.add(self)

    def usable(self) -> bool:
        return self.process.poll() is None and self.jobs < _pdfworker.MAX_JOBS

    def exchange(self, request: bytes, reply_cap: int) -> dict[str, Any] | None:
        """Send one request and read its reply; None when the worker failed in any way."""
        self.jobs += 1
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(request)
            stdin.flush()
            head = _read_exactly(stdout, _pdfworker.REPLY.size)
            if head is None:
                return None
            (length,) = _pdfworker.REPLY.unpack(head)
            if length > reply_cap:
                return None
            data = _read_exactly(stdout, length)
        except OSError:
            return None
        if data is None:
            return None
        try:
            reply = json.loads(data)
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def close(self) -> None:
        """Stop the process (it exits on end of input; a stuck one is killed) and reap it."""
        with _workers_lock:
            _workers.discard(self)
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


class _Job:
    """One conversion: its request, and the process running it (so a deadline can kill it)."""

    def __init__(self, request: bytes, reply_cap: int) -> None:
        self.request = request
        self.reply_cap = reply_cap
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.killed = False

    def kill(self) -> None:
        """End the job now: a job not started never starts, a running one loses its process."""
        with self.lock:
            self.killed = True
            if self.process is not None:
                self.process.kill()


def _run_job(job: _Job) -> dict[str, Any] | None:
    """Run ``job`` on this pool thread's worker (in the pool thread)."""
    worker: _Worker | None = getattr(_local, "worker", None)
    if worker is not None and not worker.usable():
        worker.close()
        worker = _local.worker = None
    with job.lock:
        if job.killed:
            return None
        if worker is None:
            worker = _local.worker = _Worker()
        job.process = worker.process
    try:
        reply = worker.exchange(job.request, job.reply_cap)
    finally:
        with job.lock:
            job.process = None
    if reply is None or job.killed:
        worker.close()
        _local.worker = None
    return reply


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


@atexit.register
def _stop_workers() -> None:
    """Let every worker go at exit (each exits on end of input)."""
    with _workers_lock:
        workers = list(_workers)
    for worker in workers:
        worker.close()
