"""The browser's sandbox and start-up: on, as an unprivileged user when runvil is root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runvil.web._fetch.browser.discovery import (
    NO_EXECUTABLE,
    ROOT_NEEDS_USER,
    BrowserStatus,
    find_browser,
)
from runvil.web._fetch.browser.process import process_for
from runvil.web._fetch.browser.sandbox import chromium_flags, launcher_for
from tests.web.browser.conftest import FetchFactory, SiteFactory, html
from tests.web.browser.pages import inline_shell


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found += children
        frontier += children
    return found


def _status_field(pid: int, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].split()[0]
    raise AssertionError(f"no {name} in /proc/{pid}/status")


@pytest.mark.asyncio(loop_scope="module")
async def test_the_renderers_run_sandboxed_and_never_as_root(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(inline_shell())})
    fetch = make_fetch(browser="always")
    text = await fetch.call({"url": "https://example.com/"})
    assert text.splitlines()[3] == "rendered: browser"
    browser = await process_for(find_browser()).browser()
    context = await browser.new_context()
    page = await context.new_page()
    await page.set_content("<p>a page keeps its renderer alive</p>")
    try:
        renderers = _check_renderers()
    finally:
        await context.close()
    assert renderers, "no renderer process found under this process"


def _check_renderers() -> list[int]:
    renderers = []
    for pid in _descendants(os.getpid()):
        try:
            # Chromium rewrites its children's command lines into one string.
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"--type=renderer" in command:
            renderers.append(pid)
            assert b"--no-sandbox" not in command
            assert _status_field(pid, "Seccomp") == "2"  # seccomp-bpf filtering
            assert _status_field(pid, "Uid") != "0"
            # A namespace of its own: no network interface of the host's.
            assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    return renderers


def test_as_root_chromium_starts_through_the_launcher_as_nobody(tmp_path: Path) -> None:
    status = BrowserStatus("/usr/bin/chromium", run_as=(65534, 65534), setpriv="/usr/bin/setpriv")
    launcher = launcher_for(status)
    script = Path(launcher).read_text()
    assert Path(launcher).stat().st_mode & 0o777 == 0o700
    assert "exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups" in script
    assert "--no-new-privs -- /usr/bin/chromium \"$@\"" in script
    assert "no-sandbox" not in script


def test_what_is_missing_is_named() -> None:
    assert find_browser("/no/such/chromium") == BrowserStatus(
        None, "fetch.browser_path /no/such/chromium is not an executable file"
    )
    assert NO_EXECUTABLE.startswith("no Chromium found")
    if os.geteuid() == 0:
        assert find_browser().run_as == (65534, 65534)
    assert "unprivileged user" in ROOT_NEEDS_USER


def test_the_flags_leave_chromium_no_network() -> None:
    flags = chromium_flags(4242)
    assert flags[:3] == [
        "--proxy-server=http://127.0.0.1:4242",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]
    assert "--disable-quic" in flags
    assert "--force-webrtc-ip-handling-policy=disable_non_proxied_udp" in flags
    assert not any("sandbox" in flag for flag in flags)
