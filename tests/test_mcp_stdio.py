"""The stdio MCP transport's reader: every malformed line gets its JSON-RPC 2.0 error answer,
no line is buffered past 4 MiB, and the server keeps serving the next line."""

from __future__ import annotations

import asyncio
import io
import json
import random
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from runvil._faces.mcp_stdio import MAX_MESSAGE_BYTES, FrameReader, TopLevelId, judge
from tests.faces_helpers import REPO, RUNVIL, child_env, site_app, write_seam
from tests.fixtures.internet import FakeInternet


def parse_error(data: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": -32700, "message": "Parse error", "data": data}}


def invalid(data: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id,
            "error": {"code": -32600, "message": "Invalid Request", "data": data}}


NOT_JSON = parse_error("the message is not valid JSON")
NOT_UTF8 = parse_error("the message is not valid UTF-8")
BATCH = invalid("batches are not supported: send one message per line")
NOT_A_MESSAGE = "the message is not a JSON-RPC 2.0 request, notification or response"
TOO_LONG = "the message is longer than 4194304 bytes"


def answer_of(line: bytes) -> Any:
    verdict = judge(line)
    if verdict is None or isinstance(verdict, str):
        return verdict
    return json.loads(verdict.model_dump_json(by_alias=True, exclude_unset=True))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "method"', NOT_JSON),
        (b"not json at all", NOT_JSON),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', NOT_JSON),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', NOT_JSON),
        (b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}", NOT_JSON),  # deeper than the parser goes
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}', NOT_UTF8),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\xc3', NOT_UTF8),
        (b"[]", BATCH),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', BATCH),
        (b"42", invalid(NOT_A_MESSAGE)),
        (b'"ping"', invalid(NOT_A_MESSAGE)),
        (b"null", invalid(NOT_A_MESSAGE)),
        (b'{"a": 1}', invalid(NOT_A_MESSAGE)),
        (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}', invalid(NOT_A_MESSAGE)),
        (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', invalid(NOT_A_MESSAGE, 7)),
        (b'{"jsonrpc": "1.0", "id": "a", "method": "ping"}', invalid(NOT_A_MESSAGE, "a")),
        (b'{"jsonrpc": "2.0", "id": true, "method": 5}', invalid(NOT_A_MESSAGE)),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": 5}', invalid(NOT_A_MESSAGE)),
        (b"   ", None),
        (b"\r", None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r',
         '{"jsonrpc":"2.0","id":1,"method":"ping"}\r'),
        (b'{"jsonrpc":"2.0","id":3,"result":{}}', '{"jsonrpc":"2.0","id":3,"result":{}}'),
    ],
)
def test_each_line_is_passed_on_answered_or_ignored(line: bytes, expected: Any) -> None:
    assert answer_of(line) == expected


@pytest.mark.parametrize(
    ("message", "request_id"),
    [
        ({"jsonrpc": "2.0", "id": 7, "method": "x", "params": {"id": 9, "s": '"}{][,:\\'}}, 7),
        ({"params": {"id": 9, "s": 'a\\"b'}, "method": "x", "jsonrpc": "2.0", "id": "abc"}, "abc"),
        ({"params": [{"id": 1}], "id": None}, None),
        ({"id": True}, None),
        ({"id": 2.5}, None),
        ({"id": {"nested": 1}}, None),
        ({"x": 1}, None),
        ({"id": "x" * 2000}, None),  # longer than any id worth echoing
    ],
)
def test_the_top_level_id_is_found_in_any_chunking(message: Any, request_id: Any) -> None:
    data = json.dumps(message).encode()
    rng = random.Random(7)
    for _ in range(30):
        scanner = TopLevelId()
        start = 0
        while start < len(data):
            stop = start + rng.randint(1, 7)
            scanner.feed(data[start:stop])
            start = stop
        assert scanner.request_id == request_id
    assert TopLevelId().request_id is None
    array = TopLevelId()
    array.feed(b'[{"id": 1}]')
    assert array.request_id is None


async def read_all(data: bytes, limit: int = MAX_MESSAGE_BYTES) -> tuple[list[str], list[Any]]:
    reader = FrameReader(io.BytesIO(data).read, limit=limit)
    answers: list[Any] = []

    async def answer(error: Any) -> None:
        answers.append(json.loads(error.model_dump_json(by_alias=True, exclude_unset=True)))

    reader.attach(answer)
    lines = [line async for line in reader]
    return lines, answers


async def test_a_line_past_the_limit_is_never_buffered_and_is_answered_with_its_id() -> None:
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    huge = (
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"x":"' + b"a" * 300_000 + b'"},"id":9}'
    )
    lines, answers = await read_all(ping + b"\n" + huge + b"\n" + ping, limit=100_000)
    assert lines == [ping.decode(), ping.decode()]
    assert answers == [invalid("the message is longer than 100000 bytes", 9)]


