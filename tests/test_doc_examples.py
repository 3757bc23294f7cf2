"""Every example in README.md and docs/ runs, or at least parses, as written.

* **TOML** blocks parse; a block that is a ``runvil.toml`` (anything but a ``pyproject.toml``
  fragment) is loaded by the real configuration loader, so an unknown key or a bad value fails.
* **Shell** blocks (``sh``, ``bash``, ``console``): every ``runvil`` command in them is parsed by
  the real command line, so a renamed command or flag fails (nothing is run).
* **Python** blocks of docs/ run against the loopback servers: a fragment with a top-level
  ``await`` in the test's event loop, a whole program in a child interpreter; each block is
  named in :data:`PYTHON`, so a new one fails until it is given a way to run. The README's
  programs run in ``tests/test_readme.py``.

A broken example therefore fails CI.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import trustme
from aiohttp import web

from runvil._faces.cli import cli
from runvil._faces.config import load_config
from runvil._net.network import Network
from tests.faces_helpers import (
    ARTICLE_HTML,
    GATEWAY_KEY,
    GATEWAY_URL,
    REPO,
    child_env,
    serve_gateway,
    user_config,
    write_seam,
)
from tests.fixtures.internet import FakeInternet
from tests.fixtures.launch import LAUNCHER

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
SHELLS = ("sh", "bash", "console", "shell")


def blocks(*languages: str) -> list[tuple[str, str]]:
    """``(page:line, text)`` of every block in one of ``languages``."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) in languages:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(REPO)}:{line}", match.group(2)))
    return found


def following_output(where: str) -> str:
    """The untagged block right after the block at ``where`` (what the example prints)."""
    page, line = where.rsplit(":", 1)
    text = (REPO / page).read_text(encoding="utf-8")
    start = sum(len(row) + 1 for row in text.split("\n")[: int(line) - 1])
    rest = text[start:]
    first = FENCE.search(rest)
    assert first is not None
    after = FENCE.search(rest, first.end())
    assert after is not None and after.group(1) == ""
    return after.group(2)


# --- TOML -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "text"), blocks("toml"), ids=lambda v: str(v)[:40])
def test_a_toml_example_is_valid(where: str, text: str, tmp_path: Path) -> None:
    data = tomllib.loads(text)
    if "project" in data:  # a pyproject.toml fragment: TOML is all it needs to be
        return
    pem = tmp_path / "corp-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(pem))
    path = tmp_path / "runvil.toml"
    path.write_text(re.sub(r'(ca_bundle = )"[^"]*"', f'\\1"{pem}"', text), encoding="utf-8")
    env = {"HOME": str(tmp_path), "MY_BRAVE_KEY": "k", "BRAVE_API_KEY": "k"}
    load_config(config_path=path, env=env, cwd=tmp_path)


# --- shell ------------------------------------------------------------------------------------


def runvil_commands(text: str, console: bool) -> Iterator[list[str]]:
    """The argument lists of the ``runvil`` commands in a shell block (after ``runvil``)."""
    for raw in text.splitlines():
        line = raw.strip()
        if console:
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        for part in line.split("&&"):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                words = words[1:]  # VAR=value before the command
            if words[:1] == ["uvx"]:
                words = words[1:]
            if words and Path(words[0]).name == "runvil":
                yield words[1:]


def parse(args: list[str]) -> None:
    """Parse ``runvil ARGS`` as the command line would, without running it."""
    try:
        ctx = cli.make_context("runvil", list(args))
        rest = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        if rest:
            name, command, sub = cli.resolve_command(ctx, rest)
            assert command is not None and name is not None
            command.make_context(name, sub, parent=ctx)
    except click.exceptions.Exit:  # --help, --version
        pass


SHELL_BLOCKS = blocks(*SHELLS)


def test_the_shell_examples_hold_runvil_commands() -> None:
    counted = sum(
        len(list(runvil_commands(text, "$ " in text))) for _, text in SHELL_BLOCKS
    )
    assert counted >= 15


@pytest.mark.parametrize(("where", "text"), SHELL_BLOCKS, ids=lambda v: str(v)[:40])
def test_a_shell_example_s_commands_and_flags_exist(where: str, text: str) -> None:
    console = any(line.startswith("$ ") for line in text.splitlines())
    for args in runvil_commands(text, console):
        try:
            parse(args)
        except click.UsageError as err:
            pytest.fail(f"{where}: runvil {' '.join(args)}: {err}")


