"""Extraction benchmark: runvil's render_html against the Python extractors people use.

Runs, in one process and on the same pages of the development set
(``../shared/extraction-dev``, read at run time and never copied), these extractors:

- ``runvil``: ``render_html(html, url, raw=False)``;
- ``trafilatura-txt`` and ``trafilatura-md``: trafilatura 2.3 ``extract`` (txt and markdown);
- ``readability+md``: readability-lxml 0.9 ``Document.summary`` then markdownify (ATX);
- ``mcp-fetch-py``: the MCP fetch server's pipeline in pure-Python mode, readabilipy
  ``simple_json_from_html_string(use_readability=False)`` then markdownify (ATX).

Scores are word 4-gram shingle precision and recall against the ground-truth text, after
stripping markdown syntax and normalising text (NFKC, quotes, dashes, spaces, case); F1 comes from
mean precision and mean recall. Article pages are scored by source, then pooled. Non-article
pages report recall against the page's visible text, since they must come back whole. The
trafilatura pages, which carry snippets only, report the share of ``with`` snippets found and of
``without`` snippets absent.

CPU is ``time.process_time`` per page, the fastest of ``--repeat`` runs, with the extractors
interleaved page by page so that load from other work on the machine weighs on all alike. Peak
memory is the growth of the process's peak RSS
(VmHWM, reset through /proc/self/clear_refs) over the RSS before the page, taken in a separate
pass so it does not disturb the timings. The 8 MiB check renders one synthetic page made of
development pages' bodies, then the worst shapes per byte (a huge table, list, links, tiny
paragraphs, prose paragraphs, flat text, deep nesting), each in a forked child.

Usage: ``python bench/extraction.py [--data DIR] [--only NAME,...] [--repeat N] [--worst N]``
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "extraction-dev"
PLACEHOLDER_URL = "https://example.invalid/page"

Extractor = Callable[[str, str], str]


# --- extractors --------------------------------------------------------------------------------


def runvil_extractor() -> Extractor:
    from runvil.web._fetch.extract import render_html

    def run(html: str, url: str) -> str:
        return render_html(html, url, False)[0]

    return run


def trafilatura_extractor(output_format: str) -> Extractor:
    import trafilatura

    def run(html: str, url: str) -> str:
        text = trafilatura.extract(html, url=url, output_format=output_format)
        return text or ""

    return run


def readability_extractor() -> Extractor:
    from markdownify import markdownify
    from readability import Document

    def run(html: str, url: str) -> str:
        try:
            summary = Document(html, url=url).summary(html_partial=True)
        except Exception:
            return ""
        return str(markdownify(summary, heading_style="ATX"))

    return run


def mcp_fetch_extractor() -> Extractor:
    from markdownify import markdownify
    from readabilipy.simple_json import simple_json_from_html_string

    def run(html: str, url: str) -> str:
        try:
            result = simple_json_from_html_string(html, use_readability=False)
        except Exception:
            return ""
        content = result.get("content")
        if not content:
            return ""  # the server answers "<error>Page failed to be simplified from HTML</error>"
        return str(markdownify(content, heading_style="ATX"))

    return run


EXTRACTORS: dict[str, Callable[[], Extractor]] = {
    "runvil": runvil_extractor,
    "trafilatura-txt": lambda: trafilatura_extractor("txt"),
    "trafilatura-md": lambda: trafilatura_extractor("markdown"),
    "readability+md": readability_extractor,
    "mcp-fetch-py": mcp_fetch_extractor,
}


# --- scoring -----------------------------------------------------------------------------------

_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_LINE_SYNTAX = re.compile(r"(?m)^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+)")
_MD_FENCE = re.compile(r"(?m)^[ \t]*(?:```|~~~)[^\n]*$")
_MD_TABLE_RULE = re.compile(r"(?m)^[ \t]*\|?[ \t:|-]*-{3,}[ \t:|-]*$")
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|`+|~~)")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")
_QUOTES = str.maketrans(
    {
        "‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
        "′": "'", "″": '"', "«": '"', "»": '"', "–": "-", "—": "-", "−": "-",
        "\u00a0": " ", "\u200b": "", "\u00ad": "", "|": " ",
    }
)  # fmt: skip
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]|\w+")
_SPACE = re.compile(r"\s+")
_NO_SPACE_BEFORE = re.compile(r" ([.,;:!?)\]}%])")
_NO_SPACE_AFTER = re.compile(r"([(\[{]) ")


def strip_markdown(text: str) -> str:
    text = _MD_FENCE.sub("", text)
    text = _MD_TABLE_RULE.sub("", text)
    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_LINE_SYNTAX.sub("", text)
    text = _MD_ESCAPE.sub(r"\1", text)
    return _MD_EMPHASIS.sub("", text)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES).replace("…", "...")
    text = _SPACE.sub(" ", text).strip()
    text = _NO_SPACE_BEFORE.sub(r"\1", text)
    text = _NO_SPACE_AFTER.sub(r"\1", text)
    return text.casefold()


def shingles(text: str, size: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    if len(tokens) < size:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def precision_recall(predicted: str, truth: str) -> tuple[float, float]:
    got = shingles(normalise(strip_markdown(predicted)))
    want = shingles(normalise(truth))
    if not want:
        return (1.0, 1.0) if not got else (0.0, 1.0)
    if not got:
        return 0.0, 0.0
    common = sum((got & want).values())
    return common / sum(got.values()), common / sum(want.values())


def snippet_rates(
    predicted: str, with_: list[str], without: list[str]
) -> tuple[int, int, int, int]:
    text = normalise(strip_markdown(predicted))
    found = sum(1 for snippet in with_ if normalise(snippet) in text)
    absent = sum(1 for snippet in without if normalise(snippet) not in text)
    return found, len(with_), absent, len(without)


# --- data --------------------------------------------------------------------------------------


@dataclass
class Page:
    id: str
    source: str
    kind: str
    page_type: str | None
    url: str
    text: str | None
    with_: list[str]
    without: list[str]
    html: str
    size: int


def load_pages(data: Path) -> list[Page]:
    pages = []
    with (data / "ground-truth.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            path = data / "pages" / f"{record['id']}.html.gz"
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                html = handle.read()
            pages.append(
                Page(
                    id=record["id"],
                    source=record["source"],
                    kind=record["kind"],
                    page_type=record.get("page_type"),
                    url=record.get("url") or PLACEHOLDER_URL,
                    text=record.get("text"),
                    with_=record.get("with") or [],
                    without=record.get("without") or [],
                    html=html,
                    size=len(html.encode("utf-8")),
                )
            )
    return pages


# --- measurement -------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    outputs: dict[str, str] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)


def _status_kb(key: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


def run_extractors(
    extractors: dict[str, Extractor], pages: list[Page], repeat: int
) -> list[Result]:
    """Time every extractor on every page, interleaved page by page, so a change in the
    machine's load during the run weighs on all extractors alike. Each page counts its fastest
    of ``repeat`` runs."""
    results = {name: Result(name) for name in extractors}
    for extractor in extractors.values():  # warm-up: imports, caches, lazy compiles
        extractor(pages[0].html, pages[0].url)
    gc.collect()
    for page in pages:
        for name, extractor in extractors.items():
            best = float("inf")
            output = ""
            for _ in range(repeat):
                started = time.process_time()
                output = extractor(page.html, page.url)
                best = min(best, time.process_time() - started)
            results[name].outputs[page.id] = output
            results[name].cpu[page.id] = best
    return list(results.values())


def measure_memory(result: Result, extractor: Extractor, pages: list[Page]) -> None:
    for page in pages:
        gc.collect()
        if not _reset_peak():
            return
        before = _status_kb("VmRSS")
        extractor(page.html, page.url)
        result.peak[page.id] = max(0, _status_kb("VmHWM") - before) * 1024


def big_page(pages: list[Page], target: int = 8 * 1024 * 1024) -> str:
    """One HTML document of ``target`` UTF-8 bytes built from development pages' bodies."""
    body_start = re.compile(r"<body[^>]*>", re.IGNORECASE)
    parts: list[str] = []
    size = 0
    head = "<!doctype html><html><head><title>Big page</title></head><body>"
    tail = "</body></html>"
    budget = target - len(head) - len(tail)
    while size < budget:
        for page in pages:
            match = body_start.search(page.html)
            body = page.html[match.end() :] if match else page.html
            body = re.sub(r"</(?:body|html)>", "", body, flags=re.IGNORECASE)
            chunk = f"<section>{body}</section>"
            encoded = len(chunk.encode("utf-8"))
            if size + encoded > budget:
                break
            parts.append(chunk)
            size += encoded
        else:
            continue
        break
    html = head + "".join(parts) + tail
    padding = target - len(html.encode("utf-8"))
    return head + "".join(parts) + "<p>" + "x" * max(0, padding - 7) + "</p>" + tail


