"""``runvil run FILE.md``: a prompt file run with the configured Host, model roles from
``runvil.toml`` and ``--model``, ``--no-web``, and run errors on stderr with exit 2."""

from __future__ import annotations

import asyncio
import json
import os
import pty
from pathlib import Path
from typing import Any

import pytest

from runvil import unwrap
from tests.faces_helpers import (
    REPO,
    RUNVIL,
    ScriptedModel,
    child_env,
    hello_text,
    run_cli,
    serve_gateway,
    site_app,
    user_config,
    write_seam,
)
from tests.fixtures import example_pack
from tests.fixtures.internet import FakeInternet

FETCH_PAGE = """---
name: fetch-page
description: Fetches one web page with the web Pack.
runvil: 0
uses: [web]
---

# Fetch page

## Fetch

```lua
return tools.call('web/fetch', { url = '{url}' })
```
"""

SUMMARIZE = """---
name: summarize-page
description: Has a model fetch one page and summarize it.
runvil: 0
uses: [web]
models:
  researcher: {}
---

# Summarize page

## Summary

Use `web_fetch` to read `https://example.com/hello.txt` and summarize it.

```lua
tools.offer('web/fetch')
models.use('researcher')
messages:user(prose)
models.loop()
return messages[#messages].content
```
"""


@pytest.fixture
async def env(internet: FakeInternet, tmp_path: Path) -> dict[str, str]:
    await internet.serve(site_app())
    await serve_gateway(internet)
    return child_env(write_seam(internet, tmp_path), tmp_path)


def prompt(tmp_path: Path, text: str, name: str = "prompt.md") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


async def test_run_prints_the_run_result(env: dict[str, str], tmp_path: Path) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://example.com/hello.txt"))
    code, out, err = await run_cli("run", file, env=env)
    assert (code, err) == (0, "")
    assert unwrap(out.removesuffix("\n")) == hello_text()


async def test_an_uncaught_tool_failure_ends_the_run_with_exit_2(
    env: dict[str, str], tmp_path: Path
) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://user:pw@example.com/"))
    assert await run_cli("run", file, env=env) == (
        2, "", "tool call failure: url must not contain userinfo\n",
    )


async def test_no_web_runs_without_the_web_pack(env: dict[str, str], tmp_path: Path) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://example.com/hello.txt"))
    assert await run_cli("run", file, "--no-web", env=env) == (
        2, "", "the environment cannot satisfy this prompt:\n- missing required Pack: web\n",
    )


async def test_approval_deny_refuses_the_call(env: dict[str, str], tmp_path: Path) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://example.com/hello.txt"))
    assert await run_cli("run", file, "--approval", "deny", env=env) == (
        2, "", "tool call failure: web_fetch: the user refused this call; do not retry it\n",
    )


async def test_a_model_role_from_the_flag_and_a_provider_from_runvil_toml(
    env: dict[str, str], tmp_path: Path
) -> None:
    def tool_call(body: dict[str, Any]) -> dict[str, Any]:
        call = {"id": "c1", "type": "function", "function": {
            "name": "web_fetch", "arguments": json.dumps({"url": "https://example.com/hello.txt"}),
        }}
        return chat({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")

    def summary(body: dict[str, Any]) -> dict[str, Any]:
        page = unwrap(body["messages"][-1]["content"]) or ""
        return chat({"role": "assistant", "content": "Summary: " + page.splitlines()[-1]}, "stop")

    model = ScriptedModel("/v1/chat/completions", [tool_call, summary])
    await model.start()
    try:
        (user_config(tmp_path)).write_text(
            f'[providers.local]\napi = "openai"\nbase_url = "{model.base_url}/v1"\n'
            'api_key_env = "LOCAL_KEY"\n'
        )
        file = prompt(tmp_path, SUMMARIZE)
        result = await run_cli(
            "run", file, "--model", "researcher=local:scripted-1",
            env={**env, "LOCAL_KEY": "k-local"}, cwd=tmp_path,
        )
    finally:
        await model.stop()
    assert result == (0, "Summary: hello from example\n", "")
    assert model.requests[0]["model"] == "scripted-1"
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["web_fetch"]


async def test_a_bad_model_flag_is_a_configuration_error(
    env: dict[str, str], tmp_path: Path
) -> None:
    file = prompt(tmp_path, SUMMARIZE)
    assert await run_cli("run", file, "--model", "researcher", env=env) == (
        2, "", "runvil: --model must read ROLE=PROVIDER:MODEL, not 'researcher'\n",
    )
    assert await run_cli("run", file, "--model", "researcher=nowhere:m", env=env) == (
        2, "", "runvil: models.researcher: unknown model provider 'nowhere' "
        "(known: anthropic, openai)\n",
    )


def chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted-1",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


async def test_approval_ask_without_a_terminal_refuses(env: dict[str, str], tmp_path: Path) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://example.com/hello.txt"))
    assert await run_cli("run", file, "--approval", "ask", env=env) == (
        2, "", "tool call failure: web_fetch: the user refused this call; do not retry it\n",
    )


def converse_on_a_terminal(args: list[str], env: dict[str, str], answer: bytes) -> str:
    """Run the CLI on a pseudo-terminal, type ``answer`` at the approval question, and return
    everything it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.chdir(REPO)
        os.execve(RUNVIL[0], [*RUNVIL, *args], {**env, "TERM": "dumb"})
    seen = b""
    answered = False
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
        if not answered and b"[N]o " in seen:
            os.write(fd, answer)
            answered = True
    os.waitpid(pid, 0)
    os.close(fd)
    return seen.decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        (b"y\n", hello_text()),
        (b"n\n", None),
    ],
)
async def test_approval_ask_on_a_terminal(
    env: dict[str, str], tmp_path: Path, answer: bytes, result: str | None
) -> None:
    file = prompt(tmp_path, FETCH_PAGE.replace("{url}", "https://example.com/hello.txt"))
    out = await asyncio.to_thread(
        converse_on_a_terminal, ["run", file, "--approval", "ask"], env, answer
    )
    question = "runvil: allow web/fetch https://example.com/hello.txt? [y]es / [a]lways / [N]o "
    assert out.startswith(question)
    after = out[len(question):].split("\n", 1)[1]  # past the echoed answer
    if result is None:
        assert after == (
            "tool call failure: web_fetch: the user refused this call; do not retry it\n"
        )
    else:
        assert unwrap(after.removesuffix("\n")) == result


ECHO_NOTE = """---
name: echo-note
description: Echoes a note with a third-party Pack.
runvil: 0
uses: [example/notes]
---

# Echo note

## Echo

```lua
return tools.call('notes/echo', { text = 'hi' })
```
"""


async def test_run_serves_an_installed_third_party_pack_with_its_configuration(
    env: dict[str, str], tmp_path: Path
) -> None:
    site = example_pack.install(tmp_path / "site")
    (user_config(tmp_path)).write_text('[packs.notes]\nprefix = "note: "\n')
    file = prompt(tmp_path, ECHO_NOTE)
    code, out, err = await run_cli(
        "run", file, env={**env, "PYTHONPATH": f"{site}{os.pathsep}{REPO}"}, cwd=tmp_path
    )
    assert (code, err) == (0, "")
    assert unwrap(out.removesuffix("\n")) == "note: hi"
    # Without the distribution the Pack is missing, and the prompt is refused as the seeds say.
    assert await run_cli("run", file, env=env, cwd=tmp_path) == (
        2, "", "the environment cannot satisfy this prompt:\n- missing required Pack: "
        "example/notes\n",
    )
