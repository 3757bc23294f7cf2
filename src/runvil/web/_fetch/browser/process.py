"""The one Chromium process of an event loop: started on first use, restarted after a crash.

Playwright's objects belong to the event loop that made them, so the process is shared by every
fetch tool of a loop (normally the whole program) and keyed by the loop and the executable.
Each tool that uses it holds a reference (:meth:`BrowserProcess.retain`); the last one to let go
closes it. A browser that has crashed or stopped answering is killed (:meth:`kill`) and the next
page starts a new one.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING

from runvil.web._fetch.browser.discovery import BrowserStatus
from runvil.web._fetch.browser.sandbox import ClosedPort, chromium_flags, launcher_for
from runvil.web._fetch.browser.schedule import FairGate

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["BrowserProcess", "process_for"]

logger = logging.getLogger("runvil.web.fetch")

#: Seconds Chromium has to start, and to close when asked.
LAUNCH_TIMEOUT = 30.0
CLOSE_TIMEOUT = 5.0

_PROCESSES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, BrowserProcess]] = (
    weakref.WeakKeyDictionary()
)


def process_for(status: BrowserStatus) -> BrowserProcess:
    """The browser process of the running loop for ``status``'s executable."""
    loop = asyncio.get_running_loop()
    assert status.executable is not None
    per_loop = _PROCESSES.setdefault(loop, {})
    process = per_loop.get(status.executable)
    if process is None:
        process = per_loop[status.executable] = BrowserProcess(status)
    return process


class BrowserProcess:
    """One Chromium under one Playwright driver (see the module docstring)."""

    def __init__(self, status: BrowserStatus) -> None:
        self.status = status
        self.loop = asyncio.get_running_loop()
        """The event loop the process belongs to (Playwright's objects are bound to it)."""
        self._launcher: str | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._port: ClosedPort | None = None
        self._lock = asyncio.Lock()
        self._users = 0
        self.gate = FairGate()
        """Pages rendered at once, shared fairly between runs."""
        self.launches = 0
        """How many times Chromium was started (a restart counts)."""

    def retain(self) -> None:
        self._users += 1

    async def release(self) -> None:
        self._users = max(0, self._users - 1)
        if self._users == 0:
            await self.close()

    async def browser(self) -> Browser:
        """The running browser, started (or restarted) if need be."""
        async with self._lock:
            browser = self._browser
            if browser is not None and browser.is_connected():
                return browser
            if browser is not None:
                await self._stop()
            return await self._start()

    async def _start(self) -> Browser:
        from playwright.async_api import async_playwright

        if self._launcher is None:
            self._launcher = launcher_for(self.status)
        if self._port is None:
            self._port = ClosedPort()
        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=self._launcher,
            headless=True,
            chromium_sandbox=True,
            args=chromium_flags(self._port.port),
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
            timeout=LAUNCH_TIMEOUT * 1000,
        )
        self.launches += 1
        return self._browser

    async def check(self) -> None:
        """After a page ran out of time: kill the browser unless it still answers (a fresh
        context opened and closed within :data:`CLOSE_TIMEOUT`)."""
        browser = self._browser
        if browser is None or not browser.is_connected():
            return
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT):
                context = await browser.new_context()
                await context.close()
        except Exception:
            logger.warning("the browser stopped answering; restarting it")
            await self.kill()

    async def kill(self) -> None:
        """End a browser that crashed or stopped answering; the next page starts a new one."""
        async with self._lock:
            await self._stop()

    async def close(self) -> None:
        async with self._lock:
            await self._stop()
            if self._port is not None:
                self._port.close()
                self._port = None

    async def _stop(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), CLOSE_TIMEOUT)
            except Exception:  # a hung or dead browser: stopping the driver ends it
                logger.warning("the browser did not close; stopping its driver")
        if playwright is not None:
            try:
                await asyncio.wait_for(playwright.stop(), CLOSE_TIMEOUT)
            except Exception:
                logger.warning("the browser driver did not stop in time")


async def close_browsers() -> None:
    """Close every browser process of the running loop (the tests' module fixtures, and a
    program that wants its browser gone before its loop ends)."""
    per_loop = _PROCESSES.pop(asyncio.get_running_loop(), {})
    for process in per_loop.values():
        await process.close()
