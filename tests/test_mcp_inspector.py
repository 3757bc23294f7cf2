"""Interop: the MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, pinned in
``.ci/inspector``) lists runvil's tools and calls each one, over stdio and streamable HTTP.

.ci/run installs the Inspector from its lock file with ``npm install``; when it is missing (a
plain ``pytest`` on a fresh checkout) the first test installs it the same way, which needs
``npm`` and the npm registry.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from runvil import unwrap
from tests.faces_helpers import (
    REPO,
    RUNVIL,
    child_env,
    hello_text,
    serve_gateway,
    site_app,
    start_mcp_http,
    stop,
    write_seam,
)
from tests.fixtures.internet import FakeInternet

INSPECTOR_DIR = REPO / ".ci" / "inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="session")
def inspector() -> Path:
    if not INSPECTOR.exists():
        npm = shutil.which("npm")
        assert npm is not None, "the MCP Inspector test needs npm (node.js) on PATH"
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=INSPECTOR_DIR, check=True, timeout=300,
        )
    return INSPECTOR


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    await internet.serve(site_app())
    await serve_gateway(internet)
    return child_env(write_seam(internet, tmp_path), tmp_path)


async def inspect(inspector: Path, target: list[str], *args: str) -> tuple[int, Any]:
    """Run ``mcp-inspector --cli TARGET ARGS``; return its exit code and its JSON output."""
    proc = await asyncio.create_subprocess_exec(
        str(inspector), "--cli", *target, *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=str(REPO),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode is not None
    text = out.decode()
    start = text.find("{")
    assert start >= 0, f"no JSON from the Inspector: {text!r} {err.decode()!r}"
    return proc.returncode, json.JSONDecoder().raw_decode(text[start:])[0]


def stdio_target(env: dict[str, str]) -> list[str]:
    # The Inspector passes "-e KEY=VALUE" to the server it spawns.
    pairs = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
    return [*pairs, *RUNVIL, "mcp"]


async def test_inspector_over_stdio_lists_and_calls_each_tool(
    inspector: Path, env: dict[str, str]
) -> None:
    target = stdio_target(env)
    code, listed = await inspect(inspector, target, "--method", "tools/list")
    assert code == 0
    assert [t["name"] for t in listed["tools"]] == ["web_fetch", "web_search"]
    assert listed["tools"][0]["inputSchema"]["required"] == ["url"]
    assert listed["tools"][1]["description"] == (
        "Search the web and return a list of results (title, url, description)."
    )
    code, page = await inspect(
        inspector, target, "--method", "tools/call", "--tool-name", "web_fetch",
        "--tool-arg", "url=https://example.com/hello.txt",
    )
    assert code == 0
    assert page.get("isError", False) is False
    assert unwrap(page["content"][0]["text"]) == hello_text()
    code, found = await inspect(
        inspector, target, "--method", "tools/call", "--tool-name", "web_search",
        "--tool-arg", "query=rust", "count=3",
    )
    assert code == 0
    assert unwrap(found["content"][0]["text"]) == (
        '{"query":"rust","results":[{"title":"Result for rust","url":"https://e.com/r",'
        '"description":"D"}]}'
    )


async def test_inspector_over_http_sees_a_hard_failure_as_is_error(
    inspector: Path, env: dict[str, str]
) -> None:
    proc, url = await start_mcp_http(env)
    try:
        code, listed = await inspect(inspector, [url], "--method", "tools/list")
        assert code == 0
        assert [t["name"] for t in listed["tools"]] == ["web_fetch", "web_search"]
        code, page = await inspect(
            inspector, [url], "--method", "tools/call", "--tool-name", "web_fetch",
            "--tool-arg", "url=https://example.com/hello.txt",
        )
        assert code == 0
        assert unwrap(page["content"][0]["text"]) == hello_text()
        code, hard = await inspect(
            inspector, [url], "--method", "tools/call", "--tool-name", "web_fetch",
            "--tool-arg", "url=https://user:pw@example.com/",
        )
    finally:
        await stop(proc)
    assert code == 5  # the Inspector's exit status for an isError result
    assert hard["isError"] is True
    assert hard["content"] == [{"type": "text", "text": "url must not contain userinfo"}]
