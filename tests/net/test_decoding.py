"""Bounded streaming decoders: round trips, bombs under the memory bound, broken streams."""

from __future__ import annotations

import contextlib
import gzip
import itertools
import os
import struct
import tracemalloc
import zlib
from collections.abc import Callable, Iterator

import brotli
import pytest
from backports import zstd
from hypothesis import given, settings
from hypothesis import strategies as st

from runvil._net.decoding import (
    PIECE_SIZE,
    BodyDecodeError,
    BodyDecoder,
    UnsupportedEncoding,
    make_decoder,
)

CAP = 8 * 1024 * 1024
MiB = 1024 * 1024
PAYLOAD = os.urandom(200_000) + b"The quick brown fox jumps over the lazy dog. " * 20_000


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def zstd_with_checksum(data: bytes) -> bytes:
    return zstd.compress(data, options={zstd.CompressionParameter.checksum_flag: 1})


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "deflate-raw": raw_deflate,
    "br": lambda data: brotli.compress(data, quality=5),
    "zstd": zstd.compress,
}


def coding(name: str) -> str:
    return "deflate" if name == "deflate-raw" else name


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def decode_all(content_encoding: str | None, body: bytes, chunk_size: int = 16_384) -> bytes:
    decoder = make_decoder(content_encoding)
    pieces: list[bytes] = []
    for chunk in chunks(body, chunk_size):
        pieces.extend(decoder.feed(chunk))
    pieces.extend(decoder.finish())
    assert all(0 < len(piece) <= PIECE_SIZE for piece in pieces)
    return b"".join(pieces)


# --- choosing a decoder --------------------------------------------------------------------


@pytest.mark.parametrize("header", [None, "", "identity", "IDENTITY", " identity ", ","])
def test_identity_passes_the_body_through_in_bounded_pieces(header: str | None) -> None:
    assert decode_all(header, PAYLOAD, chunk_size=len(PAYLOAD)) == PAYLOAD


@pytest.mark.parametrize(
    ("header", "encoder"),
    [("gzip", gzip.compress), ("GZIP", gzip.compress), (" gzip ", gzip.compress),
     ("x-gzip", gzip.compress), ("X-Gzip", gzip.compress), ("Deflate", zlib.compress),
     ("BR", ENCODERS["br"]), ("Zstd", zstd.compress), ("identity, gzip", gzip.compress),
     ("gzip, identity", gzip.compress), ("gzip,", gzip.compress)],
)
def test_header_names_are_case_insensitive_and_identity_is_a_no_op(
    header: str, encoder: Callable[[bytes], bytes]
) -> None:
    assert decode_all(header, encoder(PAYLOAD)) == PAYLOAD


@pytest.mark.parametrize(
    "header",
    ["gzip, gzip", "gzip,gzip", "br, gzip", "deflate, br", "zstd, zstd", "compress", "x-compress",
     "sdch", "bzip2", "dcb", "dcz", "aes128gcm", "gzip;q=1", "exi", "pack200-gzip", "*"],
)
def test_unknown_and_stacked_encodings_are_unsupported(header: str) -> None:
    with pytest.raises(UnsupportedEncoding) as caught:
        make_decoder(header)
    assert caught.value.content_encoding == header


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ENCODERS))
@pytest.mark.parametrize("chunk_size", [1_000, 65_536, 10_000_000])
def test_round_trip(name: str, chunk_size: int) -> None:
    assert decode_all(coding(name), ENCODERS[name](PAYLOAD), chunk_size) == PAYLOAD


@pytest.mark.parametrize("name", list(ENCODERS))
def test_round_trip_byte_by_byte(name: str) -> None:
    payload = PAYLOAD[:3000] + b"z" * 100_000
    assert decode_all(coding(name), ENCODERS[name](payload), chunk_size=1) == payload


@pytest.mark.parametrize("chunk_size", [1, 7, 4096, 10_000_000])
def test_multi_member_gzip(chunk_size: int) -> None:
    body = gzip.compress(PAYLOAD) + gzip.compress(b"") + gzip.compress(b"second member")
    assert decode_all("gzip", body, chunk_size) == PAYLOAD + b"second member"


@pytest.mark.parametrize("chunk_size", [1, 7, 4096, 10_000_000])
def test_multi_frame_zstd(chunk_size: int) -> None:
    skippable = struct.pack("<II", 0x184D2A50, 4) + b"skip"
    body = zstd.compress(PAYLOAD) + skippable + zstd.compress(b"second frame")
    assert decode_all("zstd", body, chunk_size) == PAYLOAD + b"second frame"


@pytest.mark.parametrize("name", list(ENCODERS))
def test_empty_content(name: str) -> None:
    assert decode_all(coding(name), ENCODERS[name](b"")) == b""


