"""Bounded streaming decoders for the Content-Encoding of a response body.

A 1.6 KB brotli body can expand to a gigabyte, and most HTTP libraries hand such a body to a
decoder with no output limit (research/httpstack.md, pitfalls P1-P3). These decoders never do:
every call into zlib, Brotli or zstd asks for at most 64 KiB of output, and each piece is
yielded lazily, so the caller counts decoded bytes against the byte cap and simply stops
iterating when the cap is passed. Whatever the body, memory stays at one compressed chunk plus
one decoded piece plus the codec's window (zstd windows are capped at 8 MiB, as RFC 9659 asks).

All decoder state lives on the decoder object, not in the generators, so a caller that abandons
one ``feed`` iterator half-way loses nothing: the next ``feed`` or ``finish`` carries on.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import brotli

try:  # Python 3.14+
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - depends on the interpreter
    from backports import zstd  # type: ignore[no-redef,unused-ignore]

__all__ = [
    "ACCEPT_ENCODING",
    "PIECE_SIZE",
    "BodyDecodeError",
    "BodyDecoder",
    "UnsupportedEncoding",
    "make_decoder",
]

#: The content codings these decoders handle, and so the only ones a request advertises.
ACCEPT_ENCODING = "gzip, deflate, br, zstd"

#: The largest piece a decoder yields, and the output limit of every codec call.
PIECE_SIZE = 64 * 1024

#: RFC 9659: a zstd Content-Encoding needs no window over 8 MiB; libzstd's default is 128 MiB.
ZSTD_WINDOW_LOG_MAX = 23

_GZIP_MAGIC = b"\x1f\x8b"


class UnsupportedEncoding(Exception):
    """The Content-Encoding is unknown (``compress``, ``sdch``) or stacked (``gzip, gzip``)."""

    def __init__(self, content_encoding: str) -> None:
        super().__init__(content_encoding)
        self.content_encoding = content_encoding


class BodyDecodeError(Exception):
    """The compressed body is corrupt or ends before its compressed stream does."""


def make_decoder(content_encoding: str | None) -> BodyDecoder:
    """The decoder for a Content-Encoding header value.

    ``None``, empty and ``identity`` pass the body through. ``gzip``/``x-gzip``, ``deflate``,
    ``br`` and ``zstd`` are decoded (names are case-insensitive; ``identity`` entries in a list
    are no-ops). Anything else, and any list of two or more real codings, raises
    :class:`UnsupportedEncoding`: a decoder that would have to run twice is a bomb amplifier, and
    an unknown coding cannot be turned into text.
    """
    codings = [
        coding
        for coding in (part.strip(" \t").lower() for part in (content_encoding or "").split(","))
        if coding and coding != "identity"
    ]
    if not codings:
        return BodyDecoder()
    if len(codings) > 1:
        raise UnsupportedEncoding(content_encoding or "")
    factory = _DECODERS.get(codings[0])
    if factory is None:
        raise UnsupportedEncoding(content_encoding or "")
    return factory()


class BodyDecoder:
    """Feed raw body chunks in, get decoded pieces of at most :data:`PIECE_SIZE` out.

    This base class is the identity decoder; subclasses decode one content coding.
    """

    def __init__(self) -> None:
        self._input = b""
        self._offset = 0  # identity only: how much of _input was already yielded

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """Decode ``chunk``; the pieces come out lazily as the iterator is consumed. The caller
        may stop iterating at any time (the cap was reached) and memory stays bounded."""
        if self._offset:
            self._input, self._offset = self._input[self._offset :], 0
        self._input += chunk
        return self._pieces(final=False)

    def finish(self) -> Iterator[bytes]:
        """Flush what is left. Raises :class:`BodyDecodeError` (while iterating) when the body
        ended before its compressed stream did or turned out to be corrupt."""
        yield from self._pieces(final=True)
        self._check_complete()

    def _pieces(self, final: bool) -> Iterator[bytes]:
        try:
            for piece in self._decode(final):
                yield from _split(piece)
        except (zlib.error, brotli.error, zstd.ZstdError, EOFError) as exc:
            raise BodyDecodeError(str(exc)) from None

    def _decode(self, final: bool) -> Iterator[bytes]:
        while self._offset < len(self._input):
            start = self._offset
            self._offset = min(start + PIECE_SIZE, len(self._input))
            yield self._input[start : self._offset]
        self._input, self._offset = b"", 0

    def _check_complete(self) -> None:
        """Raise :class:`BodyDecodeError` unless the stream ended cleanly."""


class _ZlibDecoder(BodyDecoder):
    """gzip (every member of a multi-member body) and deflate (zlib-wrapped or raw)."""

    def __init__(self, *, gzip: bool) -> None:
        super().__init__()
        self._gzip = gzip
        self._inflater: zlib._Decompress | None = None
        self._fed = False  # the current member has been given input
        self._pending = False  # the last call filled its output limit: more may be waiting
        self._trailing = False  # past the end of the data: ignore the rest, as browsers do
        self._opened = False  # a stream was opened (a later gzip member must start with magic)

    def _decode(self, final: bool) -> Iterator[bytes]:
        while not self._trailing:
            inflater = self._inflater
            if inflater is None:
                if not self._start(final):
                    return
                continue
            if not self._input and not self._pending:
                return
            data, self._input = self._input, b""
            self._fed = self._fed or bool(data)
            out = inflater.decompress(data, PIECE_SIZE)
            if inflater.eof:
                # At the end of a stream the rest of the input is in unused_data (CPython may
                # leave a stale copy in unconsumed_tail too, so that one is not read).
                self._input = inflater.unused_data
                self._inflater, self._fed, self._pending = None, False, False
                if not self._gzip:
                    self._trailing = True  # deflate has one stream; anything after is junk
            else:
                self._input = inflater.unconsumed_tail
                self._pending = len(out) >= PIECE_SIZE
            if out:
                yield out
        self._input = b""

    def _start(self, final: bool) -> bool:
        """Open the next stream once enough bytes are here to recognise it; False to wait."""
        if len(self._input) < 2 and not (final and self._input):
            return False
        head = self._input[:2]
        if self._gzip:
            if self._opened and head != _GZIP_MAGIC:
                self._trailing = True  # bytes after the last member (padding, junk): ignored
                return True
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:
            zlib_wrapped = len(head) == 2 and head[0] & 0x0F == 8 and int.from_bytes(head) % 31 == 0
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS if zlib_wrapped else -zlib.MAX_WBITS)
        self._opened = True
        return True

    def _check_complete(self) -> None:
        if self._inflater is not None and self._fed and not self._inflater.eof:
            raise BodyDecodeError("compressed body ended early")


class _BrotliDecoder(BodyDecoder):
    def __init__(self) -> None:
        super().__init__()
        self._decompressor = brotli.Decompressor()
        self._fed = False
        self._pending = False

    def _decode(self, final: bool) -> Iterator[bytes]:
        decompressor = self._decompressor
        while True:
            if decompressor.is_finished():
                self._input = b""  # bytes after the stream are ignored
                return
            if self._pending or not decompressor.can_accept_more_data():
                # can_accept_more_data() is about input: output may be waiting either way (P2).
                out = decompressor.process(b"", output_buffer_limit=PIECE_SIZE)
                if not out and not decompressor.can_accept_more_data():
                    raise BodyDecodeError("brotli stream stalled")
            elif self._input:
                data, self._input = self._input, b""
                self._fed = True
                out = decompressor.process(data, output_buffer_limit=PIECE_SIZE)
            else:
                return
            self._pending = len(out) >= PIECE_SIZE
            if out:
                yield out

    def _check_complete(self) -> None:
        if self._fed and not self._decompressor.is_finished():
            raise BodyDecodeError("compressed body ended early")


class _ZstdDecoder(BodyDecoder):
    """zstd, every frame of a multi-frame body, windows capped at 8 MiB."""

    def __init__(self) -> None:
        super().__init__()
        self._decompressor = self._new()
        self._fed = False

    @staticmethod
    def _new() -> zstd.ZstdDecompressor:
        return zstd.ZstdDecompressor(
            options={zstd.DecompressionParameter.window_log_max: ZSTD_WINDOW_LOG_MAX}
        )

    def _decode(self, final: bool) -> Iterator[bytes]:
        while True:
            decompressor = self._decompressor
            if decompressor.eof:
                rest = decompressor.unused_data + self._input
                if not rest:
                    return
                self._decompressor, self._input, self._fed = self._new(), rest, False
                continue
            if not decompressor.needs_input:
                out = decompressor.decompress(b"", PIECE_SIZE)
                if not out and not decompressor.needs_input and not decompressor.eof:
                    raise BodyDecodeError("zstd stream stalled")
            elif self._input:
                data, self._input = self._input, b""
                self._fed = True
                out = decompressor.decompress(data, PIECE_SIZE)
            else:
                return
            if out:
                yield out

    def _check_complete(self) -> None:
        if self._fed and not self._decompressor.eof:
            raise BodyDecodeError("compressed body ended early")


def _split(piece: bytes) -> Iterator[bytes]:
    """Brotli's output limit is soft (it returned 98 KB for 64 KiB); enforce the piece size."""
    if len(piece) <= PIECE_SIZE:
        yield piece
        return
    for start in range(0, len(piece), PIECE_SIZE):
        yield piece[start : start + PIECE_SIZE]


_DECODERS = {
    "gzip": lambda: _ZlibDecoder(gzip=True),
    "x-gzip": lambda: _ZlibDecoder(gzip=True),
    "deflate": lambda: _ZlibDecoder(gzip=False),
    "br": _BrotliDecoder,
    "zstd": _ZstdDecoder,
}
