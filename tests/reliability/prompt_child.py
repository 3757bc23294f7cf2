"""Runs one prompt in a child process, for the hostile-prompt tests whose failure would otherwise
freeze or exhaust the test process itself (a Lua state that deadlocks, a conversion that eats
gigabytes).

Usage: ``python -m tests.reliability.prompt_child MEMORY_BYTES WALL_SECONDS INSTRUCTIONS`` with
the prompt document on stdin. Prints one JSON object: the outcome's ``kind`` and ``text``, the
``seconds`` the run took, the peak resident memory it added (``rss_growth``, bytes) and the
``runvil-lua`` threads still alive half a second after it returned. The address space is capped
at 2 GiB so that a regression fails the test instead of swapping the machine. The Host has no
Packs: nothing here reaches a network.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import threading
import time

from runvil import Host
from runvil._errors import RunError
from runvil.prompts import Limits
from runvil.prompts._document import parse_prompt
from runvil.prompts._run import run_prompt

ADDRESS_SPACE = 2 << 30


def status(field: str) -> int:
    """A size from ``/proc/self/status`` in bytes (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status", encoding="ascii") as lines:
        for line in lines:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def lua_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "runvil-lua")


async def main(document: str, limits: Limits) -> dict[str, object]:
    prompt = parse_prompt(document, source="hostile.md")
    async with Host(plugins=()) as host:
        before = status("VmRSS")
        started = time.monotonic()
        try:
            text = await run_prompt(prompt, host=host, limits=limits)
            kind = "result"
        except RunError as err:
            kind, text = err.kind.value, err.text
        seconds = time.monotonic() - started
        # VmHWM, the peak of this process image (getrusage's ru_maxrss would carry over the
        # peak of the test process this child was forked from).
        peak = status("VmHWM")
    deadline = time.monotonic() + 0.5
    while lua_threads() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return {
        "kind": kind,
        "text": text if len(text) < 200 else f"{len(text)} characters",
        "seconds": round(seconds, 2),
        "rss_growth": peak - before,
        "threads_left": lua_threads(),
    }


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    memory, wall, instructions = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    limits = Limits(memory=memory, wall_time=wall, instructions=instructions)
    print(json.dumps(asyncio.run(main(sys.stdin.read(), limits))), flush=True)
