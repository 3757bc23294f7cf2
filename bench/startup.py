"""Startup benchmark: what ``import runvil`` and ``runvil --help`` cost before any work is done.

A person typing ``runvil --help`` and an application that only wants ``runvil.Host`` should not
pay for the HTTP stack, the HTML parser, the Lua runtime or the MCP SDK. This measures, each in a
fresh interpreter:

1. ``python -X importtime -c "import runvil"``: the cumulative import time of ``runvil`` as
   ``-X importtime`` reports it (microseconds, the interpreter's own clock), and which of the
   heavy packages (aiohttp, selectolax, lupa, mcp) ended up in ``sys.modules``;
2. the same for ``from runvil import Host, ToolError``;
3. ``python -m runvil --help`` wall time (process start to exit, so interpreter start-up is in it)
   and its CPU time (user + system, which another process's load disturbs less).

Each measurement is repeated (``--repeat``, default 15) and medians with the min-max spread are
reported. ``--src DIR`` puts another source tree first on ``sys.path`` (to measure an older
checkout with the same interpreter and dependencies).

Usage: ``python bench/startup.py [--repeat N] [--src DIR] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

HEAVY = ("aiohttp", "selectolax", "lupa", "mcp")

_PROBE = (
    "import sys\n"
    "{statement}\n"
    "print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
)


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def import_cost(statement: str, src: str | None) -> tuple[float, list[str]]:
    """(cumulative microseconds of the ``runvil`` import, heavy modules loaded) for one run."""
    probe = _PROBE.format(statement=statement, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True, text=True, env=_env(src), check=True,
    )
    # "import time: self [us] | cumulative | imported package", nested imports indented by two
    # spaces a level. Every top-level import from the first ``runvil`` one on is runvil's doing
    # (a lazily loaded submodule shows up as a top-level entry of its own).
    cumulative = 0.0
    counting = False
    for line in done.stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        top_level = name.startswith(" ") and not name.startswith("  ")
        if top_level and name.strip().startswith("runvil"):
            counting = True
        if counting and top_level:
            cumulative += float(parts[1])
    loaded = [m for m in done.stdout.strip().split(",") if m]
    return cumulative, loaded


def help_cost(src: str | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``python -m runvil --help``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "runvil", "--help"],
        capture_output=True, env=_env(src), check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--src", default=None, help="a source tree to import runvil from")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    report: dict[str, Any] = {}
    for label, statement in (
        ("import runvil", "import runvil"),
        ("from runvil import Host, ToolError", "from runvil import Host, ToolError"),
    ):
        times: list[float] = []
        loaded: list[str] = []
        for _ in range(args.repeat):
            micros, loaded = import_cost(statement, args.src)
            times.append(micros / 1000)
        report[label] = {"ms": summary(times), "heavy_loaded": loaded}
    costs = [help_cost(args.src) for _ in range(args.repeat)]
    report["runvil --help (wall)"] = {"ms": summary([wall * 1000 for wall, _ in costs])}
    report["runvil --help (CPU)"] = {"ms": summary([cpu * 1000 for _, cpu in costs])}

    if args.json:
        print(json.dumps(report, indent=2))
        return
    for label, data in report.items():
        ms = data["ms"]
        heavy = data.get("heavy_loaded")
        extra = f"  heavy modules loaded: {', '.join(heavy) or 'none'}" if heavy is not None else ""
        print(
            f"{label:38} median {ms['median']:7.1f} ms  "
            f"(min {ms['min']:.1f}, max {ms['max']:.1f}){extra}"
        )


if __name__ == "__main__":
    main()
