"""Run one fuzz target for a large number of inputs (never part of the test suite).

Two engines:

- ``atheris`` (default): coverage-guided libFuzzer over ``runvil``'s instrumented code, fast
  enough for millions of inputs per target. Its own summary line (``Done N runs in S second(s)``)
  is the count to record. A per-input time limit (``--timeout``) turns a hang into a finding.
- ``hypothesis``: the structured strategies with a large ``max_examples``; slower per input, but
  the strategies reach deep structure (nested JSON, whole prompt files) without any coverage
  feedback.

Usage::

    python -m bench.fuzz.run admission --runs 1000000
    python -m bench.fuzz.run search --engine hypothesis --runs 200000

A finding stops the run with the failing input and the traceback (atheris also writes it to
``crash-*`` in the working directory); record it in ``docs/reliability.md`` and turn it into a
regression test.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback


def _atheris(name: str, runs: int, timeout: int, corpus: list[str]) -> None:
    import atheris  # type: ignore[import-untyped]

    with atheris.instrument_imports(include=["runvil"]):
        from bench.fuzz.targets import TARGETS

    target = TARGETS[name]

    def one_input(data: bytes) -> None:
        target.check(target.from_bytes(data))

    argv = [sys.argv[0], f"-runs={runs}", f"-timeout={timeout}", "-rss_limit_mb=3072",
            "-max_len=4096", "-print_final_stats=1", *corpus]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


def _hypothesis(name: str, runs: int) -> None:
    from bench.fuzz.targets import TARGETS
    from hypothesis import HealthCheck, Phase, given, settings

    target = TARGETS[name]
    count = 0

    @settings(
        max_examples=runs,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    @given(target.strategy)
    def run(value: object) -> None:
        nonlocal count
        count += 1
        target.check(value)

    started = time.monotonic()
    try:
        run()
    except Exception:
        traceback.print_exc()
        print(f"FINDING in {name} after {count} examples")
        raise SystemExit(1) from None
    elapsed = time.monotonic() - started
    print(f"hypothesis {name}: {count} examples in {elapsed:.0f} s, no finding")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("target", choices=["admission", "search", "content", "render",
                                           "envelope", "prompt"])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--engine", choices=["atheris", "hypothesis"], default="atheris")
    parser.add_argument("--timeout", type=int, default=10, help="seconds per input (atheris)")
    parser.add_argument("--corpus", action="append", default=[], help="corpus directory (atheris)")
    args = parser.parse_args()
    if args.engine == "atheris":
        _atheris(args.target, args.runs, args.timeout, args.corpus)
    else:
        _hypothesis(args.target, args.runs)


if __name__ == "__main__":
    main()
