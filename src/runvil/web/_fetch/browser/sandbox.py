"""How Chromium is started: its sandbox on, and no network of its own.

**No network.** Every request a page makes is answered by runvil (:mod:`.interception`); these
flags make sure anything that slipped past interception finds nothing to talk to. Chromium's
proxy is a loopback port runvil holds bound and never listens on (a connection to it is
refused at once), with no bypass for loopback (``<-loopback>`` removes Chromium's implicit
one); every host name resolves to nothing (``MAP * ~NOTFOUND``); QUIC, background networking,
DNS prefetch, hyperlink pings, component updates and the crash reporter are off; WebRTC may
only use the (closed) proxy, so it gathers no UDP candidates; pop-up windows are not created.

**The sandbox stays on.** Playwright's launch option ``chromium_sandbox=True`` is always
passed, so Chromium never gets ``--no-sandbox``. Chromium refuses to start as root with its
sandbox, so when runvil runs as root it starts Chromium through a small launcher script that
hands the profile directory to an unprivileged user (``nobody``) and ``exec``\\ s Chromium under
``setpriv`` as that user, with no supplementary groups, no capabilities and ``no_new_privs``.
The renderers then run in their own user and network namespaces under seccomp-bpf, exactly as
for an ordinary user (docs/reliability.md, "The browser").
"""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import socket
import tempfile

from runvil.web._fetch.browser.discovery import BrowserStatus

__all__ = ["ClosedPort", "chromium_flags", "launcher_for"]


class ClosedPort:
    """A loopback TCP port bound and never listened on: a connection to it is refused."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    def close(self) -> None:
        self._socket.close()


def chromium_flags(closed_port: int) -> list[str]:
    """The command-line flags that leave Chromium no network of its own (see the module
    docstring); Playwright adds its own automation flags."""
    return [
        f"--proxy-server=http://127.0.0.1:{closed_port}",
        "--proxy-bypass-list=<-loopback>",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-domain-reliability",
        "--disable-sync",
        "--dns-prefetch-disable",
        "--no-pings",
        "--disable-crash-reporter",
        "--disable-breakpad",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--block-new-web-contents",
        "--deny-permission-prompts",
        "--disable-features=DnsOverHttps,NetworkPrediction,Prerender2,SpeculationRulesPrefetchProxy",
        "--mute-audio",
    ]


def launcher_for(status: BrowserStatus) -> str:
    """The executable Playwright starts: Chromium itself, or (as root) the launcher script that
    starts it as the unprivileged user. The script lives in a directory only root can read,
    removed when the process exits."""
    assert status.executable is not None and status.usable
    if status.run_as is None:
        return status.executable
    assert status.setpriv is not None
    uid, gid = status.run_as
    folder = tempfile.mkdtemp(prefix="runvil-browser-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "chromium")
    script = _LAUNCHER.format(
        owner=f"{uid}:{gid}",
        setpriv=shlex.quote(status.setpriv),
        uid=uid,
        gid=gid,
        executable=shlex.quote(status.executable),
    )
    with open(path, "w", encoding="utf-8") as file:
        file.write(script)
    os.chmod(path, 0o700)
    return path


_LAUNCHER = """#!/bin/sh
# runvil: start Chromium as an unprivileged user, so its sandbox stays on (runvil runs as root).
profile=
for argument in "$@"; do
  case "$argument" in --user-data-dir=*) profile="${{argument#--user-data-dir=}}";; esac
done
if [ -n "$profile" ]; then chown -R {owner} -- "$profile" || exit 1; HOME="$profile"; fi
export HOME="${{HOME:-/nonexistent}}"
exec {setpriv} --reuid={uid} --regid={gid} --clear-groups --inh-caps=-all --bounding-set=-all \\
  --no-new-privs -- {executable} "$@"
"""
