"""Any installed Pack over MCP: ``runvil mcp --tools`` names any installed Pack's tools,
``--packs NAME`` adds a whole Pack (``[mcp] packs``, ``RUNVIL_MCP_PACKS``), with the same
envelope, approval and error handling as the web tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from runvil import unwrap
from tests.faces_helpers import (
    REPO,
    RUNVIL,
    child_env,
    run_cli,
    serve_gateway,
    site_app,
    user_config,
    write_seam,
)
from tests.fixtures import example_pack
from tests.fixtures.internet import FakeInternet


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    """A child's environment with the example distribution installed (on its path)."""
    await internet.serve(site_app())
    await serve_gateway(internet)
    site = example_pack.install(tmp_path / "site")
    user_config(tmp_path).write_text('[packs.notes]\nprefix = "note: "\n')
    return {
        **child_env(write_seam(internet, tmp_path), tmp_path),
        "PYTHONPATH": f"{site}{os.pathsep}{REPO}",
    }


def server(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=RUNVIL[0], args=[*RUNVIL[1:], "mcp", *args], env=env, cwd=str(REPO)
    )


def texts(result: Any) -> tuple[bool, str]:
    return bool(result.is_error), "".join(block.text for block in result.content)


async def test_tools_names_an_installed_pack_s_tool(env: dict[str, str]) -> None:
    async with Client(server(env, "--tools", "web_fetch,notes_echo"), cache=None) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        echoed = texts(await client.call_tool("notes_echo", {"text": "hi"}))
        failed = texts(await client.call_tool("notes_echo", {}))
        fetched = texts(await client.call_tool("web_fetch", {"url": "https://example.com/article"}))
    assert names == ["notes_echo", "web_fetch"]
    # The same envelope as the web tools (the Pack's [packs.notes] configuration applied) ...
    assert echoed[0] is False and unwrap(echoed[1]) == "note: hi" and echoed[1] != "note: hi"
    # ... and the same error handling: a hard failure is isError with the tool's own message.
    assert failed == (True, "notes_echo: missing text argument")
    assert fetched[0] is False and "# Field notes" in unwrap(fetched[1])


async def test_packs_adds_a_whole_pack_beside_the_web_tools(env: dict[str, str]) -> None:
    async with Client(server(env, "--packs", "example/notes"), cache=None) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["notes_echo", "web_fetch", "web_search"]
    with_env = {**env, "RUNVIL_MCP_PACKS": "example/notes", "RUNVIL_MCP_TOOLS": "notes_echo"}
    async with Client(server(with_env), cache=None) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["notes_echo"]


async def test_approval_deny_refuses_a_pack_s_call_too(env: dict[str, str]) -> None:
    params = server(env, "--tools", "notes_echo", "--approval", "deny")
    async with Client(params, cache=None) as client:
        refused = texts(await client.call_tool("notes_echo", {"text": "hi"}))
    assert refused == (True, "notes_echo: the user refused this call; do not retry it")


async def test_unknown_tools_and_packs_are_configuration_errors(env: dict[str, str]) -> None:
    assert await run_cli("mcp", "--tools", "notes_ech", env=env) == (
        2, "", "runvil: --tools: unknown tool 'notes_ech' (known: notes_echo, web_fetch, "
        "web_search)\n",
    )
    assert await run_cli("mcp", "--packs", "example/nope", env=env) == (
        2, "", "runvil: --packs: no installed Pack 'example/nope' (installed: example/notes)\n",
    )
    assert await run_cli("mcp", env={**env, "RUNVIL_MCP_PACKS": "notes"}) == (
        2, "", "runvil: RUNVIL_MCP_PACKS: 'notes' is not a Pack name (VENDOR/NAME)\n",
    )
    code, out, _ = await run_cli("config", "--packs", "example/notes", env=env)
    assert (code, 'packs = ["example/notes"]  # flag' in out) == (0, True)
