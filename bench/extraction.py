"""Extraction benchmark: runvil's render_html against the Python extractors people use.

Runs, in one process and on the same pages of the development set
(``../shared/extraction-dev``, read at run time and never copied), these extractors:

- ``runvil``: ``render_html(html, url, raw=False)``;
- ``trafilatura-txt`` and ``trafilatura-md``: trafilatura 2.3 ``extract`` (txt and markdown);
- ``readability+md``: readability-lxml 0.9 ``Document.summary`` then markdownify (ATX);
- ``mcp-fetch-py``: the MCP fetch server's pipeline in pure-Python mode, readabilipy
  ``simple_json_from_html_string(use_readability=False)`` then markdownify (ATX).

Scores are word 4-gram shingle precision and recall against the ground-truth text, after
stripping markdown syntax (and any backslash before an ASCII punctuation character, which is how
markdown escapes page text) and normalising text (NFKC, quotes, dashes, spaces, case); F1 comes
from mean precision and mean recall. Article pages are scored by subset (news and blog articles,
other articles), by source and by ``page_type``. Non-article pages report recall against the
page's visible text, since they must come back whole. The trafilatura pages, which carry
snippets only, report the share of ``with`` snippets found, of ``without`` snippets absent, and
of all their snippets right (found or absent as they should be).

The held-out tenth: every page whose registered domain (from its ``url``; by ``id`` for a page
without one) hashes (SHA-256) into bucket 0 of 10 is set aside. It is skipped unless
``--holdout`` is given, which scores only it: the extractor is tuned on the other nine tenths and
the held-out score is measured once, at the end, to show how far its rules carry to other sites.

CPU is ``time.process_time`` per page, the fastest of ``--repeat`` runs, with the extractors
interleaved page by page so that load from other work on the machine weighs on all alike. Peak
memory is the growth of the process's peak RSS
(VmHWM, reset through /proc/self/clear_refs) over the RSS before the page, taken in a separate
pass so it does not disturb the timings. The 8 MiB check renders one synthetic page made of
development pages' bodies, then the worst shapes per byte (a huge table, list, links, tiny
paragraphs, prose paragraphs, flat text, deep nesting), each in a forked child.

Usage: ``python bench/extraction.py [--data DIR] [--only NAME,...] [--repeat N] [--worst N]
[--holdout] [--sample N] [--pages REGEX] [--no-memory] [--no-big]``
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
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

from _memory import reset_peak, status_kb

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "extraction-dev"
PLACEHOLDER_URL = "https://example.invalid/page"

# An extractor returns its text and, for runvil, the extraction label ("" for the others).
Extractor = Callable[[str, str], tuple[str, str]]
HOLDOUT_BUCKETS = 10
HOLDOUT_BUCKET = 0


# --- extractors --------------------------------------------------------------------------------


def runvil_extractor() -> Extractor:
    from runvil.web._fetch.extract import render_html

    def run(html: str, url: str) -> tuple[str, str]:
        return render_html(html, url, False)

    return run


def trafilatura_extractor(output_format: str) -> Extractor:
    import trafilatura

    def run(html: str, url: str) -> tuple[str, str]:
        text = trafilatura.extract(html, url=url, output_format=output_format)
        return text or "", ""

    return run


def readability_extractor() -> Extractor:
    from markdownify import markdownify
    from readability import Document

    def run(html: str, url: str) -> tuple[str, str]:
        try:
            summary = Document(html, url=url).summary(html_partial=True)
        except Exception:
            return "", ""
        return str(markdownify(summary, heading_style="ATX")), ""

    return run


def mcp_fetch_extractor() -> Extractor:
    from markdownify import markdownify
    from readabilipy.simple_json import simple_json_from_html_string

    def run(html: str, url: str) -> tuple[str, str]:
        try:
            result = simple_json_from_html_string(html, use_readability=False)
        except Exception:
            return "", ""
        content = result.get("content")
        if not content:  # the server: "<error>Page failed to be simplified from HTML</error>"
            return "", ""
        return str(markdownify(content, heading_style="ATX")), ""

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
# A backslash before ASCII punctuation is a markdown escape of the page's own text.
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
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
    news: bool
    url: str
    text: str | None
    with_: list[str]
    without: list[str]
    html: str
    size: int
    curated_text: str | None = None  # listing and collection pages: the main list only
    curated_without: list[str] = field(default_factory=list)

    @property
    def curated(self) -> bool:
        """A listing or collection page, scored on its main list (``curated_text``)."""
        return self.curated_text is not None


# A web-archive capture names the original URL after the capture's timestamp.
_ARCHIVED = re.compile(r"^https?://[^/]+/web/\d+[a-z_]*/(https?://.+)$", re.IGNORECASE)


def registered_domain(url: str | None) -> str | None:
    """The registered domain (eTLD+1, from the public suffix list ``tld`` ships) of ``url``, or
    of the original URL inside a web-archive capture; ``None`` without a URL."""
    if not url:
        return None
    from tld import get_fld

    archived = _ARCHIVED.match(url)
    if archived:
        url = archived.group(1)
    domain = get_fld(url, fail_silently=True)
    if domain:
        return str(domain).lower()
    host = re.sub(r"^[a-z]+://", "", url.lower()).split("/", 1)[0].split(":", 1)[0]
    return host.removeprefix("www.") or None


def is_held_out(page_id: str, url: str | None) -> bool:
    """Whether a page is in the held-out tenth: its registered domain (its id without a URL)
    hashes into :data:`HOLDOUT_BUCKET`, so every page of one site falls on the same side."""
    key = registered_domain(url) or f"id:{page_id}"
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % HOLDOUT_BUCKETS == HOLDOUT_BUCKET


def _sampled(page_id: str, sample: int) -> bool:
    """A fixed pseudo-random 1/``sample`` of the pages, for quick runs while iterating."""
    digest = hashlib.sha256(f"sample:{page_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % sample == 0


def load_pages(
    data: Path, holdout: bool = False, sample: int = 1, only: str | None = None
) -> list[Page]:
    """The pages of one split: the tuning nine tenths, or with ``holdout`` the held-out tenth.
    ``sample`` keeps one page in that many, ``only`` the pages whose id matches the regex.
    Pages outside the split are never read."""
    pattern = re.compile(only) if only else None
    pages = []
    with (data / "ground-truth.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if is_held_out(record["id"], record.get("url")) != holdout:
                continue
            if sample > 1 and not _sampled(record["id"], sample):
                continue
            if pattern is not None and not pattern.search(record["id"]):
                continue
            path = data / "pages" / f"{record['id']}.html.gz"
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                html = handle.read()
            pages.append(
                Page(
                    id=record["id"],
                    source=record["source"],
                    kind=record["kind"],
                    page_type=record.get("page_type"),
                    news=bool(record.get("news")),
                    url=record.get("url") or PLACEHOLDER_URL,
                    text=record.get("text"),
                    with_=record.get("with") or [],
                    without=record.get("without") or [],
                    html=html,
                    size=len(html.encode("utf-8")),
                    curated_text=record.get("curated_text"),
                    curated_without=record.get("curated_without") or [],
                )
            )
    return pages


# --- measurement -------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    outputs: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)


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
            output = label = ""
            for _ in range(repeat):
                started = time.process_time()
                output, label = extractor(page.html, page.url)
                best = min(best, time.process_time() - started)
            results[name].outputs[page.id] = output
            results[name].labels[page.id] = label
            results[name].cpu[page.id] = best
    return list(results.values())


def measure_memory(result: Result, extractor: Extractor, pages: list[Page]) -> None:
    for page in pages:
        gc.collect()
        if not reset_peak():
            return
        before = status_kb("VmRSS")
        extractor(page.html, page.url)
        result.peak[page.id] = max(0, status_kb("VmHWM") - before) * 1024


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
        reset_peak()
        before = status_kb("VmRSS")
        started = time.process_time()
        text, label = render_html(html, PLACEHOLDER_URL, raw, max_chars=max_chars)
        cpu = time.process_time() - started
        peak = max(0, status_kb("VmHWM") - before) * 1024
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


@dataclass
class Scores:
    """One extractor's scores on one group of pages."""

    pages: int = 0
    p: float = 0.0
    r: float = 0.0
    f1: float = 0.0
    found: int = 0  # ``with`` snippets found
    with_total: int = 0
    absent: int = 0  # ``without`` snippets absent
    without_total: int = 0

    @property
    def with_rate(self) -> float:
        return self.found / self.with_total if self.with_total else 0.0

    @property
    def without_rate(self) -> float:
        return self.absent / self.without_total if self.without_total else 0.0

    @property
    def right(self) -> float:
        """The share of all snippets that are right: ``with`` found, ``without`` absent."""
        total = self.with_total + self.without_total
        return (self.found + self.absent) / total if total else 0.0


