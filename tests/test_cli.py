"""``runvil fetch`` / ``search`` / ``config`` / ``mcp`` as a user runs them: a child process whose
piped output is the exact tool text, with exit codes 0 / 1 soft / 2 hard / 130 interrupted."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from runvil._faces.cli import Outcome, fetch_outcome, terminal_safe
from runvil.web._fetch.browser.discovery import browser_version, find_browser
from runvil.web._fetch.outcome import FetchOutcome
from tests.faces_helpers import (
    ESCAPES_BODY,
    GATEWAY_KEY,
    REPO,
    RUNVIL,
    child_env,
    gateway_app,
    hello_text,
    run_cli,
    serve_gateway,
    site_app,
    user_config,
    write_seam,
)
from tests.fixtures.internet import FakeInternet
from tests.fixtures.launch import SPEC_VAR

MISSING = "https://example.com/missing answered HTTP 404; try a different URL"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SEARCH_TEXT = (
    '{"query":"rust","results":[{"title":"Result for rust","url":"https://e.com/r",'
    '"description":"D"}]}'
)


@pytest.fixture
async def bodies() -> list[dict[str, Any]]:
    return []


@pytest.fixture
async def slow_started() -> asyncio.Event:
    return asyncio.Event()


@pytest.fixture
async def env(
    internet: FakeInternet, tmp_path: Path, bodies: list[dict[str, Any]],
    slow_started: asyncio.Event,
) -> dict[str, str]:
    app = site_app(slow_started)

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="nope", content_type="text/html")

    app.router.add_get("/missing", missing)
    await internet.serve(app)
    await serve_gateway(internet, gateway_app(bodies=bodies))
    return child_env(write_seam(internet, tmp_path), tmp_path)


# -- fetch -------------------------------------------------------------------------------------


async def test_fetch_prints_the_exact_tool_text(env: dict[str, str]) -> None:
    assert await run_cli("fetch", "https://example.com/hello.txt", env=env) == (
        0, hello_text() + "\n", "",
    )


async def test_fetch_soft_failure_exits_1_with_the_message_on_stdout(env: dict[str, str]) -> None:
    assert await run_cli("fetch", "https://example.com/missing", env=env) == (1, MISSING + "\n", "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["https://user:pw@example.com/"], "url must not contain userinfo"),
        (["https://example.com:8080/"], "port not allowed: 8080"),
        (["not a url"], "invalid url"),
        (["https://example.com/", "--max-chars", "0"],
         "web_fetch: max_chars must be a positive integer"),
    ],
)
async def test_fetch_hard_failure_exits_2_with_the_message_on_stderr(
    env: dict[str, str], args: list[str], message: str
) -> None:
    code, out, err = await run_cli("fetch", *args, env=env)
    # The message first, exactly; a hint may follow (tests/test_cli_hints.py).
    assert (code, out, err.split("\n", 1)[0]) == (2, "", message)


async def test_fetch_max_chars_and_raw(env: dict[str, str]) -> None:
    code, out, _ = await run_cli(
        "fetch", "https://example.com/hello.txt", "--max-chars", "5", env=env
    )
    assert (code, out) == (  # the CLI reads on: continuation is on unless configured off
        0,
        "url: https://example.com/hello.txt\ntruncated: true\nnext_start_index: 5\n"
        "extraction: plain\n\nhello\n",
    )
    code, out, _ = await run_cli(
        "fetch", "https://example.com/hello.txt", "--max-chars", "5", "--no-continuation",
        env=env,
    )
    assert (code, out) == (
        0, "url: https://example.com/hello.txt\ntruncated: true\nextraction: plain\n\nhello\n",
    )
    code, out, _ = await run_cli("fetch", "https://example.com/article", "--raw", env=env)
    assert code == 0
    assert out.startswith(
        "url: https://example.com/article\ntruncated: false\nextraction: raw-html\n\n"
    )
    assert "footer text" in out  # the whole page, not only the article


async def test_fetch_json_output(env: dict[str, str]) -> None:
    code, out, err = await run_cli("fetch", "https://example.com/hello.txt", "--json", env=env)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"ok": True, "text": hello_text(), "error_kind": None}
    code, out, err = await run_cli("fetch", "https://example.com/missing", "--json", env=env)
    assert (code, err) == (1, "")
    assert json.loads(out) == {"ok": False, "text": MISSING, "error_kind": "Soft"}
    code, out, err = await run_cli("fetch", "https://user:pw@example.com/", "--json", env=env)
    assert (code, err) == (2, "")
    assert json.loads(out) == {
        "ok": False, "text": "url must not contain userinfo", "error_kind": "InvalidArguments",
    }


async def test_ctrl_c_exits_130_without_a_traceback(
    env: dict[str, str], slow_started: asyncio.Event
) -> None:
    proc = await asyncio.create_subprocess_exec(
        *RUNVIL, "fetch", "https://example.com/slow",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=str(REPO),
    )
    await asyncio.wait_for(slow_started.wait(), 30)  # the fetch is under way
    proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), 10)
    assert proc.returncode == 130
    assert out == b""
    assert b"Traceback" not in err


# -- search ------------------------------------------------------------------------------------


async def test_search_prints_the_exact_json_text(env: dict[str, str]) -> None:
    assert await run_cli("search", "rust", env=env) == (0, SEARCH_TEXT + "\n", "")
    code, out, _ = await run_cli("search", "rust", "--json", env=env)
    assert code == 0
    assert json.loads(out) == {"ok": True, "text": SEARCH_TEXT, "error_kind": None}


async def test_search_options_reach_the_provider(
    env: dict[str, str], bodies: list[dict[str, Any]]
) -> None:
    code, _, err = await run_cli(
        "search", "rust async", "--count", "5", "--freshness", "pw", "--country", "us",
        "--lang", "en", "--safesearch", "strict", "--site", "docs.rs", "--site", "crates.io",
        "--exclude-site", "reddit.com", env=env,
    )
    assert (code, err) == (0, "")
    assert bodies == [{
        "query": "rust async", "count": 5, "freshness": "pw", "country": "us",
        "search_lang": "en", "safesearch": "strict",
        "include_domains": ["docs.rs", "crates.io"], "exclude_domains": ["reddit.com"],
    }]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rust", "--count", "30"], "web_search: count must be between 1 and 20"),
        (["rust", "--freshness", "week"], "web_search: invalid arguments"),
        (["   "], "web_search: query must not be empty"),
    ],
)
async def test_search_hard_failure_exits_2(
    env: dict[str, str], bodies: list[dict[str, Any]], args: list[str], message: str
) -> None:
    assert await run_cli("search", *args, env=env) == (2, "", message + "\n")
    assert bodies == []


async def test_search_provider_none_is_a_clear_configuration_error(env: dict[str, str]) -> None:
    assert await run_cli("search", "rust", "--search-provider", "none", env=env) == (
        2, "", "runvil: no search provider is configured (search.provider is none)\n",
    )


# -- config ------------------------------------------------------------------------------------


def browser_line() -> str:
    """What ``runvil config`` says about the browser on this machine (docs/fetch.md)."""
    status = find_browser()
    if not status.usable:
        return f"# browser: never ({status.reason})"
    assert status.executable is not None
    return f"# browser: auto ({browser_version(status.executable)} at {status.executable})"


async def test_config_shows_the_effective_settings_with_secrets_masked(
    env: dict[str, str], tmp_path: Path
) -> None:
    (user_config(tmp_path)).write_text('approval = "ask"\n[models]\nwriter = "openai:gpt-x"\n')
    code, out, err = await run_cli("config", env=env, cwd=tmp_path)
    assert (code, err) == (0, "")
    assert GATEWAY_KEY not in out
    path = user_config(tmp_path)
    assert out.splitlines() == [
        f"# file: {path}",
        browser_line(),
        "web = true  # default",
        "envelope = true  # default",
        f'approval = "ask"  # file:{path}',
        "",
        "[search]",
        'provider = "gateway"  # env:RUNVIL_SEARCH_GATEWAY_URL',
        'api_key = "********"  # env:RUNVIL_SEARCH_GATEWAY_KEY',
        'url = "https://gw.example/search"  # env:RUNVIL_SEARCH_GATEWAY_URL',
        "",
        "[fetch]",
        "continuation = true  # default",
        "pdf = true  # default",
        "robots = false  # default",
        "",
        "[models]",
        f'writer = "openai:gpt-x"  # file:{path}',
    ]
    code, out, err = await run_cli(
        "config", "--json", "--search-provider", "duckduckgo", env=env, cwd=tmp_path
    )
    data = json.loads(out)
    assert (code, data["search"], data["sources"]["search.provider"]) == (
        0, {"provider": "duckduckgo"}, "flag",
    )


async def test_config_errors_exit_2_with_a_message(env: dict[str, str], tmp_path: Path) -> None:
    (user_config(tmp_path)).write_text('approval = "often"\n')
    assert await run_cli("config", env=env, cwd=tmp_path) == (
        2, "", f"runvil: {user_config(tmp_path)}: approval must be one of auto, ask, deny, "
        "not 'often'\n",
    )
    user_config(tmp_path).unlink()
    assert await run_cli("mcp", "--http", "localhost", env=env) == (
        2, "", "runvil: --http must read HOST:PORT, not 'localhost'\n",
    )


# -- the terminal ------------------------------------------------------------------------------


def run_on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; return (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.chdir(REPO)
        os.execve(RUNVIL[0], [*RUNVIL, *args],
                  {**env, "TERM": "xterm-256color", "COLUMNS": "100"})
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


async def test_a_terminal_gets_rendered_markdown(env: dict[str, str]) -> None:
    code, out = await asyncio.to_thread(
        run_on_a_terminal, ["fetch", "https://example.com/article"], env
    )
    assert code == 0
    assert "url: https://example.com/article" in out
    assert "Field notes" in out
    assert "# Field notes" not in out  # the heading is rendered, not shown as markdown source
    assert "\x1b[" in out  # styled


async def test_a_terminal_gets_search_results_as_a_list(env: dict[str, str]) -> None:
    code, out = await asyncio.to_thread(run_on_a_terminal, ["search", "rust"], env)
    plain = ANSI.sub("", out)
    assert code == 0
    assert "Searching for 'rust'" in plain  # the spinner, on stderr
    assert "1. Result for rust" in plain
    assert "   https://e.com/r" in plain
    assert '{"query"' not in plain


async def test_a_page_cannot_send_escape_sequences_to_the_terminal(env: dict[str, str]) -> None:
    code, out = await asyncio.to_thread(
        run_on_a_terminal, ["fetch", "https://example.com/escape.txt"], env
    )
    assert code == 0
    assert "a␛]0;pwned␇b␛[2Jc␛]52;c;ZXZpbA==␇d\ufffde" in out
    assert "\x1b]" not in out and "\x1b[2J" not in out and "\x9b" not in out
    # Piped, the text is exact: what the tool returned, byte for byte.
    code, piped, _ = await run_cli("fetch", "https://example.com/escape.txt", env=env)
    assert (code, piped.split("\n\n", 1)[1]) == (0, ESCAPES_BODY + "\n")


def test_terminal_safe_keeps_newlines_and_tabs() -> None:
    assert terminal_safe("a\tb\nc\x00d\x7fe\x85f") == "a\tb\nc␀d\u2421e\ufffdf"


# -- the classification rule -------------------------------------------------------------------


def test_soft_text_and_results_are_told_apart_by_the_fetchs_outcome() -> None:
    page = FetchOutcome(text="hello", url="https://e.com/", extraction="plain")
    assert fetch_outcome(page) == Outcome(True, page.model_text())
    assert fetch_outcome(page).exit_code == 0
    for text in (MISSING, "url: https://e.com/ answered HTTP 500; try a different URL"):
        assert fetch_outcome(FetchOutcome.soft(text)) == Outcome(False, text, "Soft")
        assert fetch_outcome(FetchOutcome.soft(text)).exit_code == 1
    assert Outcome(False, "x", "Transport").exit_code == 2
    assert Outcome(True, "x").exit_code == 0


async def test_config_file_named_before_or_after_the_command(
    env: dict[str, str], tmp_path: Path
) -> None:
    named = tmp_path / "elsewhere.toml"
    named.write_text("envelope = false\n")
    for args in (
        ["--config", str(named), "config", "--json"],
        ["config", "--json", "--config", str(named)],
    ):
        code, out, err = await run_cli(*args, env=env)
        data = json.loads(out)
        assert (code, err, data["file"], data["envelope"]) == (0, "", str(named), False)
    missing = tmp_path / "nope.toml"
    assert await run_cli("--config", str(missing), "config", env=env) == (
        2, "", f"runvil: {missing}: no such configuration file\n",
    )


async def test_mcp_http_port_in_use_is_a_clear_error(env: dict[str, str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert await run_cli("mcp", "--http", f"127.0.0.1:{port}", env=env) == (
            2, "", f"runvil: cannot listen on 127.0.0.1:{port}: Address already in use\n",
        )


async def test_a_reader_that_went_away_is_not_an_error(env: dict[str, str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `runvil fetch URL | head -0`
    proc = await asyncio.create_subprocess_exec(
        *RUNVIL, "fetch", "https://example.com/hello.txt",
        stdin=asyncio.subprocess.DEVNULL, stdout=write_end, stderr=asyncio.subprocess.PIPE,
        env=env, cwd=str(REPO),
    )
    os.close(write_end)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert (proc.returncode, err) == (0, b"")


async def test_an_unknown_key_is_refused_with_a_suggestion(
    env: dict[str, str], tmp_path: Path
) -> None:
    (user_config(tmp_path)).write_text('[search]\nprovder = "brave"\n')
    for command in (["config"], ["fetch", "https://example.com/hello.txt"], ["search", "rust"]):
        assert await run_cli(*command, env=env, cwd=tmp_path) == (
            2, "", f"runvil: {user_config(tmp_path)}: unknown key search.provder; did you "
            "mean search.provider?\n",
        )


async def test_the_old_test_seam_variable_changes_nothing_it_is_refused(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The shipped entry point (not the launcher) reads no test seam: the variable the faces
    once read is an unknown one now, refused before any network access."""
    seam = env.pop(SPEC_VAR)
    real = {**env, "RUNVIL_TEST_NETWORK": seam}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "runvil", "fetch", "https://example.com/hello.txt",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=real, cwd=str(tmp_path),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert (proc.returncode, out) == (2, b"")
    assert err.decode().startswith(
        "runvil: unknown environment variable RUNVIL_TEST_NETWORK; known: RUNVIL_APPROVAL, "
    )


async def test_python_dash_m_runvil_is_the_command_line(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "runvil", "--help", stdout=asyncio.subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}, cwd=str(tmp_path),
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
    assert out.decode().startswith("Usage: runvil [OPTIONS] COMMAND [ARGS]...\n")
    for command in ("config", "fetch", "mcp", "run", "search"):
        assert f"\n  {command} " in out.decode()


async def test_config_shows_the_packs_tables(env: dict[str, str], tmp_path: Path) -> None:
    path = user_config(tmp_path)
    path.write_text('[packs.notes]\nprefix = "> "\n')
    code, out, err = await run_cli("config", env=env, cwd=tmp_path)
    assert (code, err) == (0, "")
    assert out.endswith(f'\n[packs.notes]  # file:{path}\nprefix = "> "\n')
    code, out, err = await run_cli("config", "--json", env=env, cwd=tmp_path)
    assert json.loads(out)["packs"] == {"notes": {"prefix": "> "}}
