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

``--bombs B [B ...]`` measures something else: what inflation bombs cost another caller. A
hostile run (``--runs one``; ``each``: every bomb in a run of its own) starts B conversions of a
bomb (one page naming a 16 MiB compressed stream 40 times: 17 KB that inflate to 640 MiB), and
0.05 s later an innocent run converts a one-page PDF; the innocent conversion's wall time and
outcome, and the whole scene's time, through :func:`~runvil.web._fetch.pdf.convert_pdf` with the
fetch's default limits (20 s), workers warm, ``--repeat`` times, medians. To measure another
checkout: ``PYTHONPATH=DIR/src python bench/pdf.py --bombs ...``.
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


def bombs(counts: list[int], runs: str, repeat: int) -> list[dict[str, Any]]:
    """The ``--bombs`` scenes (module docstring)."""
    import inspect

    from tests.fixtures.pdfs import inflating_pdf, text_pdf

    from runvil._tools import RunScope
    from runvil.web._fetch import pdf
    from runvil.web._fetch.admission import admit_url
    from runvil.web._fetch.content import BodyKind
    from runvil.web._fetch.http import Page

    fair = "run" in inspect.signature(pdf.convert_pdf).parameters
    prefix = "the PDF from https://bench.example/file.pdf "
    bomb = inflating_pdf(40 * 16 * 2**20)
    small = text_pdf(["A one-page report."])

    async def convert(body: bytes, run: RunScope) -> tuple[float, str]:
        page = Page(admit_url("https://bench.example/file.pdf"), BodyKind.PDF, None, body)
        extra: dict[str, Any] = {"run": run} if fair else {}
        began = time.perf_counter()
        held = await pdf.convert_pdf(page, max_pages=200, char_limit=40_001, timeout=20.0,
                                     **extra)
        outcome = held if isinstance(held, str) else "ok: " + held.text
        return time.perf_counter() - began, outcome

    async def scene(count: int) -> dict[str, Any]:
        await asyncio.gather(convert(small, RunScope()), convert(small, RunScope()))  # warm
        hostile = RunScope()

        async def innocent() -> tuple[float, str]:
            await asyncio.sleep(0.05)
            return await convert(small, RunScope())

        began = time.perf_counter()
        *hostile_results, (took, outcome) = await asyncio.gather(
            *(convert(bomb, hostile if runs == "one" else RunScope()) for _ in range(count)),
            innocent(),
        )
        return {"innocent_s": took, "innocent": outcome[:60],
                "scene_s": time.perf_counter() - began,
                "bombs": sorted({text.replace(prefix, "")[:36] for _, text in hostile_results})}

    rows = []
    for count in counts:
        samples = [asyncio.run(scene(count)) for _ in range(repeat)]
        rows.append({
            "bombs": count, "innocent_s": statistics.median(s["innocent_s"] for s in samples),
            "innocent_max_s": max(s["innocent_s"] for s in samples),
            "scene_s": statistics.median(s["scene_s"] for s in samples),
            "innocent": sorted({s["innocent"] for s in samples}),
            "bomb_outcomes": sorted({o for s in samples for o in s["bombs"]}),
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bombs", type=int, nargs="+")
    parser.add_argument("--runs", default="one", choices=("one", "each"))
    args = parser.parse_args()
    if args.bombs:
        rows = bombs(args.bombs, args.runs, args.repeat)
        if args.json:
            print(json.dumps(rows, indent=2))
            return
        print(f"bombs in {args.runs} run(s), {args.repeat} repetitions, medians")
        for row in rows:
            print(f"{row['bombs']:2d} bombs: innocent {row['innocent_s']:6.2f} s "
                  f"(max {row['innocent_max_s']:.2f}) {row['innocent']}; scene "
                  f"{row['scene_s']:.2f} s; bombs {row['bomb_outcomes']}")
        return

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