def _truth(page: Page) -> tuple[str | None, list[str]]:
    """What a page is scored against: a listing or collection's main list (``curated_text``,
    ``curated_without``), any other page's text and ``without`` snippets."""
    if page.curated:
        return page.curated_text, page.curated_without
    return page.text, page.without


def score(result: Result, pages: list[Page]) -> Scores:
    """Full-text pages: mean P and R, F1 from them; every page: its snippet counts."""
    scores = Scores(pages=len(pages))
    pairs = []
    for page in pages:
        truth, without = _truth(page)
        if truth:
            pairs.append(precision_recall(result.outputs[page.id], truth))
        a, b, c, d = snippet_rates(result.outputs[page.id], page.with_, without)
        scores.found += a
        scores.with_total += b
        scores.absent += c
        scores.without_total += d
    scores.p, scores.r, scores.f1 = _prf(pairs)
    return scores


# Kinds for which the whole page is the right answer: the raw-html rate leaves them out.
WHOLE_PAGE_TYPES = frozenset({"index", "tiny-or-not-readerable", "test-fixture"})


def _groups(pages: list[Page]) -> list[tuple[str, list[Page]]]:
    """The subsets reported: news and blog articles by source, other articles by source, every
    article page, each ``page_type`` (listing and collection on their main list), every WCXB
    page, and the pages whose kind is not one the whole page answers."""
    articles = [p for p in pages if p.kind == "article"]
    curated = [p for p in pages if p.curated]
    groups: list[tuple[str, list[Page]]] = []
    for label, news in (("news", True), ("other articles", False)):
        for source in ("wcxb", "mozilla-readability", "trafilatura"):
            chosen = [p for p in articles if p.news == news and p.source == source]
            if chosen:
                groups.append((f"{label}: {source}", chosen))
    groups.append(("all articles: full text", [p for p in articles if p.text]))
    groups.append(("all articles: snippets only", [p for p in articles if not p.text]))
    for page_type in sorted({p.page_type or "(none)" for p in articles + curated}):
        chosen = [p for p in articles + curated if (p.page_type or "(none)") == page_type]
        groups.append((f"page_type {page_type}", chosen))
    if curated:
        groups.append(("listing and collection: main list", curated))
    for source in ("wcxb", "mozilla-readability", "trafilatura"):
        chosen = [p for p in articles if p.source == source]
        if chosen:
            groups.append((f"source {source}", chosen))
    wcxb = [p for p in articles + curated if p.source == "wcxb"]
    if wcxb:
        groups.append(("WCXB all (listing and collection on their main list)", wcxb))
    groups.append(
        (
            "every page but index, tiny and test fixtures",
            [p for p in pages if p.page_type not in WHOLE_PAGE_TYPES],
        )
    )
    return groups


