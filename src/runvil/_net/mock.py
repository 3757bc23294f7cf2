"""A response-level transport for tests: requests answered by a function, above the guard.

Tests of the search providers and the model clients are about request shapes, replies and
error texts, not about dialling: :class:`MockTransport` (as httpx's ``MockTransport``) hands
each request to a handler and returns the :class:`MockResponse` it builds, with no lookup, no
permit and no socket. Everything above the transport is the real client: the read plan, the
declared and decoded caps, the codings and the typed errors. A handler simulates a network
failure by raising one of :mod:`runvil._net.errors` (or ``DnsError``, ``NoAllowedAddress``), and
a body that breaks off by putting an exception among its chunks.

The guard itself (what may be dialled) is tested against real servers on loopback, never
through this transport.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from runvil._net.rules import AddressRule

__all__ = ["MockRequest", "MockResponse", "MockTransport"]


@dataclass(frozen=True)
class MockRequest:
    """One request as the transport received it (the client's automatic headers excluded)."""

    method: str
    url: URL
    headers: Mapping[str, str]
    body: bytes | None
    host: str
    port: int
    rule: AddressRule


class _Chunks:
    """The body as ``readchunk`` hands it over: the pieces given, then the end."""

    def __init__(self, pieces: Sequence[bytes | BaseException]) -> None:
        self._pieces = list(pieces)

    async def readchunk(self) -> tuple[bytes, bool]:
        if not self._pieces:
            return b"", False
        piece = self._pieces.pop(0)
        if isinstance(piece, BaseException):
            raise piece
        return piece, False

    def at_eof(self) -> bool:
        return not self._pieces


class MockResponse:
    """A scripted answer: status, headers (in order, repeats allowed) and the body, whole
    (``body``) or as the pieces it arrives in (``chunks``, where an exception raises when its
    turn comes). ``Content-Length`` is what the headers say, as on the wire."""

    def __init__(
        self,
        status: int = 200,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        body: bytes = b"",
        *,
        chunks: Sequence[bytes | BaseException] | None = None,
    ) -> None:
        items = list(headers.items() if isinstance(headers, Mapping) else headers)
        self.status = status
        self.headers = CIMultiDictProxy(CIMultiDict(items))
        self.raw_headers = tuple(
            (name.encode("latin-1"), value.encode("latin-1")) for name, value in items
        )
        length = self.headers.get("Content-Length")
        self.content_length = int(length) if length is not None and length.isdigit() else None
        self.content = _Chunks(chunks if chunks is not None else ([body] if body else []))
        self.released = False
        self.closed = False

    def release(self) -> None:
        self.released = True

    def close(self) -> None:
        self.closed = True


Handler = Callable[[MockRequest], "MockResponse | Awaitable[MockResponse]"]


class MockTransport:
    """Answers every request with ``handler(request)`` (a function or a coroutine function);
    ``requests`` lists what was sent, in order."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[MockRequest] = []

    async def open(
        self,
        rule: AddressRule,
        host: str,
        port: int,
        method: str,
        url: URL,
        headers: Mapping[str, str] | None,
        body: bytes | None,
        deadline: float | None,
    ) -> MockResponse:
        request = MockRequest(method, url, dict(headers or {}), body, host, port, rule)
        self.requests.append(request)
        answer = self.handler(request)
        if inspect.isawaitable(answer):
            answer = await answer
        assert isinstance(answer, MockResponse)
        return answer

    def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
