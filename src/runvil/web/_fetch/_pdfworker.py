"""The PDF worker: a child process that turns PDF bytes into text with pdfium.

Why a process and not a thread: pdfium is C++ that no deadline can interrupt, and a PDF is a
program for it. A content stream compressed a thousandfold fits in the 8 MiB byte cap and
inflates to gigabytes (measured: a 1 MB file, 18 s of CPU and 1.9 GB of memory before the first
page's text was out). A thread running that could be neither stopped nor capped; a process can
be killed the moment its time is up (:mod:`runvil.web._fetch.pdf` does) and is started with an
address-space limit, so a bomb ends as an out-of-memory failure of one child, never of the
server. Each job also has a CPU budget (``RLIMIT_CPU``, raised by the budget before each job):
a conversion past it is ended by the kernel (``SIGXCPU``) long before the call's own time is up,
so a bomb holds a worker for seconds of CPU, not for the whole time limit.

The protocol, over the child's stdin and stdout (nothing else ever writes to that stdout: the
file descriptor pdfium could print on is pointed at ``/dev/null``):

- request: :data:`REQUEST` (``b"RVP1"``, page limit, character limit, body length), then the body;
- reply: a 4-byte big-endian length, then that many bytes of JSON: ``{"status": "ok", "pages":
  [...], "cut": bool}`` (each page's text, raw: the parent escapes it and writes the headings),
  or ``{"status": S}`` with S one of ``encrypted``, ``damaged``, ``no-text``, ``over-limits``.

A worker serves jobs one at a time, exits on end of input, after :data:`IDLE_SECONDS` without a
job, or after :data:`MAX_JOBS` jobs (so whatever pdfium leaks cannot pile up).

The text of each page is cleaned (line ends to ``\\n``, control characters dropped, surrounding
blank space trimmed). Pages are sent until, counted as the parent writes them (each under a
``## Page N`` heading, a blank line apart), they pass the character limit by
:data:`LOOKAHEAD` (the last page is cut there): the parent's escaping of a character can depend
on the characters after it, so the part it keeps is escaped as the whole text would be.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import sys
from typing import IO, Any

#: The request header: magic, page limit, character limit, body length.
REQUEST = struct.Struct("!4sIII")
MAGIC = b"RVP1"
#: The reply header: the JSON's length.
REPLY = struct.Struct("!I")
#: A worker exits after this many seconds without a job...
IDLE_SECONDS = 120.0
#: ...or after this many jobs.
MAX_JOBS = 100
#: The largest body a request may carry (a little over any byte cap a policy would set).
MAX_BODY = 1 << 30
#: Characters sent past the character limit (see the module docstring).
LOOKAHEAD = 4096

# pdfium's document-loading error codes (fpdfview.h, FPDF_ERR_*).
_ERR_PASSWORD = 4
_ERR_SECURITY = 5

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_LINE_ENDS = re.compile("\r\n?")


def heading_length(number: int) -> int:
    """The length of the heading the parent writes over page ``number`` (``## Page N``)."""
    return 8 + len(str(number))


def clean(text: str) -> str:
    """A page's text as pdfium gives it, made plain: ``\\n`` line ends, no control characters
    (tabs and line ends kept), no blank space around it."""
    return _CONTROLS.sub("", _LINE_ENDS.sub("\n", text)).strip()


def convert(body: bytes, max_pages: int, char_limit: int) -> dict[str, Any]:
    """The reply to one request (never raises for anything the PDF does)."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(body)
    except pdfium.PdfiumError as err:
        locked = err.err_code in (_ERR_PASSWORD, _ERR_SECURITY)
        return {"status": "encrypted" if locked else "damaged"}
    try:
        return _text(document, max_pages, char_limit)
    finally:
        document.close()


def _text(document: Any, max_pages: int, char_limit: int) -> dict[str, Any]:
    total = len(document)
    pages: list[str] = []
    length = 0  # of the text the parent writes from the pages so far
    wanted = char_limit + LOOKAHEAD
    has_text = False
    cut = total > max_pages
    for index in range(min(total, max_pages)):
        text = _page_text(document, index)
        has_text = has_text or bool(text)
        length += (2 if pages else 0) + heading_length(index + 1)
        if text:
            text = text[: max(0, wanted - length - 2)]
            length += 2 + len(text)
        pages.append(text)
        if length >= wanted:
            cut = True  # the caller keeps no more than char_limit characters
            break
    if not has_text:
        return {"status": "no-text"}
    return {"status": "ok", "pages": pages, "cut": cut}


def _page_text(document: Any, index: int) -> str:
    """One page's text, or ``""`` for a page pdfium cannot load (the others still count)."""
    import pypdfium2 as pdfium

    try:
        page = document[index]
    except pdfium.PdfiumError:
        return ""
    try:
        textpage = page.get_textpage()
        try:
            return clean(textpage.get_text_bounded())
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        return ""
    finally:
        page.close()


def _limit_resources(memory: int) -> None:
    """Cap the address space (a PDF bomb then fails an allocation here, not in the server) and
    turn core dumps off (a crash in pdfium must not write the hostile file's memory to disk)."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's kill at the deadline still holds
        return
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def cpu_budget(seconds: int) -> None:
    """Let the next job use ``seconds`` more CPU seconds (at least; the limit is in whole
    seconds): past them the kernel sends ``SIGXCPU``, whose default action ends the process."""
    try:
        import resource
    except ImportError:  # not a POSIX system: the parent's kill at the deadline still holds
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _wait_for_input(stream: IO[bytes]) -> bool:
    """Whether a request starts within :data:`IDLE_SECONDS` (always True where pipes cannot
    be waited on with a timeout)."""
    if os.name != "posix":
        return True
    import select

    readable, _, _ = select.select([stream], [], [], IDLE_SECONDS)
    return bool(readable)


def serve(requests: IO[bytes], replies: IO[bytes], cpu_seconds: int | None = None) -> None:
    """Answer requests until the input ends, the worker idles or has done its jobs; each
    conversion may use ``cpu_seconds`` of CPU (None: no limit of its own)."""
    for _ in range(MAX_JOBS):
        if not _wait_for_input(requests):
            return
        head = _read_exactly(requests, REQUEST.size)
        if head is None:
            return
        magic, max_pages, char_limit, length = REQUEST.unpack(head)
        if magic != MAGIC or length > MAX_BODY:
            return
        body = _read_exactly(requests, length)
        if body is None:
            return
        if cpu_seconds is not None:
            cpu_budget(cpu_seconds)
        try:
            reply = convert(body, max_pages, char_limit)
        except MemoryError:
            reply = {"status": "over-limits"}
        del body
        data = json.dumps(reply, ensure_ascii=False).encode("utf-8")
        replies.write(REPLY.pack(len(data)) + data)
        replies.flush()


def main() -> None:
    """The worker's entry point: ``argv[1]`` is the address-space limit in bytes, ``argv[2]``
    the CPU seconds each conversion may use."""
    memory, cpu_seconds = int(sys.argv[1]), int(sys.argv[2])
    _limit_resources(memory)
    requests = os.fdopen(0, "rb", buffering=0)  # unbuffered: select() sees every waiting byte
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # pdfium may print; only the protocol goes to the parent
    os.close(devnull)
    import pypdfium2  # noqa: F401  (loaded once, before the first job, while the parent waits)

    serve(requests, replies, cpu_seconds)


if __name__ == "__main__":
    main()
