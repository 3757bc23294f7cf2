"""A client that goes away mid-call over streamable HTTP: its fetch is cancelled and the upstream
connection closes at once, not when the fetch's own 20-second limit runs out."""

from __future__ import annotations

import contextlib
from pathlib import Path

import trustme
from bench.load_mcp import disconnect, start_mcp, write_seam

from tests.fixtures.faults import FaultServer


async def test_disconnected_client_closes_the_upstream_connection(
    fault_server: FaultServer, test_ca: trustme.CA, tmp_path: Path
) -> None:
    seam = write_seam(fault_server, test_ca, tmp_path)  # the default fetch policy: 20 s
    proc, url = await start_mcp(seam, tmp_path)
    try:
        report = await disconnect(url)
    finally:
        proc.terminate()
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
    assert report["upstream_opened"] == 1
    assert report["upstream_open_after_disconnect"] == 0
