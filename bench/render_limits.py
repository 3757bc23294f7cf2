"""Worst-case shapes for HTML rendering: CPU time and peak memory of one rendering per shape.

Each page is rendered the way ``web/fetch`` renders it (``render_html`` with ``max_chars`` of
40,000), in a forked child, so its page faults and peak RSS are its own. A child that runs past
``--timeout`` seconds is killed and reported as such. Every shape is measured ``--repeat`` times;
the table shows the median CPU seconds with the range, and the largest peak.

The shapes are the ones found to cost more than their size in lexbor's tree builder or in our
own passes (docs/reliability.md, "Rendering limits"), plus ordinary dense markup for scale.

Usage::

    python bench/render_limits.py [--size BYTES] [--repeat N] [--timeout S] [--only NAME,...]
                                  [--raw] [--article]

``--raw`` renders with ``raw=True``, ``--article`` with ``raw=False`` (the default fetch); with
neither, both. To measure another checkout's extractor, put its ``src`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import signal
import statistics
import string
import sys
import time
from collections.abc import Callable

from _memory import reset_peak, status_kb

MIB = 1024 * 1024
HEAD = "<!doctype html><html><head><title>Worst case</title></head><body>"
TAIL = "</body></html>"
URL = "https://example.invalid/page"

_NAMES = ["".join(pair) for pair in itertools.product(string.ascii_lowercase, repeat=2)]


def fill(size: int, unit: str, before: str = "", after: str = "") -> str:
    """A page of ``size`` bytes: ``before``, ``unit`` repeated, padding, ``after``."""
    room = size - len(HEAD) - len(TAIL) - len(before) - len(after)
    body = unit * max(0, room // len(unit))
    return HEAD + before + body + "x" * (room - len(body)) + after + TAIL


def numbered(size: int, make: Callable[[int], str], before: str = "", after: str = "") -> str:
    """A page of about ``size`` bytes of ``make(0)``, ``make(1)``, ..."""
    room = size - len(HEAD) - len(TAIL) - len(before) - len(after)
    parts: list[str] = []
    used = 0
    for number in itertools.count():
        part = make(number)
        if used + len(part) > room:
            break
        parts.append(part)
        used += len(part)
    return HEAD + before + "".join(parts) + after + TAIL


def _wide_table(rows: int) -> str:
    """A first row of ``rows`` cells, then ``rows`` rows of one cell (unclosed, as the attack
    sent them: 14 bytes a row and a cell)."""
    return "<table><tr>" + "<td>c" * rows + "<tr><td>r" * rows + "</table>"


def shapes(size: int) -> dict[str, Callable[[], str]]:
    """Every shape as a page of ``size`` bytes (built lazily: some take a while to build)."""
    fmt = "<b><i><u><s><em><strong><big><small><tt><font><nobr><code>" * 3
    return {
        # the reproductions
        "80,000 attributes on one element (0.7 MB page)": lambda: numbered(
            min(size, 700_000), lambda n: f" a{n}=1", "<div", ">x</div>"
        ),
        "options in one select": lambda: fill(size, "<option>o", "<select>", "</select>"),
        "<br>": lambda: fill(size, "<br>"),
        "<i>a</i>": lambda: fill(size, "<i>a</i>"),
        "<a href=/a>b</a>": lambda: fill(size, "<a href=/a>b</a>"),
        # the same classes, other shapes
        "attributes on every tag (63 each)": lambda: fill(
            size, "<i " + " ".join(_NAMES[:63]) + ">"
        ),
        "end tags with attributes": lambda: numbered(size, lambda n: f" a{n}=1", "<p>x</p", ">"),
        "repeated <body> with new attributes": lambda: numbered(size, lambda n: f"<body a{n}=1>"),
        "<hr> in one select": lambda: fill(size, "<option>o<hr>", "<select>"),
        "options in a select in a table": lambda: fill(
            size, "<option>o", "<table><tr><td><select>"
        ),
        "distinct tag names": lambda: numbered(size, lambda n: f"<x{n}></x{n}>"),
        "distinct attribute names": lambda: numbered(size, lambda n: f"<i a{n}=1></i>"),
        "unclosed formatting, re-created per block": lambda: fill(
            size, "<p>x</p>", "<p>" + fmt + "</p>"
        ),
        "distinct unclosed formatting, re-created": lambda: fill(
            size, "<p>x</p>", "<p>" + "".join(f"<b id={n}>" for n in range(200)) + "</p>"
        ),
        "formatting kept by markers": lambda: numbered(
            size, lambda n: f"<p><b id={n}><marquee></b></marquee></p>", after="x"
        ),
        "adoption agency (<a><div>x</a>)": lambda: fill(size, "<a><div>x</a>"),
        "nesting behind </span> (<span><div>)": lambda: fill(size, "<span><div>x</span>"),
        "nesting behind </form>": lambda: fill(size, "<form><div></form>"),
        "nesting behind </li> (<li><ul>)": lambda: fill(size, "<li><ul></li>"),
        "nesting behind </body>": lambda: fill(size, "<div></body>", "<body>"),
        "nesting inside an SVG <script>": lambda: fill(size, "<div>x", "<svg><script>"),
        "nesting in a MathML annotation": lambda: fill(
            size, "<div>x", "<math><annotation-xml encoding=text/html>"
        ),
        "headings nested in headings, long text": lambda: fill(size, "x ", "<h1><div>" * 250),
        "quotes 500 deep, many lines": lambda: fill(size, "x<br>", "<blockquote>" * 500),
        # a table padded to its wide first row, and prefixes repeated per line (issue 22): the
        # attack's pages at n = 1k-16k, whatever --size says
        **{
            f"wide first row, {n // 1000}k rows, in a quote": (
                lambda n=n: HEAD + "<blockquote>" + _wide_table(n) + "</blockquote>" + TAIL
            )
            for n in (1_000, 4_000, 16_000)
        },
        "wide first row, 16k rows, in a list item": lambda: (
            HEAD + "<ul><li>" + _wide_table(16_000) + "</li></ul>" + TAIL
        ),
        "wide first row, 16k rows, 7 lists deep": lambda: (
            HEAD + "<ul><li>" * 7 + _wide_table(16_000) + "</li></ul>" * 7 + TAIL
        ),
        "wide first row, 16k rows, in a table cell": lambda: (
            HEAD + "<table><tr><td>" + _wide_table(16_000) + "<td>b</table>" + TAIL
        ),
        "wide first row, 16k rows, at the top": lambda: HEAD + _wide_table(16_000) + TAIL,
        "links wrapping ragged tables, in a heading (1.2 MB)": lambda: (
            HEAD + "<h2>" + ("<a href=/x><span>a</span>" + _wide_table(120) + "</a>") * 700 + TAIL
        ),
        "lines 8 quotes deep": lambda: fill(size, "x<br>", "<blockquote>" * 8),
        "code 8 ordered lists deep": lambda: fill(
            size, "x\n", "<ol start=999999999><li>" * 8 + "<pre>"
        ),
        # ordinary dense markup, for scale
        "<p>x (unclosed paragraphs)": lambda: fill(size, "<p>x"),
        "table rows": lambda: fill(
            size, "<tr><td>one</td><td>two</td><td>3</td></tr>", "<table>", "</table>"
        ),
        "prose paragraphs": lambda: fill(size, "<p>A short paragraph of prose, with commas.</p>"),
        "flat text": lambda: fill(size, "word "),
    }


def measure(html: str, raw: bool, timeout: float) -> tuple[float, float, str] | None:
    """(CPU seconds, peak MB above the child's baseline, label and length) of one rendering in
    a forked child, or ``None`` when it ran past ``timeout``."""
    from runvil.web._fetch.extract import render_html

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        gc.collect()
        reset_peak()
        before = status_kb("VmRSS")
        started = time.process_time()
        text, label = render_html(html, URL, raw, max_chars=40_000)
        cpu = time.process_time() - started
        peak = max(0, status_kb("VmHWM") - before) / 1024
        os.write(write_end, f"{cpu} {peak} {label}:{len(text)}".encode())
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    while True:
        done, _ = os.waitpid(child, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            os.close(read_end)
            return None
        time.sleep(0.02)
    with os.fdopen(read_end, "rb") as reader:
        cpu_text, peak_text, result = reader.read().decode().split(" ", 2)
    return float(cpu_text), float(peak_text), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=8 * MIB)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--raw", action="store_true")
    parser.add_argument("--article", action="store_true")
    args = parser.parse_args()
    modes = [mode for mode, on in (("raw", args.raw), ("article", args.article)) if on]
    modes = modes or ["article", "raw"]
    wanted = [name for name in args.only.split(",") if name]
    import runvil.web._fetch.extract as extract  # warm imports before forking

    extract.render_html("<p>warm</p>" * 100, URL, True)
    print(f"extractor: {os.path.dirname(extract.__file__)}")
    print("| shape | mode | CPU s (median, range) | peak MB | result |")
    print("|---|---|---:|---:|---|")
    for name, build in shapes(args.size).items():
        if wanted and not any(part in name for part in wanted):
            continue
        html = build()
        for mode in modes:
            runs = [measure(html, mode == "raw", args.timeout) for _ in range(args.repeat)]
            finished = [run for run in runs if run is not None]
            if not finished:
                print(f"| {name} | {mode} | > {args.timeout:.0f} (killed) | | |", flush=True)
                continue
            cpu = [run[0] for run in finished]
            spread = f"{min(cpu):.2f}-{max(cpu):.2f}"
            killed = len(runs) - len(finished)
            note = f" ({killed} killed)" if killed else ""
            print(
                f"| {name} | {mode} | {statistics.median(cpu):.2f} ({spread}){note} | "
                f"{max(run[1] for run in finished):.0f} | {finished[-1][2]} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