@pytest.mark.parametrize("name", [*ENCODERS, "identity"])
def test_empty_body_decodes_to_nothing(name: str) -> None:
    assert decode_all(coding(name), b"") == b""


def test_bytes_after_the_last_gzip_member_are_ignored() -> None:
    body = gzip.compress(PAYLOAD) + b"\x00" * 1000
    assert decode_all("gzip", body) == PAYLOAD
    assert decode_all("gzip", gzip.compress(b"a") + b"trailing junk") == b"a"
    assert decode_all("gzip", gzip.compress(b"a") + b"\x1f") == b"a"


def test_bytes_after_the_deflate_stream_are_ignored() -> None:
    assert decode_all("deflate", zlib.compress(PAYLOAD) + b"junk") == PAYLOAD


def test_zlib_and_raw_deflate_are_both_recognised() -> None:
    data = b"x" * 1000
    assert zlib.compress(data)[:1] == b"\x78"
    assert decode_all("deflate", zlib.compress(data, 1)) == data
    assert decode_all("deflate", zlib.compress(data, 9)) == data
    assert decode_all("deflate", raw_deflate(data)) == data
    assert decode_all("deflate", raw_deflate(b"a"), chunk_size=1) == b"a"


@pytest.mark.parametrize("name", list(ENCODERS))
def test_highly_compressible_output_comes_in_pieces_of_at_most_64_kib(name: str) -> None:
    body = ENCODERS[name](bytes(3 * MiB))
    decoder = make_decoder(coding(name))
    pieces = [*decoder.feed(body), *decoder.finish()]
    assert max(len(piece) for piece in pieces) <= PIECE_SIZE
    assert sum(len(piece) for piece in pieces) == 3 * MiB


@pytest.mark.parametrize("name", [*ENCODERS, "identity"])
def test_an_abandoned_feed_iterator_loses_nothing(name: str) -> None:
    payload = PAYLOAD * 3
    body = payload if name == "identity" else ENCODERS[name](payload)
    decoder = make_decoder(coding(name))
    half = len(body) // 2
    first = decoder.feed(body[:half])
    taken = list(itertools.islice(first, 2))  # the caller stops early, then carries on
    assert taken
    rest = [*decoder.feed(body[half:]), *decoder.finish()]
    assert b"".join(taken + rest) == payload


def test_feed_is_lazy() -> None:
    decoder = make_decoder("gzip")
    pieces = decoder.feed(gzip.compress(bytes(10 * MiB)))
    assert isinstance(pieces, Iterator)
    assert len(next(pieces)) == PIECE_SIZE


# --- broken streams ------------------------------------------------------------------------


def finish_all(decoder: BodyDecoder, body: bytes) -> None:
    for chunk in chunks(body, 4096):
        for _ in decoder.feed(chunk):
            pass
    for _ in decoder.finish():
        pass


@pytest.mark.parametrize("name", list(ENCODERS))
@pytest.mark.parametrize("keep", [0.5, 0.99, "all but 1", 1, 2])
def test_truncated_stream_raises(name: str, keep: float | str | int) -> None:
    body = ENCODERS[name](PAYLOAD)
    if keep == "all but 1":
        cut = body[:-1]
    elif isinstance(keep, float):
        cut = body[: int(len(body) * keep)]
    else:
        cut = body[: int(keep)]
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder(coding(name)), cut)


def test_truncated_second_gzip_member_raises() -> None:
    body = gzip.compress(b"first") + gzip.compress(PAYLOAD)[:-20]
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder("gzip"), body)


def test_truncated_second_zstd_frame_raises() -> None:
    body = zstd.compress(b"first") + zstd.compress(PAYLOAD)[:-20]
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder("zstd"), body)


@pytest.mark.parametrize("name", ["gzip", "deflate", "br", "zstd"])
@pytest.mark.parametrize("junk", [b"this is not compressed at all" * 10, b"\xff" * 64])
def test_garbage_raises(name: str, junk: bytes) -> None:
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder(name), junk)


def test_corrupt_gzip_checksum_raises() -> None:
    body = bytearray(gzip.compress(PAYLOAD))
    body[-5] ^= 0xFF  # inside the CRC32
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder("gzip"), bytes(body))


@pytest.mark.parametrize("name", ["gzip", "deflate", "zstd"])
def test_flipped_bytes_in_the_middle_raise(name: str) -> None:
    # Brotli carries no checksum, so flipped literal bytes can decode to other bytes; only the
    # formats with a checksum (CRC32, Adler-32, zstd's XXH64) can promise an error here.
    encode = ENCODERS[name] if name != "zstd" else zstd_with_checksum
    body = bytearray(encode(PAYLOAD))
    for offset in range(len(body) // 2, len(body) // 2 + 16):
        body[offset] ^= 0x55
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder(name), bytes(body))


