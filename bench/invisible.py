"""Invisible-text benchmark: what writing out hidden characters costs the envelope, per shape.

Step 4 of the envelope's escaping (``runvil._envelope.reveal_invisible``) runs on every text that
leaves the Host. Each shape below is a 4-million-character text; the figure is the best of
``--repeat`` runs (default 3) of ``reveal_invisible`` alone, in nanoseconds per input character,
and the output's length. The shapes cover the usual case (no candidate at all: one scan), prose
with one hidden character (the scan, then the runs between kept characters), texts made
entirely of characters that are written out (tags, joiners, selectors: long runs, translated in
C), and texts made entirely of characters real text needs (every one a kept match: the slowest,
one regex match per character).

Usage: ``python bench/invisible.py [--repeat N] [--chars N]``.
"""

from __future__ import annotations

import argparse
import time

from runvil._envelope import reveal_invisible


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


def shapes(n: int) -> dict[str, str]:
    """Each shape, ``n`` characters long (give or take a repeat unit)."""
    flag = "\U0001f3f4" + _tags("gbeng") + "\U000e007f"
    return {
        "ASCII, no candidate": "x" * n,
        "prose, one hidden character": "\u200b" + "Grüße aus Köln. " * (n // 16),
        "tag characters only": "\U000e0049" * n,
        "ZWJ only": "\u200d" * n,
        "letters, ZWSP and RLO mixed": "ab\u200bc\u202e" * (n // 5),
        "one letter, then selectors": "a" + "\ufe0f" * n,
        "emoji ZWJ pairs (kept)": "\U0001f469\u200d" * (n // 2),
        "Persian letter + ZWNJ pairs (kept)": "\u0645\u200c" * (n // 2),
        "England flags (kept)": flag * (n // len(flag)),
        "heart + VS16 pairs (kept)": "\u2764\ufe0f" * (n // 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chars", type=int, default=4_000_000)
    args = parser.parse_args()
    reveal_invisible("\u200b")  # build the patterns once, outside the timings
    print("| shape | ns per character | output characters |")
    print("| --- | ---: | ---: |")
    for name, text in shapes(args.chars).items():
        best = float("inf")
        out = text
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = reveal_invisible(text)
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {best / len(text) * 1e9:.0f} | {len(out):,} |")


if __name__ == "__main__":
    main()
