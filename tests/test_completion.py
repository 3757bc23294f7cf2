"""Shell completion is click's, under the program name ``runvil`` (README, docs/cli.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.faces_helpers import REPO

CLI = "from runvil._faces.cli import main; main()"


def complete(words: str, shell: str = "bash") -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
        "_RUNVIL_COMPLETE": f"{shell}_complete",
    }
    done = subprocess.run(
        [sys.executable, "-c", CLI], capture_output=True, text=True, env=env, cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("runvil fe", "plain,fetch\n"),
        ("runvil mcp --to", "plain,--tools\n"),
        ("runvil fetch --user", "plain,--user-agent\n"),
    ],
)
def test_bash_completes_commands_and_options(words: str, expected: str) -> None:
    assert complete(words) == expected


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_its_script(shell: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "_RUNVIL_COMPLETE": f"{shell}_source"}
    done = subprocess.run(
        [sys.executable, "-c", CLI], capture_output=True, text=True, env=env, cwd=REPO,
        check=True,
    )
    assert "_runvil_completion" in done.stdout
    assert "_RUNVIL_COMPLETE" in done.stdout
