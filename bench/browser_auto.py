"""How often ``browser = "auto"`` would start a browser on ordinary pages.

Runs the ``auto`` rule (runvil.web._fetch.browser.shell: almost no text in the static rendering,
and scripts with a mount point or a ``<noscript>`` asking for JavaScript) on every page of the
development set (``../shared/extraction-dev``, read at run time and never copied), both splits,
after the same static rendering the fetch does. Reports how many pages would go to the browser,
and how many of those the static path already renders well (word 4-gram F1 against the ground
truth of 0.8 or more, as bench/extraction.py scores it): the target is under 2 % of the
well-rendered pages. No browser is started.

Usage: ``python bench/browser_auto.py [--data DIR] [--good F1]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from extraction import DEFAULT_DATA, PLACEHOLDER_URL, precision_recall, strip_markdown

from runvil.web._fetch.browser.shell import looks_like_app_shell
from runvil.web._fetch.extract import render_html

MAX_CHARS = 40_000


def all_pages(data: Path) -> Iterator[tuple[str, str, str, str | None]]:
    """Every page of the set (both splits: no tuning happens here): id, URL, HTML, truth."""
    with (data / "ground-truth.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            path = data / "pages" / f"{record['id']}.html.gz"
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                html = handle.read()
            url = record.get("url") or PLACEHOLDER_URL
            yield record["id"], url, html, record.get("text")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--good", type=float, default=0.8)
    options = parser.parse_args()
    count = 0
    flagged: list[tuple[str, float | None]] = []
    good = 0
    good_flagged = 0
    for page_id, url, html, truth in all_pages(options.data):
        count += 1
        text, _ = render_html(html, url, False, max_chars=MAX_CHARS)
        text = text[:MAX_CHARS]
        f1: float | None = None
        if truth:
            precision, recall = precision_recall(strip_markdown(text), truth)
            f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
            good += f1 >= options.good
        if looks_like_app_shell(html.encode("utf-8"), text):
            flagged.append((page_id, f1))
            good_flagged += f1 is not None and f1 >= options.good
    print(f"pages: {count}")
    print(f"would start a browser: {len(flagged)} ({100 * len(flagged) / count:.2f} %)")
    share = 100 * good_flagged / good if good else 0.0
    print(f"of the {good} pages with static F1 >= {options.good}: {good_flagged} ({share:.2f} %)")
    for page_id, f1 in flagged:
        shown = "n/a" if f1 is None else f"{f1:.2f}"
        print(f"  {page_id}  static F1 {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