async def test_the_default_limit_is_4_mib_and_a_line_at_it_is_read() -> None:
    head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"'
    tail = b'"}}}'
    exact = head + b"a" * (MAX_MESSAGE_BYTES - len(head) - len(tail)) + tail
    over = exact[:-len(tail)] + b"a" + tail
    lines, answers = await read_all(exact + b"\n" + over + b"\n")
    assert MAX_MESSAGE_BYTES == 4 * 1024 * 1024
    assert [len(line) for line in lines] == [MAX_MESSAGE_BYTES]
    assert answers == [invalid(TOO_LONG, 1)]


async def test_lines_are_found_whatever_pieces_the_pipe_delivers() -> None:
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    data = b"\n".join([ping, b"", b"{oops", ping, b"[1]", ping]) + b"\n"
    source = io.BytesIO(data)
    rng = random.Random(3)
    reader = FrameReader(lambda n: source.read(min(n, rng.randint(1, 7))))
    answers: list[Any] = []

    async def answer(error: Any) -> None:
        answers.append(json.loads(error.model_dump_json(by_alias=True, exclude_unset=True)))

    reader.attach(answer)
    assert [line async for line in reader] == [ping.decode()] * 3
    assert answers == [NOT_JSON, BATCH]
    for _ in range(100):  # the reading thread ends with the stream
        if "runvil-mcp-stdin" not in {t.name for t in threading.enumerate()}:
            break
        await asyncio.sleep(0.01)
    assert "runvil-mcp-stdin" not in {t.name for t in threading.enumerate()}


async def test_the_last_line_needs_no_newline() -> None:
    lines, answers = await read_all(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"broken"')
    assert lines == ['{"jsonrpc":"2.0","id":1,"method":"ping"}']
    assert answers == [NOT_JSON]


# -- runvil mcp over stdio, as a child process ------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0", "id": 0, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}


class StdioServer:
    """``runvil mcp`` on pipes: write lines, read one answer per line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def answer(self) -> Any:
        assert self.proc.stdout is not None
        return json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 30))

    async def ask(self, line: bytes) -> Any:
        await self.send(line)
        return await self.answer()


@pytest.fixture
async def stdio_server(internet: FakeInternet, tmp_path: Path) -> Any:
    await internet.serve(site_app())
    env = child_env(write_seam(internet, tmp_path), tmp_path)
    proc = await asyncio.create_subprocess_exec(
        *RUNVIL, "mcp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env, cwd=str(REPO), limit=16 * 1024 * 1024,
    )
    server = StdioServer(proc)
    try:
        hello = await server.ask(json.dumps(INITIALIZE).encode())
        assert hello["id"] == 0 and "result" in hello
        await server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield server
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def test_runvil_mcp_answers_malformed_lines_and_keeps_serving(stdio_server: Any) -> None:
    server: StdioServer = stdio_server
    pong = {"jsonrpc": "2.0", "id": 99, "result": {}}
    ping = b'{"jsonrpc":"2.0","id":99,"method":"ping"}'
    for line, expected in [
        (b'{"jsonrpc": "2.0", "id": 1, "method"', NOT_JSON),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}', NOT_UTF8),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', BATCH),
        (b'{"jsonrpc": "2.0", "id": 5, "method": 1}', invalid(NOT_A_MESSAGE, 5)),
    ]:
        assert await server.ask(line) == expected
        assert await server.ask(ping) == pong
    await server.send(b"")  # a blank line is not answered at all
    assert await server.ask(ping) == pong


async def test_ctrl_c_ends_runvil_mcp_while_its_stdin_stays_open(stdio_server: Any) -> None:
    server: StdioServer = stdio_server
    server.proc.send_signal(signal.SIGINT)
    assert await asyncio.wait_for(server.proc.wait(), 10) == 130


async def test_runvil_mcp_refuses_a_line_past_4_mib_by_its_id(stdio_server: Any) -> None:
    server: StdioServer = stdio_server
    url = "https://example.com/?q=" + "a" * (5 * 1024 * 1024)
    call = {"method": "tools/call", "params": {"name": "web_fetch", "arguments": {"url": url}},
            "jsonrpc": "2.0", "id": 41}
    assert await server.ask(json.dumps(call).encode()) == invalid(TOO_LONG, 41)
    call["params"]["arguments"]["url"] = "https://example.com/?q=" + "a" * 10_000  # type: ignore[index]
    answer = await server.ask(json.dumps(call).encode())
    assert answer["id"] == 41
    assert answer["result"]["isError"] is True
    assert answer["result"]["content"][0]["text"] == (
        "web_fetch: url is longer than 8192 characters"
    )
    hello = await server.ask(
        b'{"jsonrpc":"2.0","id":42,"method":"tools/call",'
        b'"params":{"name":"web_fetch","arguments":{"url":"https://example.com/hello.txt"}}}'
    )
    assert hello["id"] == 42 and hello["result"]["isError"] is False
