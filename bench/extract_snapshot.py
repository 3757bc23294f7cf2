"""Extraction snapshot: a digest of ``render_html(html, url, raw=False)`` for every page.

A restructure of the extractor must not change what it returns. This script renders every page
of the development set (``../shared/extraction-dev``, read at run time and never copied) and
writes one line per page: its id, the extraction label, and the SHA-256 of the markdown (the
markdown itself too with ``--keep``, to see what changed). With ``--hostile`` it also renders
the 8 MiB hostile shapes of ``bench/extraction.py`` (with and without a 40,000-character
``max_chars``), so the rendering bounds are part of the comparison. ``--diff A B`` lists the
pages whose output differs between two snapshots.

CPU is ``time.process_time`` per page; the run prints the total and the median, so two
versions of the code can be compared by taking snapshots alternately.

Usage: ``python bench/extract_snapshot.py OUT.jsonl [--data DIR] [--hostile] [--keep]
[--pages REGEX]`` or ``python bench/extract_snapshot.py --diff A.jsonl B.jsonl``
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import time
from pathlib import Path

from extraction import DEFAULT_DATA, PLACEHOLDER_URL, worst_pages


def _default_data() -> Path:
    """The set beside the repository, or, from a worktree one level deeper, beside that."""
    if DEFAULT_DATA.exists():
        return DEFAULT_DATA
    return Path(__file__).resolve().parents[3] / "shared" / "extraction-dev"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _pages(data: Path, regex: str | None) -> list[tuple[str, str, str]]:
    """Every page, the held-out tenth included: a restructure must change none of them."""
    pattern = re.compile(regex) if regex else None
    pages = []
    with (data / "ground-truth.jsonl").open(encoding="utf-8") as lines:
        for record in map(json.loads, lines):
            if pattern is not None and not pattern.search(record["id"]):
                continue
            path = data / "pages" / f"{record['id']}.html.gz"
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                pages.append((record["id"], record.get("url") or PLACEHOLDER_URL, handle.read()))
    return sorted(pages)


def snapshot(out: Path, data: Path, hostile: bool, keep: bool, regex: str | None) -> None:
    from runvil.web._fetch.extract import render_html

    cpu: list[float] = []
    with out.open("w", encoding="utf-8") as sink:
        for page_id, url, html in _pages(data, regex):
            start = time.process_time()
            text, label = render_html(html, url, False)
            cpu.append(time.process_time() - start)
            _write(sink, page_id, label, text, keep)
        if hostile:
            for name, html in worst_pages().items():
                for max_chars in (None, 40_000):
                    start = time.process_time()
                    text, label = render_html(html, PLACEHOLDER_URL, False, max_chars=max_chars)
                    spent = time.process_time() - start
                    _write(sink, f"hostile {name} {max_chars}", label, text, False)
                    print(f"hostile {name} max_chars={max_chars}: {spent:.2f} s CPU", flush=True)
    print(f"{len(cpu)} pages: {sum(cpu):.2f} s CPU, median {statistics.median(cpu) * 1000:.2f} ms")


def _write(sink: object, page_id: str, label: str, text: str, keep: bool) -> None:
    record: dict[str, object] = {"id": page_id, "label": label, "sha256": _digest(text)}
    if keep:
        record["text"] = text
    print(json.dumps(record, ensure_ascii=False), file=sink)  # type: ignore[call-overload]


def _load(path: Path) -> dict[str, dict[str, object]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return {record["id"]: record for record in map(json.loads, lines)}


def diff(before: Path, after: Path) -> int:
    """Print the pages whose label or markdown changed; return how many."""
    old, new = _load(before), _load(after)
    changed = [
        page_id
        for page_id in sorted(old.keys() | new.keys())
        if page_id not in old
        or page_id not in new
        or (old[page_id]["label"], old[page_id]["sha256"])
        != (new[page_id]["label"], new[page_id]["sha256"])
    ]
    for page_id in changed:
        print(page_id)
    print(f"pages changed: {len(changed)} of {len(old.keys() | new.keys())}")
    return len(changed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--data", type=Path, default=_default_data())
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--pages", default=None)
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.diff:
        return 1 if diff(*args.diff) else 0
    if args.out is None:
        parser.error("an output file is needed")
    snapshot(args.out, args.data, args.hostile, args.keep, args.pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