def worst_pages(target: int = 8 * 1024 * 1024) -> dict[str, str]:
    """8 MiB pages of the shapes that cost the most per byte: one huge table, one huge list,
    links, many tiny paragraphs, many paragraphs long enough to score, long flat text, and
    paragraphs inside 11,000 open elements."""
    head = "<!doctype html><html><head><title>Worst case</title></head><body>"
    tail = "</body></html>"

    def fill(unit: str, before: str = "", after: str = "") -> str:
        room = target - len(head) - len(tail) - len(before) - len(after)
        body = unit * (room // len(unit))
        return head + before + body + "x" * (room - len(body)) + after + tail

    row = "<tr><td>cell one</td><td>cell two</td><td>cell 3</td></tr>"
    deep = "<div>x" * 11_000
    return {
        "table rows": fill(row, "<table>", "</table>"),
        "list items": fill("<li>list item text</li>", "<ul>", "</ul>"),
        "links": fill('<a href="/p/1">link</a> '),
        "tiny paragraphs": fill("<p>tiny para.</p>"),
        "prose paragraphs": fill("<p>A short paragraph of prose, with commas.</p>"),
        "flat text": fill("word "),
        "deep nesting": fill("<p>filler text here.</p>", deep),
    }


def big_page_line(
    html: str, size: int, raw: bool, name: str = "8 MiB page", max_chars: int | None = None
) -> str:
    """Render the 8 MiB page in a forked child, so its peak RSS is its own and not the
    allocator's leftovers from earlier pages."""
    import os

    from runvil.web._fetch.extract import render_html

    as_fetch = "" if max_chars is None else f", max_chars={max_chars} (as web/fetch)"
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child measures, reports one line, and exits at once
        os.close(read_end)
        gc.collect()
        _reset_peak()
        before = _status_kb("VmRSS")
        started = time.process_time()
        text, label = render_html(html, PLACEHOLDER_URL, raw, max_chars=max_chars)
        cpu = time.process_time() - started
        peak = max(0, _status_kb("VmHWM") - before) * 1024
        line = (
            f"{name} ({size} bytes), raw={raw}{as_fetch}: {cpu:.2f} s CPU, "
            f"peak +{peak / 1e6:.1f} MB ({peak / size:.1f}x its size), {label}, {len(text)} chars"
        )
        os.write(write_end, line.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        line = reader.read().decode()
    os.waitpid(child, 0)
    return line


# --- report ------------------------------------------------------------------------------------


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _prf(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    if not pairs:
        return 0.0, 0.0, 0.0
    p = statistics.fmean(pair[0] for pair in pairs)
    r = statistics.fmean(pair[1] for pair in pairs)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def report(results: list[Result], pages: list[Page], worst: int) -> dict[str, Any]:
    articles = [p for p in pages if p.kind == "article" and p.text]
    snippets = [p for p in pages if p.kind == "article" and not p.text]
    others = [p for p in pages if p.kind == "non-article"]
    summary: dict[str, Any] = {}
    header = (
        f"{'extractor':<16} {'P':>6} {'R':>6} {'F1':>6} | {'wcxb':>5} {'mozrd':>5} | "
        f"{'with':>5} {'w/o':>5} | {'nonart R':>8} | {'med ms':>7} {'p95 ms':>7} {'MB/s':>6} | "
        f"{'peak MB':>7}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        pairs = {p.id: precision_recall(result.outputs[p.id], p.text or "") for p in articles}
        p, r, f1 = _prf(list(pairs.values()))
        by_source = {
            source: _prf([pairs[pg.id] for pg in articles if pg.source == source])[2]
            for source in ("wcxb", "mozilla-readability")
        }
        found = total = absent = total_without = 0
        for page in snippets:
            a, b, c, d = snippet_rates(result.outputs[page.id], page.with_, page.without)
            found, total, absent, total_without = (
                found + a,
                total + b,
                absent + c,
                total_without + d,
            )
        other_recall = statistics.fmean(
            precision_recall(result.outputs[pg.id], pg.text or "")[1] for pg in others
        )
        cpu = list(result.cpu.values())
        megabytes = sum(pg.size for pg in pages) / 1e6
        peak = max(result.peak.values(), default=0) / 1e6
        line = (
            f"{result.name:<16} {p:6.3f} {r:6.3f} {f1:6.3f} | {by_source['wcxb']:5.3f} "
            f"{by_source['mozilla-readability']:5.3f} | {found / max(total, 1):5.3f} "
            f"{absent / max(total_without, 1):5.3f} | {other_recall:8.3f} | "
            f"{statistics.median(cpu) * 1000:7.2f} {_percentile(cpu, 0.95) * 1000:7.2f} "
            f"{megabytes / sum(cpu):6.2f} | {peak:7.1f}"
        )
        print(line)
        summary[result.name] = {
            "P": p,
            "R": r,
            "F1": f1,
            "median_ms": statistics.median(cpu) * 1000,
            "nonarticle_R": other_recall,
        }
        if worst and result.name == "runvil":
            ranked = sorted(
                pairs.items(), key=lambda item: 2 * item[1][0] * item[1][1] / (sum(item[1]) or 1)
            )
            print("  worst article pages (P, R):")
            for page_id, (pp, rr) in ranked[:worst]:
                print(f"    {page_id:<50} {pp:.2f} {rr:.2f}")
            nonart = sorted(
                (
                    (pg.id, precision_recall(result.outputs[pg.id], pg.text or "")[1])
                    for pg in others
                ),
                key=lambda item: item[1],
            )
            print("  worst non-article pages (R):")
            for page_id, rr in nonart[:worst]:
                print(f"    {page_id:<50} {rr:.2f}")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", default=",".join(EXTRACTORS))
    parser.add_argument("--repeat", type=int, default=1, help="runs per page; the fastest counts")
    parser.add_argument("--worst", type=int, default=0, help="list runvil's N worst pages")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--no-big", action="store_true")
    args = parser.parse_args()
    pages = load_pages(args.data)
    print(f"{len(pages)} pages, {sum(p.size for p in pages) / 1e6:.1f} MB, from {args.data}")
    extractors = {name: EXTRACTORS[name]() for name in args.only.split(",")}
    results = run_extractors(extractors, pages, args.repeat)
    if not args.no_memory:
        for result in results:
            measure_memory(result, extractors[result.name], pages)
    report(results, pages, args.worst)
    names = [r.name for r in results]
    if "runvil" in names and "trafilatura-txt" in names:
        ours = statistics.median(results[names.index("runvil")].cpu.values())
        theirs = statistics.median(results[names.index("trafilatura-txt")].cpu.values())
        print(f"median CPU ratio runvil / trafilatura-txt: {ours / theirs:.3f}")
    if not args.no_big and "runvil" in names:
        html = big_page(pages)
        size = len(html.encode("utf-8"))
        for raw in (False, True):
            print(big_page_line(html, size, raw))
        for name, html in worst_pages().items():
            size = len(html.encode("utf-8"))
            for raw in (False, True):
                print(big_page_line(html, size, raw, f"8 MiB {name}"))
                print(big_page_line(html, size, raw, f"8 MiB {name}", 40_000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
