"""CI: the built wheel, installed alone in a clean venv, fetches a page from the local test server.

Run from the repository root with the development venv (it needs the test fixtures: a test CA and
a loopback TLS server behind a fake resolver), naming the clean venv's interpreter:

    .venv/bin/python .ci/check_wheel.py /tmp/clean/bin/python

The clean venv holds the wheel and its dependencies only. It runs the command line through
``tests/fixtures/launch.py``, which uses nothing but runvil and the standard library, so no test
code is installed there and the wheel ships none. The check fails unless the runvil it ran was
the installed wheel's and the output is the exact tool text.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import trustme

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.faces_helpers import child_env, hello_text, site_app, write_seam  # noqa: E402
from tests.fixtures.internet import Canary, FakeInternet  # noqa: E402
from tests.fixtures.launch import LAUNCHER  # noqa: E402


def check(done: subprocess.CompletedProcess[str], expected: str, what: str) -> None:
    if done.returncode != 0 or done.stdout != expected:
        sys.exit(
            f"check_wheel: {what}: exit {done.returncode}\n"
            f"stdout: {done.stdout!r}\nstderr: {done.stderr!r}\nexpected: {expected!r}"
        )


async def main(python: str) -> None:
    python = str(Path(python).absolute())  # not resolved: a venv's python is a symlink
    prefix = str(Path(python).parent.parent)
    where = subprocess.run(
        [python, "-c", "import runvil; print(runvil.__file__)"],
        capture_output=True, text=True, cwd="/", check=True,
    ).stdout.strip()
    if not where.startswith(prefix):
        sys.exit(f"check_wheel: runvil was imported from {where}, not from the clean venv")

    canary = Canary()
    await canary.start()
    internet = FakeInternet(trustme.CA(), canary)
    try:
        await internet.serve(site_app())
        with tempfile.TemporaryDirectory() as tmp:
            env = child_env(write_seam(internet, Path(tmp)), Path(tmp))
            env["PATH"] = f"{Path(python).parent}{os.pathsep}{env['PATH']}"
            done = await asyncio.to_thread(
                subprocess.run,
                [python, str(LAUNCHER), "fetch", "https://example.com/hello.txt"],
                capture_output=True, text=True, env=env, cwd=tmp, timeout=60,
            )
        check(done, hello_text() + "\n", "runvil fetch against the local test server")
    finally:
        await internet.close()
        await canary.stop()
    if canary.hits:
        sys.exit(f"check_wheel: the canary listener was reached: {canary.hits}")
    print(f"check_wheel: the installed wheel ({where}) fetched the local test page")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