def test_a_wrong_flag_would_fail() -> None:
    with pytest.raises(click.UsageError):
        parse(["fetch", "--private-hosts", "x", "https://example.com/"])
    with pytest.raises(click.UsageError):
        parse(["serve"])
    parse(["mcp", "--packs", "acme/notes", "--tools", "web_fetch,notes_echo"])


# --- Python -----------------------------------------------------------------------------------


def site_app() -> web.Application:
    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE_HTML, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", article)
    return app


async def chat_model(request: web.Request) -> web.Response:
    body = await request.json()
    return web.json_response({
        "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "Ada wrote the first program."}}],
    })


@pytest.fixture
async def web_of_docs(
    internet: FakeInternet, monkeypatch: pytest.MonkeyPatch
) -> FakeInternet:
    """example.com, docs.python.org, the search gateway and api.openai.com on loopback, and
    ``Network()`` meaning this fake internet (as ``tests/fixtures/snippet.py`` does)."""
    await internet.serve(site_app(), hosts=("example.com",))
    await internet.serve(site_app(), hosts=("docs.python.org",), ip="93.184.216.41",
                         names=("docs.python.org",))
    models = web.Application()
    models.router.add_post("/v1/chat/completions", chat_model)
    await internet.serve(models, hosts=("api.openai.com",), ip="93.184.216.42",
                         names=("api.openai.com",))
    await serve_gateway(internet)
    fake = internet.network()
    original = Network.__init__

    def fake_by_default(self: Any, resolve: Any = None, route: Any = None,
                        ssl_context: Any = None, ca_bundle: Any = None) -> None:
        original(self, resolve or fake.resolve, route or fake.route,
                 ssl_context or fake.ssl_context, ca_bundle)

    monkeypatch.setattr(Network, "__init__", fake_by_default)
    monkeypatch.setenv("RUNVIL_SEARCH_GATEWAY_URL", GATEWAY_URL)
    monkeypatch.setenv("RUNVIL_SEARCH_GATEWAY_KEY", GATEWAY_KEY)
    monkeypatch.setenv("RUNVIL_SEARCH_PROVIDER", "gateway")
    return internet


