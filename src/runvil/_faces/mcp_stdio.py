"""The stdio MCP transport's input side: one JSON-RPC message per line, bounded, every bad line
answered.

The SDK's own stdio reader reads a line of any length (a client can make the server buffer
gigabytes), repairs invalid UTF-8 to U+FFFD, and drops every line it cannot parse without a word,
so a client that sent one malformed line waits forever for its answer. This reader hands the
SDK only the lines that are JSON-RPC messages, and answers every other line itself, as JSON-RPC
2.0 says a server must:

========================================================  ======  ===================  =========
the line                                                   code    message              id
========================================================  ======  ===================  =========
longer than :data:`MAX_MESSAGE_BYTES` (never buffered)     -32600  ``Invalid Request``  its id*
not UTF-8, or not JSON                                     -32700  ``Parse error``      null
a JSON array (a batch: MCP sends one message per line)     -32600  ``Invalid Request``  null
JSON, but not a request, notification or response          -32600  ``Invalid Request``  its id*
blank                                                      (ignored)
========================================================  ======  ===================  =========

\\* the message's top-level ``id`` when it is a string or an integer, else null: a client can
match the answer to the call it made, and its call fails at once instead of waiting forever.
Each answer's ``data`` says what was wrong in a sentence (the table in docs/mcp.md). The server
keeps serving the next line.

Why 4 MiB: it is the limit the SDK's streamable HTTP transport puts on a request body, so both
transports accept the same messages; MCP's own messages are a few hundred bytes, and the largest
arguments the web tools accept (an 8,192-character url) need well under 100 KB. Lines are read
one at a time, so a client holds at most one line's worth of the server's memory in its reader.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types
import pydantic
import pydantic_core

__all__ = ["MAX_MESSAGE_BYTES", "FrameReader", "TopLevelId", "error", "judge"]

#: The longest line (one JSON-RPC message, without its newline) the server reads.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: How much one read takes from the pipe.
_CHUNK = 64 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

NOT_UTF8 = "the message is not valid UTF-8"
NOT_JSON = "the message is not valid JSON"
BATCH = "batches are not supported: send one message per line"
NOT_A_MESSAGE = "the message is not a JSON-RPC 2.0 request, notification or response"

Answer = Callable[[types.JSONRPCError], Awaitable[None]]


def error(code: int, data: str, request_id: str | int | None = None) -> types.JSONRPCError:
    """A JSON-RPC error response with the specification's own message for ``code``."""
    message = "Parse error" if code == PARSE_ERROR else "Invalid Request"
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message, data=data)
    )


def judge(line: bytes) -> str | types.JSONRPCError | None:
    """What to do with one whole line: the text to hand to the SDK, the error to answer with,
    or None for a blank line."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return error(PARSE_ERROR, NOT_UTF8)
    try:
        # Strict JSON (no NaN or Infinity, which the SDK's parser would let through), by the
        # same parser the SDK uses; its depth and number limits count as not JSON too.
        value = pydantic_core.from_json(text, allow_inf_nan=False)
    except ValueError:
        return error(PARSE_ERROR, NOT_JSON)
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except pydantic.ValidationError:
        pass
    else:
        return text
    if isinstance(value, list):
        return error(INVALID_REQUEST, BATCH)
    request_id = value.get("id") if isinstance(value, dict) else None
    return error(INVALID_REQUEST, NOT_A_MESSAGE, _usable_id(request_id))


def _usable_id(value: object) -> str | int | None:
    """An id the answer can carry: a string or an integer (JSON ``true`` is neither)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


_IN_STRING = re.compile(rb'["\\]')
_STRUCTURE = re.compile(rb'[][{},:"]')


class TopLevelId:
    """Finds the top-level ``"id"`` of a JSON object fed in chunks, keeping only the id.

    For a line too long to buffer: the answer should still name the call it refuses, and a
    client may write ``id`` after a megabyte of ``params`` (the TypeScript SDK puts it last).
    The scan jumps from one structural character to the next with a regular expression, so it
    costs about as much as a copy of the line. It reads the structure, not the values: a key
    written with escapes (``"\\u0069d"``) is not recognised, and then the answer's id is null.
    """

    _LONGEST_ID = 1024

    def __init__(self) -> None:
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._expect_key = False
        self._key: bytearray | None = None  # a top-level key being read (its first bytes)
        self._last_key = b""
        self._value: bytearray | None = None  # the id's value being read
        self._found: bytes | None = None
        self._broken = False  # not an object, or an id too long to be one

    def feed(self, chunk: bytes) -> None:
        """Read the next piece of the line."""
        pos, end = 0, len(chunk)
        while pos < end and not self._broken:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                    self._take(chunk[pos : pos + 1])
                    pos += 1
                    continue
                match = _IN_STRING.search(chunk, pos)
                stop = match.start() if match else end
                self._take(chunk[pos:stop])
                if match is None:
                    return
                pos = stop + 1
                if chunk[stop] == 0x5C:  # backslash
                    self._take(b"\\")
                    self._escaped = True
                else:
                    self._close_string()
                continue
            match = _STRUCTURE.search(chunk, pos)
            stop = match.start() if match else end
            self._take(chunk[pos:stop])
            if match is None:
                return
            self._structure(chunk[stop : stop + 1])
            pos = stop + 1

    def _structure(self, char: bytes) -> None:
        if char == b'"':
            self._in_string = True
            if self._depth == 1 and self._expect_key:
                self._key = bytearray()
            else:
                self._take(char)
        elif char in (b"{", b"["):
            if self._depth == 0 and char == b"[":
                self._broken = True
            self._take(char)
            self._depth += 1
            if self._depth == 1:
                self._expect_key = True
        elif char in (b"}", b"]"):
            self._depth -= 1
            if self._depth == 0:
                self._end_value()
            else:
                self._take(char)
        elif char == b":" and self._depth == 1:
            self._expect_key = False
            if self._last_key == b"id" and self._found is None:
                self._value = bytearray()
        elif char == b"," and self._depth == 1:
            self._end_value()
            self._expect_key = True
        else:
            self._take(char)

    def _close_string(self) -> None:
        self._in_string = False
        if self._key is not None:
            self._last_key = bytes(self._key)
            self._key = None
        else:
            self._take(b'"')

    def _take(self, data: bytes) -> None:
        if self._key is not None:
            if len(self._key) < 8:
                self._key += data[: 8 - len(self._key)]
        elif self._value is not None:
            self._value += data
            if len(self._value) > self._LONGEST_ID:
                self._value = None
                self._broken = True

    def _end_value(self) -> None:
        if self._value is not None:
            self._found = bytes(self._value).strip()
            self._value = None

    @property
    def request_id(self) -> str | int | None:
        """The id, once the scan has passed it (else None)."""
        if self._found is None or self._broken:
            return None
        try:
            return _usable_id(json.loads(self._found))
        except ValueError:
            return None