def test_trailing_bytes_after_brotli_stream_raise() -> None:
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder("br"), brotli.compress(b"data") + b"junk")


def test_zstd_window_over_8_mib_is_refused() -> None:
    compressor = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 24})
    body = compressor.compress(b"x" * 1000) + compressor.flush()
    assert zstd.decompress(body) == b"x" * 1000  # valid, but needs a 16 MiB window
    with pytest.raises(BodyDecodeError):
        finish_all(make_decoder("zstd"), body)


def test_zstd_window_of_8_mib_is_accepted() -> None:
    compressor = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 23})
    body = compressor.compress(b"x" * 1000) + compressor.flush()
    assert decode_all("zstd", body) == b"x" * 1000


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["gzip", "deflate", "br", "zstd", "identity"]), st.binary(max_size=300),
       st.integers(min_value=1, max_value=64))
def test_arbitrary_bytes_decode_or_raise_body_decode_error(
    name: str, body: bytes, chunk_size: int
) -> None:
    try:
        decode_all(name, body, chunk_size)
    except BodyDecodeError:
        assert name != "identity"


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["gzip", "deflate", "br", "zstd"]), st.binary(max_size=2000),
       st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=255))
def test_mutated_streams_decode_or_raise_body_decode_error(
    name: str, payload: bytes, position: int, value: int
) -> None:
    body = bytearray(ENCODERS[name](payload))
    body[position % len(body)] = value
    with contextlib.suppress(BodyDecodeError):  # anything else fails the test
        decode_all(name, bytes(body), 97)


# --- bombs ---------------------------------------------------------------------------------

GiB = 1024 * MiB
_ZERO_MIB = bytes(MiB)


def zero_bombs(mib: int) -> dict[str, bytes]:
    """``mib`` MiB of zeros in every coding. Deflate is built from one repeated full-flush block
    with hand-written gzip and zlib framing, which takes milliseconds instead of seconds."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = compressor.compress(_ZERO_MIB) + compressor.flush(zlib.Z_FULL_FLUSH)
    raw = block * mib + compressor.flush()
    crc, adler = 0, 1
    for _ in range(mib):
        crc, adler = zlib.crc32(_ZERO_MIB, crc), zlib.adler32(_ZERO_MIB, adler)
    brotli_compressor = brotli.Compressor(quality=5)
    br = b"".join(brotli_compressor.process(_ZERO_MIB) for _ in range(mib))
    br += brotli_compressor.finish()
    zstd_compressor = zstd.ZstdCompressor(level=3)
    zst = b"".join(zstd_compressor.compress(_ZERO_MIB) for _ in range(mib))
    zst += zstd_compressor.flush()
    gzip_header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return {
        "gzip": gzip_header + raw + struct.pack("<II", crc, mib * MiB % 2**32),
        "deflate": b"\x78\xda" + raw + struct.pack(">I", adler),
        "deflate-raw": raw,
        "br": br,
        "zstd": zst,
    }


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return zero_bombs(1024)


def test_bombs_are_small_on_the_wire(bombs: dict[str, bytes]) -> None:
    assert all(len(body) < 1.1 * MiB for body in bombs.values())


def test_bomb_builder_makes_valid_streams() -> None:
    small = zero_bombs(3)
    assert gzip.decompress(small["gzip"]) == bytes(3 * MiB)
    assert zlib.decompress(small["deflate"]) == bytes(3 * MiB)
    assert zlib.decompress(small["deflate-raw"], -zlib.MAX_WBITS) == bytes(3 * MiB)
    assert brotli.decompress(small["br"]) == bytes(3 * MiB)
    assert zstd.decompress(small["zstd"]) == bytes(3 * MiB)
    for name, body in small.items():
        assert decode_all(coding(name), body) == bytes(3 * MiB)


@pytest.mark.parametrize("name", ["gzip", "deflate", "deflate-raw", "br", "zstd"])
def test_bomb_stops_at_the_cap_within_64_mib(bombs: dict[str, bytes], name: str) -> None:
    body = bombs[name]
    decoder = make_decoder(coding(name))
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        decoded = 0
        for chunk in chunks(body, 65_536):
            for piece in decoder.feed(chunk):
                decoded += len(piece)
                if decoded > CAP:
                    break
            if decoded > CAP:
                break
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert CAP < decoded <= CAP + PIECE_SIZE
    assert peak - baseline < 64 * MiB


@pytest.mark.parametrize("name", ["gzip", "br", "zstd"])
def test_bomb_fed_in_one_chunk_is_still_lazy(bombs: dict[str, bytes], name: str) -> None:
    decoder = make_decoder(name)
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        decoded = 0
        for piece in decoder.feed(bombs[name]):
            decoded += len(piece)
            if decoded > CAP:
                break
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert CAP < decoded <= CAP + PIECE_SIZE
    assert peak - baseline < 64 * MiB
