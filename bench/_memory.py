"""Peak memory of the running process, read from ``/proc/self`` (Linux), for the benchmarks
that report how much a rendering adds at its peak above the memory it started from."""

from __future__ import annotations


def status_kb(key: str) -> int:
    """A ``/proc/self/status`` field in kB (``VmRSS``, ``VmHWM``), 0 when absent."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS; whether the kernel allows it."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return True