class _DaemonReads:
    """Blocking reads, one at a time, on a daemon thread of their own.

    A read of stdin may never return (a terminal, a pipe whose writer stays open). In a worker
    thread of anyio's pool, which the interpreter waits for at exit, it kept ``runvil mcp``
    alive after Ctrl-C until stdin closed. A daemon thread does not, as long as it holds no
    lock the interpreter needs while it shuts down: hence ``os.read`` on the descriptor, never
    ``sys.stdin.buffer`` (whose lock a blocked read holds).
    """

    def __init__(self, read: Callable[[int], bytes], size: int) -> None:
        self._read = read
        self._size = size
        self._asks: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[bytes]]]
        self._asks = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    async def read(self) -> bytes:
        """The next bytes available, at most ``size`` of them; ``b""`` at the end."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[bytes] = loop.create_future()
        self._asks.put((loop, answer))
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="runvil-mcp-stdin", daemon=True
            )
            self._thread.start()
        return await answer

    def _serve(self) -> None:
        """Answer read requests until the stream ends or breaks; then the thread ends (a later
        request would find no thread, but the reader asks for nothing after the end)."""
        while True:
            loop, answer = self._asks.get()
            try:
                data = self._read(self._size)
            except Exception as exc:  # a closed or broken stream: the reader sees it raised
                loop.call_soon_threadsafe(_settle, answer, None, exc)
                return
            loop.call_soon_threadsafe(_settle, answer, data, None)
            if not data:
                return


def _settle(
    answer: asyncio.Future[bytes], data: bytes | None, exc: BaseException | None
) -> None:
    if answer.done():  # the reader was cancelled (the server is stopping)
        return
    if exc is not None:
        answer.set_exception(exc)
    else:
        assert data is not None
        answer.set_result(data)


class FrameReader:
    """The lines read with ``read`` that are JSON-RPC messages, as text, for the SDK's stdio
    server.

    ``read(n)`` is a blocking read of at most ``n`` bytes (``b""`` at the end), such as
    ``functools.partial(os.read, 0)``; it runs on a daemon thread, 64 KiB at a time. Iterated
    with ``async for``; every other line is answered through ``answer`` (set before the first
    line arrives: :meth:`attach`) and skipped.
    """

    def __init__(self, read: Callable[[int], bytes], *, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._reads = _DaemonReads(read, _CHUNK)
        self._limit = limit
        self._answer: Answer | None = None
        self._attached = anyio.Event()
        self._chunk = b""
        self._pos = 0
        self._eof = False

    def attach(self, answer: Answer) -> None:
        """Where error answers go (the SDK's write stream); the reader waits for it."""
        self._answer = answer
        self._attached.set()

    def __aiter__(self) -> FrameReader:
        return self

    async def __anext__(self) -> str:
        while True:
            verdict = await self._next_verdict()
            if isinstance(verdict, str):
                return verdict
            if verdict is not None:
                await self._attached.wait()
                assert self._answer is not None
                await self._answer(verdict)

    async def _piece(self) -> tuple[bytes, bool] | None:
        """The rest of the current line from the data at hand (reading more when none is left)
        and whether the line ends there; None at the end of the stream."""
        if self._pos >= len(self._chunk):
            if self._eof:
                return None
            self._chunk, self._pos = await self._reads.read(), 0
            if not self._chunk:
                self._eof = True
                return None
        newline = self._chunk.find(b"\n", self._pos)
        if newline < 0:
            piece, self._pos = self._chunk[self._pos :], len(self._chunk)
            return piece, False
        piece, self._pos = self._chunk[self._pos : newline], newline + 1
        return piece, True

    async def _next_verdict(self) -> str | types.JSONRPCError | None:
        line = bytearray()
        scanner: TopLevelId | None = None
        while True:
            got = await self._piece()
            if got is None:  # the end of the stream; a last line needs no newline
                if scanner is not None:
                    return self._too_long(scanner)
                if line:
                    return judge(bytes(line))
                raise StopAsyncIteration
            piece, ended = got
            if scanner is not None:
                scanner.feed(piece)
            elif len(line) + len(piece) > self._limit:
                scanner = TopLevelId()
                scanner.feed(bytes(line))
                scanner.feed(piece)
                line = bytearray()
            else:
                line += piece
            if ended:
                if scanner is not None:
                    return self._too_long(scanner)
                return judge(bytes(line))

    def _too_long(self, scanner: TopLevelId) -> types.JSONRPCError:
        data = f"the message is longer than {self._limit} bytes"
        return error(INVALID_REQUEST, data, scanner.request_id)
