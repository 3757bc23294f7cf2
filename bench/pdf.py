"""PDF benchmark: runvil's PDF text (pdfium, through pypdfium2) against pypdf, on the same files.

For each file, both libraries extract the text of every page, in this process, one after the
other, ``--repeat`` times (default 7); the figures are the medians (and the spread, min-max) of:

- **CPU ms per page**: ``time.process_time`` over the whole file, divided by its pages;
- **MB/s**: the file's size over that CPU time.

The runvil side is :func:`runvil.web._fetch._pdfworker.convert`, the very function the worker
process runs (open, every page's text, cleaning), with no page or character limit; the pypdf
side is ``PdfReader(...).pages[i].extract_text()`` for every page.
Then the whole path a fetch takes is timed too: :func:`runvil.web._fetch.pdf.convert_pdf`, which
ships the bytes to a warm worker process and reads the text back (wall time, since the work is
in the child), and the one-time cost of starting a worker.

The files: PDFs written by ``tests/fixtures/pdfs.py`` (a 50-page report and a 400-page book of
prose, Helvetica, compressed content streams), and the two TeX-made manuals Debian installs
under ``/usr/share/doc`` when they are present (embedded Type 1 fonts, real layout).

Usage: ``python bench/pdf.py [--repeat N] [--json]`` (needs the ``bench`` extra for pypdf).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SYSTEM_PDFS = (
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
)
PROSE = (
    "The committee met on the third day to review the figures for the quarter, and found that "
    "revenue had risen in every region except the north, where the new warehouse had not yet "
    "opened."
)


def corpus() -> dict[str, bytes]:
    from tests.fixtures.pdfs import text_pdf

    def pages(count: int) -> list[list[str]]:
        lines = [PROSE[i : i + 90] for i in range(0, len(PROSE), 90)]
        return [[f"Section {p}.{n}: " + line for n in range(12) for line in lines]
                for p in range(count)]

    files = {
        "report (50 pages, generated)": text_pdf(pages(50), compress=True),
        "book (400 pages, generated)": text_pdf(pages(400), compress=True),
    }
    for path in SYSTEM_PDFS:
        if path.is_file():
            files[f"{path.name} (TeX)"] = path.read_bytes()
    return files


def pdfium_text(data: bytes) -> tuple[int, int]:
    from runvil.web._fetch._pdfworker import convert

    reply = convert(data, 1 << 30, 1 << 40)
    assert reply["status"] == "ok", reply
    return len(reply["pages"]), sum(len(page) for page in reply["pages"])


def pypdf_text(data: bytes) -> tuple[int, int]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    texts = [page.extract_text() for page in reader.pages]
    return len(texts), sum(len(text) for text in texts)


def cpu_of(function: Any, data: bytes) -> tuple[float, tuple[int, int]]:
    start = time.process_time()
    result = function(data)
    return time.process_time() - start, result


def _worker_cpu() -> float:
    """CPU seconds the live worker processes have used (Linux: /proc/PID/stat)."""
    import os

    from runvil.web._fetch import pdf

    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for worker in list(pdf._workers):
        try:
            fields = Path(f"/proc/{worker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def through_worker(data: bytes, repeat: int) -> dict[str, float]:
    """convert_pdf, the path a fetch takes (bytes to a warm worker, the text back): CPU of this
    process and the worker together (median of ``repeat``), and the wall time of the first call,
    which starts the worker."""
    from runvil.web._fetch import pdf
    from runvil.web._fetch.admission import admit_url
    from runvil.web._fetch.content import BodyKind
    from runvil.web._fetch.http import Page

    page = Page(admit_url("https://bench.example/file.pdf"), BodyKind.PDF, None, data)

    async def once() -> tuple[float, float]:
        wall, cpu, child = time.perf_counter(), time.process_time(), _worker_cpu()
        held = await pdf.convert_pdf(page, max_pages=100_000, char_limit=1 << 30, timeout=120)
        assert not isinstance(held, str), held
        cpu = time.process_time() - cpu + _worker_cpu() - child
        return time.perf_counter() - wall, cpu

    async def run() -> dict[str, float]:
        for worker in list(pdf._workers):  # a cold start: no warm worker left
            worker.close()
        pdf._local.__dict__.clear()
        first_wall, _ = await once()
        warm = [(await once())[1] for _ in range(repeat)]
        return {"first_wall_s": first_wall, "warm_cpu_s": statistics.median(warm)}

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import pypdf
    import pypdfium2

    rows: list[dict[str, Any]] = []
    for name, data in corpus().items():
        runs: dict[str, list[float]] = {"pypdfium2": [], "pypdf": []}
        pages: dict[str, int] = {}
        chars: dict[str, int] = {}
        pdfium_text(data), pypdf_text(data)  # warm-up: imports, first-use caches
        for _ in range(args.repeat):
            for library, function in (("pypdfium2", pdfium_text), ("pypdf", pypdf_text)):
                cpu, (count, length) = cpu_of(function, data)
                runs[library].append(cpu)
                pages[library], chars[library] = count, length
        for library, cpus in runs.items():
            median = statistics.median(cpus)
            rows.append({
                "file": name, "bytes": len(data), "library": library, "pages": pages[library],
                "chars": chars[library], "cpu_s_median": median,
                "cpu_s_min": min(cpus), "cpu_s_max": max(cpus),
                "ms_per_page": 1000 * median / pages[library],
                "mb_per_s": len(data) / 1e6 / median,
            })
        rows[-2]["worker"] = through_worker(data, args.repeat)

    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"pypdfium2 {pypdfium2.version.PYPDFIUM_INFO} (pdfium {pypdfium2.version.PDFIUM_INFO}),"
          f" pypdf {pypdf.__version__}, {args.repeat} repetitions, medians (min-max)")
    print(f"{'file':34} {'KB':>6} {'library':>9} {'pages':>5} {'ms/page':>18} {'MB/s':>7}"
          f" {'chars':>8}")
    for row in rows:
        spread = (f"{1000 * row['cpu_s_min'] / row['pages']:.2f}-"
                  f"{1000 * row['cpu_s_max'] / row['pages']:.2f}")
        print(f"{row['file']:34} {row['bytes'] / 1024:6.0f} {row['library']:>9} "
              f"{row['pages']:5d} {row['ms_per_page']:7.2f} ({spread:>9}) "
              f"{row['mb_per_s']:7.2f} {row['chars']:8d}")
        if "worker" in row:
            worker = row["worker"]
            print(f"{'':34} through a warm worker: {1000 * worker['warm_cpu_s']:.1f} ms CPU "
                  f"(both processes); first call, starting the worker: "
                  f"{1000 * worker['first_wall_s']:.0f} ms wall")


if __name__ == "__main__":
    main()
