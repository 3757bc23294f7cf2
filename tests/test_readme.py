"""The README's Python snippets run as written when pasted into a file.

Each ```python block of README.md is written to a file of its own and run by a fresh
interpreter, on the fake internet (``tests/fixtures/snippet.py`` makes ``Network()`` the fake
one; the snippet's text is run unchanged): the fetches reach a loopback TLS server, the search
goes to a fake Gateway named by the environment, the OpenAI adapter's model is a scripted
chat-completions server on loopback. The examples of docs/ (and the README's TOML and shell
blocks) are checked by ``tests/test_doc_examples.py``.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.faces_helpers import (
    ARTICLE_HTML,
    REPO,
    ScriptedModel,
    child_env,
    serve_gateway,
    write_seam,
)
from tests.fixtures.internet import FakeInternet

SNIPPET = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
RUNNER = REPO / "tests" / "fixtures" / "snippet.py"


def snippets() -> list[str]:
    return SNIPPET.findall((REPO / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_the_snippets_this_test_runs() -> None:
    found = snippets()
    assert len(found) == len(EXPECTED), "a snippet was added or removed: update EXPECTED"
    for code in found:
        assert "asyncio.run(main())" in code  # a whole program, not a fragment


def tool_call_turn(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{
            "index": 0, "finish_reason": "tool_calls",
            "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "web_fetch",
                                 "arguments": '{"url": "https://example.com/"}'},
                }],
            },
        }],
    }


def answer_turn(body: dict[str, Any]) -> dict[str, Any]:
    tool_message = body["messages"][-1]
    assert tool_message["role"] == "tool" and "Field notes" in tool_message["content"]
    return {
        "id": "c2", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{
            "index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "It holds field notes."},
        }],
    }


#: What each snippet, in README order, prints (a piece of its output).
EXPECTED = [
    "https://example.com/ readability False\n# Field notes",
    "# Field notes",
    '{"query":"ada lovelace","results":[{"title":"Result for ada lovelace"',
    "url: https://example.com/\ntruncated: false\nextraction: readability",
    "It holds field notes.",
]


@pytest.mark.parametrize("index", range(len(EXPECTED)))
async def test_a_readme_snippet_runs_as_written(
    internet: FakeInternet, tmp_path: Path, index: int
) -> None:
    async def article(request: web.Request) -> web.Response:
        return web.Response(text=ARTICLE_HTML, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", article)
    await internet.serve(app)
    await serve_gateway(internet)
    model = ScriptedModel("/v1/chat/completions", [tool_call_turn, answer_turn])
    await model.start()
    try:
        env = child_env(
            write_seam(internet, tmp_path), tmp_path,
            RUNVIL_SEARCH_PROVIDER="gateway",
            BRAVE_API_KEY="brave-test-key",
            OPENAI_API_KEY="sk-test",
            OPENAI_BASE_URL=f"{model.base_url}/v1",
        )
        path = tmp_path / "snippet.py"
        path.write_text(snippets()[index], encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(RUNNER), str(path),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=str(tmp_path),
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await model.stop()
    assert (proc.returncode, err.decode()[-3000:]) == (0, "")  # the end of a traceback
    assert EXPECTED[index] in out.decode()