def report(results: list[Result], pages: list[Page], worst: int) -> dict[str, Any]:
    """Print one table per subset and the CPU figures; return the figures as data."""
    others = [p for p in pages if p.kind == "non-article"]
    summary: dict[str, Any] = {result.name: {} for result in results}
    width = max(len(result.name) for result in results)
    for title, group in _groups(pages):
        full = sum(1 for p in group if p.text)
        print(f"\n{title} ({len(group)} pages, {full} with full text)")
        for result in results:
            scores = score(result, group)
            summary[result.name][title] = scores
            line = f"  {result.name:<{width}}"
            if full:
                line += f"  F1 {scores.f1:.3f} (P {scores.p:.3f} R {scores.r:.3f})"
            if scores.with_total or scores.without_total:
                line += (
                    f"  snippets right {scores.right:.3f} (with {scores.with_rate:.3f}, "
                    f"w/o {scores.without_rate:.3f})"
                )
            labels = [result.labels.get(p.id) for p in group]
            if any(labels):
                fallbacks = labels.count("raw-html")
                line += f"  raw-html {fallbacks}/{len(group)} ({fallbacks / len(group):.1%})"
            print(line)
    if others:
        print(f"\nnon-articles ({len(others)} pages): recall against the visible text")
        for result in results:
            recall = statistics.fmean(
                precision_recall(result.outputs[pg.id], pg.text or "")[1] for pg in others
            )
            summary[result.name]["non-articles R"] = recall
            labels = [result.labels.get(p.id) for p in others]
            extra = f"  raw-html {labels.count('raw-html')}/{len(others)}" if any(labels) else ""
            print(f"  {result.name:<{width}}  R {recall:.3f}{extra}")
    print("\nCPU per page (time.process_time) and peak RSS growth")
    megabytes = sum(pg.size for pg in pages) / 1e6
    for result in results:
        cpu = list(result.cpu.values())
        peak = max(result.peak.values(), default=0) / 1e6
        summary[result.name]["median_ms"] = statistics.median(cpu) * 1000
        print(
            f"  {result.name:<{width}}  median {statistics.median(cpu) * 1000:7.2f} ms  "
            f"p95 {_percentile(cpu, 0.95) * 1000:7.2f} ms  {megabytes / sum(cpu):6.2f} MB/s  "
            f"peak {peak:5.1f} MB"
        )
    names = [result.name for result in results]
    if worst and "runvil" in names:
        _worst(results[names.index("runvil")], pages, worst)
    return summary


