"""Reading a body under the decoded-size cap: the read loop itself, piece by piece.

The response here is a stand-in that hands out exactly the pieces aiohttp's ``readchunk`` would,
so the loop's handling of each shape of piece is checked directly; the fetch and search tests
run the same loop against real servers.
"""

from __future__ import annotations

import gzip
from typing import Any, cast

import aiohttp
import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from runvil._net.body import BodyBuffer, BodyTooLarge, read_bounded, read_decoded
from runvil._net.decoding import make_decoder

Piece = tuple[bytes, bool]


class _Content:
    """``readchunk`` as aiohttp's stream reader answers it: ``(data, end_of_http_chunk)``, and
    ``(b"", False)`` once the body has ended."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = [*pieces, (b"", False)]
        self.reads = 0

    async def readchunk(self) -> Piece:
        self.reads += 1
        return self.pieces.pop(0)


class _Response:
    def __init__(self, pieces: list[Piece], **headers: str) -> None:
        self.content = _Content(pieces)
        self.headers = CIMultiDictProxy(
            CIMultiDict((name.replace("_", "-"), value) for name, value in headers.items())
        )


def response(pieces: list[Piece], **headers: str) -> aiohttp.ClientResponse:
    return cast("aiohttp.ClientResponse", _Response(pieces, **headers))


async def test_the_end_of_an_http_chunk_is_not_the_end_of_the_body() -> None:
    # aiohttp reports an HTTP chunk boundary with no data before it as (b"", True).
    body = BodyBuffer(100, keep_prefix=False)
    pieces = [(b"ab", True), (b"", True), (b"cd", False)]
    assert await read_decoded(response(pieces), None, body)
    assert body.joined() == b"abcd"


async def test_without_a_coding_each_piece_is_kept_as_it_arrived() -> None:
    # No re-joining and no cutting into decoder-sized pieces: the only copy is the final join.
    first, second = bytes(200_000), b"x" * 300_000
    body = BodyBuffer(1 << 20, keep_prefix=False)
    assert await read_decoded(response([(first, False), (second, False)]), None, body)
    assert len(body.pieces) == 2
    assert body.pieces[0] is first and body.pieces[1] is second
    assert body.joined() == first + second


async def test_a_single_piece_is_the_body_itself() -> None:
    only = b"y" * 100_000
    body = BodyBuffer(1 << 20, keep_prefix=False)
    assert await read_decoded(response([(only, False)]), None, body)
    assert body.joined() is only


async def test_the_cap_stops_the_read_at_the_piece_that_passes_it() -> None:
    source = response([(b"a" * 6, False), (b"b" * 6, False), (b"c" * 6, False)])
    body = BodyBuffer(10, keep_prefix=False)
    assert not await read_decoded(source, None, body)
    assert cast("Any", source).content.reads == 2  # the third piece was never asked for
    kept = BodyBuffer(10, keep_prefix=True)
    assert not await read_decoded(response([(b"a" * 6, False), (b"b" * 6, False)]), None, kept)
    assert (kept.joined(), kept.cut) == (b"aaaaaabbbb", True)


async def test_a_coded_body_goes_through_its_decoder() -> None:
    packed = gzip.compress(b"hello " * 1000)
    body = BodyBuffer(1 << 20, keep_prefix=False)
    pieces = [(packed[:10], True), (b"", True), (packed[10:], False)]
    assert await read_decoded(response(pieces), make_decoder("gzip"), body)
    assert body.joined() == b"hello " * 1000


async def test_read_bounded_with_and_without_a_coding() -> None:
    assert await read_bounded(response([(b"plain", False)]), 5) == (b"plain", False)
    packed = gzip.compress(b"z" * 50)
    coded = response([(packed, False)], Content_Encoding="gzip")
    assert await read_bounded(coded, 20, cut=True) == (b"z" * 20, True)
    with pytest.raises(BodyTooLarge):
        await read_bounded(response([(b"plain", False)]), 4)


async def test_a_body_known_to_have_ended_needs_no_last_read() -> None:
    # aiohttp's at_eof: once every piece has arrived and been taken, no read is left to make.
    source = response([(b"ab", False), (b"cd", False)])
    content = cast("Any", source).content
    body = BodyBuffer(100, keep_prefix=False)
    assert await read_decoded(source, None, body, lambda: len(content.pieces) == 1)
    assert (body.joined(), content.reads) == (b"abcd", 2)
    gzipped = response([(gzip.compress(b"abcd"), False)])
    content = cast("Any", gzipped).content
    body = BodyBuffer(100, keep_prefix=False)
    assert await read_decoded(gzipped, make_decoder("gzip"), body, lambda: len(content.pieces) == 1)
    assert (body.joined(), content.reads) == (b"abcd", 1)