async def run_fragment(text: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run a fragment with top-level ``await`` in this event loop; its namespace after."""
    code = compile(text, "<doc>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if inspect.iscoroutine(result):
        await result
    return namespace


async def fetch_md_call(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    done = await run_fragment(text, {})
    assert done["text"].startswith("url: https://example.com/\ntruncated: false\n")


async def host_md_tour(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    from tests.test_mcp_server import ScriptedProvider

    done = await run_fragment(text, {"provider": ScriptedProvider(), "net": internet.network()})
    assert "# Field notes" in done["page"] and done["result"].is_error


async def search_md_call(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    done = await run_fragment(text, {})
    assert json.loads(done["text"])["query"] == "rust async runtime"


async def prompts_md_run(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-doc")
    try:
        done = await run_fragment(text, {"os": os, "__name__": "doc"})
    finally:
        os.environ.pop("OPENAI_API_KEY", None)
    assert done["text"] == "Ada wrote the first program."


async def architecture_md_row(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    from runvil import Setting

    row = eval(text, {"Setting": Setting, "_seconds": float})
    assert (row.key, row.name, row.option) == ("fetch.timeout", "timeout", "--fetch-timeout")


async def run_program(path: Path, env: dict[str, str], cwd: Path) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(REPO / "tests" / "fixtures" / "snippet.py"), str(path),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(cwd),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert (proc.returncode, err.decode()[-3000:]) == (0, "")
    return out.decode()


async def fetch_md_typed(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    path = tmp_path / "typed.py"
    path.write_text(text, encoding="utf-8")
    out = await run_program(path, child_env(write_seam(internet, tmp_path), tmp_path), tmp_path)
    assert out.startswith("# Field notes")


async def host_md_pack(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    """The Pack module as a Host takes it (the MCP client block runs it over MCP)."""
    from runvil import Host, PackContext

    namespace: dict[str, Any] = {"__name__": "acme_notes"}
    exec(compile(text, "acme_notes.py", "exec"), namespace)
    pack = namespace["plugin"](PackContext(services={}, network=None))
    async with Host(packs=[pack], config={"notes": {"prefix": "> "}}) as host:
        assert await host.call("notes/echo", {"text": "hi"}, envelope=False) == "> hi"


async def host_md_setting(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    """The setting block, added to the Pack module: its Plugin declares the setting and the
    Pack reads the value the Host hands it."""
    from runvil import Host, PackContext, Setting

    pack_module = next(t for w, t in blocks("python") if w.startswith("docs/host.md") and
                       t.startswith("# acme_notes.py\n"))
    namespace: dict[str, Any] = {"__name__": "acme_notes"}
    exec(compile(pack_module, "acme_notes.py", "exec"), namespace)
    exec(compile(text, "acme_notes.py", "exec"), namespace)
    (declared,) = namespace["plugin"].settings
    assert isinstance(declared, Setting) and declared.key == "notes.suffix"
    pack = namespace["plugin"](PackContext(settings={"notes.suffix": "!"}))
    async with Host(packs=[pack]) as host:
        assert await host.call("notes/echo", {"text": "hi"}, envelope=False) == "hi!"


async def host_md_client(text: str, internet: FakeInternet, tmp_path: Path) -> None:
    """The whole path of docs/host.md: the Pack module, its entry point from the pyproject
    block, the runvil.toml block, ``runvil`` on the PATH, and the client program, whose output
    is the block after it (the nonce aside)."""
    where = next(w for w, t in blocks("python") if t == text)
    pack = next(t for w, t in blocks("python") if w.startswith("docs/host.md") and
                "def plugin" in t)
    pyproject = next(t for w, t in blocks("toml") if w.startswith("docs/host.md") and
                     t.startswith("[project.entry-points"))
    config = next(t for w, t in blocks("toml") if w.startswith("docs/host.md") and
                  t.startswith("[mcp]"))
    site = tmp_path / "site"
    info = site / "acme_notes-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "acme_notes.py").write_text(pack, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-notes\nVersion: 1.0\n")
    points = tomllib.loads(pyproject)["project"]["entry-points"]["runvil.packs"]
    (info / "entry_points.txt").write_text(
        "[runvil.packs]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
    )
    user_config(tmp_path).write_text(config, encoding="utf-8")
    env = child_env(write_seam(internet, tmp_path), tmp_path)
    env["PYTHONPATH"] = f"{site}{os.pathsep}{REPO}"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items() if k != "PATH")
    shim = bin_dir / "runvil"
    shim.write_text(f'#!/bin/sh\n{exports}exec {sys.executable} {LAUNCHER} "$@"\n')
    shim.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    path = tmp_path / "client.py"
    path.write_text(text, encoding="utf-8")
    out = await run_program(path, env, tmp_path)
    nonce = re.compile(r"untrusted_input_[0-9a-f]{16}")
    assert nonce.sub("N", out) == nonce.sub("N", following_output(where))


Runner = Callable[[str, FakeInternet, Path], Any]
#: Each Python block of docs/, by page and its first line, and how it runs.
PYTHON: dict[tuple[str, str], Runner] = {
    ("docs/architecture.md", 'Setting("fetch.timeout"'): architecture_md_row,
    ("docs/fetch.md", "from runvil import ToolError"): fetch_md_call,
    ("docs/fetch.md", "import asyncio"): fetch_md_typed,
    ("docs/host.md", "from runvil import Approval"): host_md_tour,
    ("docs/host.md", "# acme_notes.py, with a setting"): host_md_setting,
    ("docs/host.md", "# acme_notes.py"): host_md_pack,
    ("docs/host.md", "import asyncio"): host_md_client,
    ("docs/prompts.md", "from runvil import Host"): prompts_md_run,
    ("docs/search.md", "from runvil.web import BraveProvider"): search_md_call,
}
DOC_PYTHON = [(w, t) for w, t in blocks("python") if w.startswith("docs/")]


def runner_for(where: str, text: str) -> Runner | None:
    page = where.rsplit(":", 1)[0]
    first = text.strip().splitlines()[0]
    return next((run for (p, start), run in PYTHON.items()
                 if p == page and first.startswith(start)), None)


def test_every_python_block_of_the_docs_has_a_way_to_run() -> None:
    assert [w for w, t in DOC_PYTHON if runner_for(w, t) is None] == []
    assert len(DOC_PYTHON) == len(PYTHON)


@pytest.mark.parametrize(("where", "text"), DOC_PYTHON, ids=[w for w, _ in DOC_PYTHON])
async def test_a_python_example_runs(
    where: str, text: str, web_of_docs: FakeInternet, tmp_path: Path
) -> None:
    run = runner_for(where, text)
    assert run is not None
    await run(text, web_of_docs, tmp_path)


# --- the user's words -------------------------------------------------------------------------


def test_the_user_documentation_never_names_the_internal_specification_files() -> None:
    """README.md and docs/ say "the specified text", never the names of the documents the
    project was specified in."""
    internal = re.compile(r"\b(?:seeds?|DESIGN\.md)\b", re.I)
    found = [
        f"{page.relative_to(REPO)}:{number}: {line.strip()}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if internal.search(line)
    ]
    assert found == []
