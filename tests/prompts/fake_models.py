"""Scripted fake model servers speaking the OpenAI chat-completions and Anthropic Messages wire
formats, on loopback plain HTTP.

A script is a list of turns; each request pops the next one and is recorded (``.requests`` holds
the decoded bodies, ``.headers`` the request headers) so tests can assert on exactly what the
host sent: the tools advertised, the messages, the enveloped tool results. A turn is one of:

* ``text("...")`` — the model answers in plain text (the loop ends);
* ``calls(("web_fetch", {"url": ...}), ...)`` — the model asks for tool calls;
* ``failure(status, body)`` — the server answers with an error status;
* a callable ``body -> turn`` that decides from what the host sent.

A request past the end of the script gets HTTP 500 ``script exhausted``, so a loop that asks
more often than the test expected fails loudly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

Turn = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def text(content: str) -> dict[str, Any]:
    return {"text": content}


def calls(*items: tuple[str, Any]) -> dict[str, Any]:
    return {"calls": list(items)}


def failure(status: int, body: str) -> dict[str, Any]:
    return {"status": status, "body": body}


@dataclass
class FakeModel:
    """One scripted server; ``api`` picks the wire format."""

    api: Literal["openai", "anthropic"]
    script: list[Turn]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    base_url: str = ""
    _runner: web.AppRunner | None = None
    _counter: int = 0

    async def start(self) -> FakeModel:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/v1/messages", self._handle)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        root = f"http://127.0.0.1:{port}"
        self.base_url = f"{root}/v1" if self.api == "openai" else root
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        self.paths.append(request.path)
        if not self.script:
            return web.Response(status=500, text="script exhausted")
        turn = self.script.pop(0)
        if callable(turn):
            turn = turn(body)
        if "status" in turn:
            return web.Response(status=turn["status"], text=turn["body"])
        if self.api == "openai":
            return web.json_response(self._openai(turn))
        return web.json_response(self._anthropic(turn))

    def _next_id(self) -> str:
        self._counter += 1
        return f"call_{self._counter}"

    def _openai(self, turn: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
        if "calls" in turn:
            message["tool_calls"] = [
                {
                    "id": self._next_id(),
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for name, args in turn["calls"]
            ]
        finish = "tool_calls" if "calls" in turn else "stop"
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }

    def _anthropic(self, turn: dict[str, Any]) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if turn.get("text"):
            content.append({"type": "text", "text": turn["text"]})
        for name, args in turn.get("calls", []):
            content.append({"type": "tool_use", "id": self._next_id(), "name": name, "input": args})
        stop = "tool_use" if "calls" in turn else "end_turn"
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": stop,
        }


def last_tool_results(body: dict[str, Any], api: str) -> list[str]:
    """The tool result texts in the last message(s) of a request body, in order."""
    if api == "openai":
        out = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            out.append(message["content"])
        return list(reversed(out))
    last = body["messages"][-1]
    return [block["content"] for block in last["content"] if block["type"] == "tool_result"]