def _worst(result: Result, pages: list[Page], worst: int) -> None:
    """runvil's worst pages: full-text articles by F1, snippet pages by snippets wrong,
    non-articles by recall."""
    articles = [p for p in pages if p.kind == "article"]
    pairs = {
        p.id: precision_recall(result.outputs[p.id], _truth(p)[0] or "")
        for p in articles + [p for p in pages if p.curated]
        if _truth(p)[0]
    }
    ranked = sorted(pairs.items(), key=lambda item: _prf([item[1]])[2])
    print("\nrunvil's worst full-text pages, listings on their main list (P, R, label):")
    for page_id, (pp, rr) in ranked[:worst]:
        print(f"  {page_id:<60} {pp:.2f} {rr:.2f} {result.labels.get(page_id, '')}")
    wrong = []
    for page in articles:
        if page.text:
            continue
        a, b, c, d = snippet_rates(result.outputs[page.id], page.with_, page.without)
        wrong.append((b - a + d - c, page.id, b - a, d - c))
    wrong.sort(reverse=True)
    print("runvil's worst snippet pages (with missing, without present, label):")
    for _, page_id, missing, present in wrong[:worst]:
        print(f"  {page_id:<60} {missing} {present} {result.labels.get(page_id, '')}")
    nonart = sorted(
        (
            (pg.id, precision_recall(result.outputs[pg.id], pg.text or "")[1])
            for pg in pages
            if pg.kind == "non-article"
        ),
        key=lambda item: item[1],
    )
    print("runvil's worst non-article pages (R):")
    for page_id, rr in nonart[:worst]:
        print(f"  {page_id:<60} {rr:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", default=",".join(EXTRACTORS), help="extractors to run")
    parser.add_argument("--repeat", type=int, default=1, help="runs per page; the fastest counts")
    parser.add_argument("--worst", type=int, default=0, help="list runvil's N worst pages")
    parser.add_argument(
        "--holdout", action="store_true", help="score only the held-out tenth (once, at the end)"
    )
    parser.add_argument("--sample", type=int, default=1, help="keep one page in N (quick runs)")
    parser.add_argument("--pages", default=None, help="keep the pages whose id matches this regex")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--no-big", action="store_true")
    args = parser.parse_args()
    pages = load_pages(args.data, args.holdout, args.sample, args.pages)
    split = "held-out tenth" if args.holdout else "tuning split (held-out tenth skipped)"
    print(
        f"{len(pages)} pages of the {split}, {sum(p.size for p in pages) / 1e6:.1f} MB, "
        f"from {args.data}"
    )
    if not pages:
        return 1
    extractors = {name: EXTRACTORS[name]() for name in args.only.split(",")}
    results = run_extractors(extractors, pages, args.repeat)
    if not args.no_memory:
        for result in results:
            measure_memory(result, extractors[result.name], pages)
    report(results, pages, args.worst)
    names = [r.name for r in results]
    if "runvil" in names:
        ours = statistics.median(results[names.index("runvil")].cpu.values())
        for other in ("trafilatura-txt", "trafilatura-md"):
            if other in names:
                theirs = statistics.median(results[names.index(other)].cpu.values())
                print(f"median CPU ratio runvil / {other}: {ours / theirs:.3f}")
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
