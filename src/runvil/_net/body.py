"""Reading a response body under a cap on its *decoded* size.

Every body runvil reads (a fetched page, a search provider's answer, a model's reply) is counted
after its Content-Encoding is undone, piece by piece, by the bounded decoders of
:mod:`runvil._net.decoding`: a small compressed body cannot inflate past the cap, and the
decoding stops as soon as it is passed, so a bomb costs at most one 64 KiB piece more than the
cap. aiohttp's own decompression is off in every session (:mod:`runvil._net.connector`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

import aiohttp

from runvil._net.decoding import BodyDecoder, UnsupportedEncoding, make_decoder
from runvil._net.errors import BodyTooLarge

__all__ = ["BodyBuffer", "BodyTooLarge", "read_bounded", "read_decoded"]


class BodyBuffer:
    """The decoded body so far, as the pieces that arrived (joined once, at the end: one copy).

    ``keep_prefix``: a body over ``limit`` keeps its first ``limit`` bytes (and ``cut`` is set)
    instead of being refused.
    """

    __slots__ = ("cut", "keep_prefix", "limit", "pieces", "size")

    def __init__(self, limit: int, keep_prefix: bool) -> None:
        self.limit = limit
        self.keep_prefix = keep_prefix
        self.pieces: list[bytes] = []
        self.size = 0
        self.cut = False

    def take(self, piece: bytes) -> bool:
        """Add a decoded piece; False once the cap is passed and reading must stop."""
        room = self.limit - self.size
        if len(piece) <= room:
            self.pieces.append(piece)
            self.size += len(piece)
            return True
        if not self.keep_prefix:
            return False
        self.pieces.append(piece[:room])
        self.size = self.limit
        self.cut = True
        return False

    def joined(self) -> bytes:
        data = b"".join(self.pieces)
        self.pieces.clear()
        return data


class Streamed(Protocol):
    """A response whose body can be read (aiohttp's, or the mock transport's):
    ``content.readchunk()`` as aiohttp's ``StreamReader`` has it."""

    @property
    def content(self) -> Any: ...


async def read_decoded(
    response: Streamed,
    decoder: BodyDecoder | None,
    body: BodyBuffer,
    ended: Callable[[], bool] | None = None,
) -> bool:
    """Stream the body through ``decoder`` (``None``: no content coding) into ``body``; False
    when the cap stopped it.

    ``ended``: whether the body is over and all of it taken (aiohttp's ``content.at_eof``),
    asked after each piece, so a body that has all arrived needs no last read to learn that
    its end came (a 20 KB page is one piece: one read instead of two).

    Raises :class:`~runvil._net.decoding.BodyDecodeError` for a corrupt or cut compressed
    stream, and aiohttp's errors for a body that broke off.

    The body is taken as the pieces aiohttp received (``readchunk``), never re-joined on the
    way: ``readany`` joins whatever is buffered into one new bytes object, which for a large
    body from a fast server is a second copy of most of it. The one copy left is
    :meth:`BodyBuffer.joined`. Without a coding a piece is taken as it is: it is already in
    memory, and cutting it into decoder-sized pieces would only copy it again.
    """
    readchunk = response.content.readchunk
    while True:
        chunk, end_of_http_chunk = await readchunk()
        if not chunk:
            if end_of_http_chunk:
                continue  # the end of one HTTP chunk, not of the body
            break
        if decoder is None:
            if not body.take(chunk):
                return False
        elif not _take_all(decoder.feed(chunk), body):
            return False
        if ended is not None and ended():
            break
    return decoder is None or _take_all(decoder.finish(), body)


def _take_all(pieces: Iterator[bytes], body: BodyBuffer) -> bool:
    # The decoder is lazy: stopping here stops the decompression too, so a bomb costs at most
    # one piece past the cap.
    return all(body.take(piece) for piece in pieces)


async def read_bounded(
    response: aiohttp.ClientResponse, limit: int, *, cut: bool = False
) -> tuple[bytes, bool]:
    """The whole decoded body, at most ``limit`` bytes of it, and whether it was cut.

    Over ``limit`` the body is cut there when ``cut`` is set, else :class:`BodyTooLarge` is
    raised. A content coding the decoders do not know, two stacked codings, or a transfer coding
    other than ``chunked`` (which aiohttp would hand over still encoded) raise
    :class:`~runvil._net.decoding.UnsupportedEncoding` before any body byte is read.
    """
    headers = response.headers
    transfer = ", ".join(headers.getall(aiohttp.hdrs.TRANSFER_ENCODING, ()))
    if transfer and transfer.strip(" \t").lower() != "chunked":
        raise UnsupportedEncoding(transfer)
    coding = ", ".join(headers.getall(aiohttp.hdrs.CONTENT_ENCODING, ()))
    decoder = make_decoder(coding) if coding else None
    body = BodyBuffer(limit, keep_prefix=cut)
    if not await read_decoded(response, decoder, body) and not body.cut:
        raise BodyTooLarge(limit)
    return body.joined(), body.cut
