"""Finding a browser that can render pages: the executable, the driver, and who may run it.

Nothing here imports Playwright or starts a process (except :func:`browser_version`, which only
``runvil config`` calls): the faces ask :func:`find_browser` at start-up to decide whether
``auto`` is on, and a policy of ``never`` never asks at all.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass

__all__ = ["CANDIDATES", "BrowserStatus", "browser_version", "find_browser"]

#: Where Debian's packages put Chromium, in the order they are tried.
CANDIDATES: tuple[str, ...] = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-headless-shell",
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/lib/chromium/chromium",
)
#: The unprivileged user Chromium runs as when runvil runs as root (its sandbox needs one).
SANDBOX_USER = "nobody"

NO_PLAYWRIGHT = 'the Python package playwright is not installed (pip install "runvil[browser]")'
NO_EXECUTABLE = (
    "no Chromium found (install Debian's chromium or chromium-headless-shell, or set "
    "fetch.browser_path)"
)
ROOT_NEEDS_USER = (
    "runvil runs as root, and Chromium's sandbox stays on only under an unprivileged user: "
    f"runvil starts it as the user {SANDBOX_USER} through setpriv (util-linux); install setpriv "
    f"and keep the user {SANDBOX_USER}, or run runvil as an ordinary user"
)


@dataclass(frozen=True)
class BrowserStatus:
    """Whether a browser can render pages here, and with what."""

    executable: str | None
    """The Chromium executable found (or named), or None."""
    reason: str | None = None
    """Why no page can be rendered (None: it can)."""
    run_as: tuple[int, int] | None = None
    """The uid and gid Chromium runs as when runvil runs as root; None: as runvil itself."""
    setpriv: str | None = None
    """The ``setpriv`` that drops to ``run_as``."""

    @property
    def usable(self) -> bool:
        return self.reason is None


def find_browser(path: str | None = None) -> BrowserStatus:
    """The browser ``path`` names (or the first of :data:`CANDIDATES`), and whether it can run
    with its sandbox on: Playwright installed, the executable there, and, as root, an
    unprivileged user to start it as."""
    executable = _executable(path)
    if executable is None:
        return BrowserStatus(None, NO_EXECUTABLE if path is None else _not_found(path))
    if importlib.util.find_spec("playwright") is None:
        return BrowserStatus(executable, NO_PLAYWRIGHT)
    if os.geteuid() != 0:
        return BrowserStatus(executable)
    setpriv = shutil.which("setpriv")
    try:
        user = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        user = None
    if setpriv is None or user is None or user.pw_uid == 0:
        return BrowserStatus(executable, ROOT_NEEDS_USER)
    return BrowserStatus(executable, run_as=(user.pw_uid, user.pw_gid), setpriv=setpriv)


def browser_version(executable: str) -> str | None:
    """``Chromium 156.0.8078.114 ...`` as the executable says it, or None (for ``runvil
    config``; it starts a process)."""
    try:
        done = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    version = done.stdout.strip()
    return version or None


def _executable(path: str | None) -> str | None:
    for candidate in (path,) if path is not None else CANDIDATES:
        found = shutil.which(candidate)
        if found is not None:
            return found
    return None


def _not_found(path: str) -> str:
    return f"fetch.browser_path {path} is not an executable file"


def describe_browser(setting: str, path: str | None = None) -> dict[str, str | None]:
    """What ``runvil config`` says about the browser: the setting, the executable and its
    version, or why pages are not rendered in one."""
    described: dict[str, str | None] = {"setting": setting}
    status = find_browser(path)
    described["executable"] = status.executable
    if status.executable is not None:
        described["version"] = browser_version(status.executable)
    if status.reason is not None:
        described["off"] = status.reason
    elif setting == "never":
        described["off"] = "fetch.browser is never"
    if status.run_as is not None:
        described["runs_as"] = SANDBOX_USER
    return described
