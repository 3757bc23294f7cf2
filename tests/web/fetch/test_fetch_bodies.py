"""Bodies: content codings, the decoded-byte cap, bombs, and bodies that break off."""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from collections.abc import Awaitable, Callable

import brotli

try:  # Python 3.14+
    from compression import zstd  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # the interpreter this project targets today
    from backports import zstd  # type: ignore[no-redef,unused-ignore]
import pytest
from aiohttp import web

from runvil.web import FetchPolicy, WebFetch
from tests.web.fetch.conftest import (
    QUICK,
    FetchFactory,
    RawSiteFactory,
    SiteFactory,
    expect_page,
    head,
)

CAP = 8_388_608
GIB = 1 << 30
MIB = 1 << 20


def size_cap(url: str, limit: int = CAP) -> str:
    return f"response from {url} exceeds the {limit}-byte size cap"


def unreadable(url: str) -> str:
    return f"the response body from {url} could not be read; try again or use a different URL"


def compress(data: bytes, coding: str) -> bytes:
    if coding in ("gzip", "x-gzip"):
        return gzip.compress(data)
    if coding == "deflate":
        return zlib.compress(data)
    if coding == "deflate-raw":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if coding == "br":
        return bytes(brotli.compress(data))
    if coding == "zstd":
        return bytes(zstd.compress(data))
    raise AssertionError(coding)


def sending(
    body: bytes, content_type: str, *headers: str, length: bool = True
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            head(
                "200 OK",
                f"Content-Type: {content_type}",
                *headers,
                length=len(body) if length else None,
            )
        )
        writer.write(body)
        await writer.drain()
        if not length:
            writer.close()

    return answer


# --- codings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("coding", "header"),
    [
        ("gzip", "gzip"),
        ("x-gzip", "x-gzip"),
        ("deflate", "deflate"),
        ("deflate-raw", "deflate"),
        ("br", "br"),
        ("zstd", "zstd"),
        ("gzip", "GZIP"),
    ],
)
async def test_each_content_coding_is_decoded(
    fetch: WebFetch, raw_site: RawSiteFactory, coding: str, header: str
) -> None:
    text = "Grüße, " * 5000
    await raw_site(
        sending(compress(text.encode(), coding), "text/plain", f"Content-Encoding: {header}")
    )
    assert await fetch.call({"url": "https://example.com/", "max_chars": 40_000}) == expect_page(
        "https://example.com/", text
    )


async def test_the_request_advertises_only_our_codings(fetch: WebFetch, site: SiteFactory) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/plain")

    served = await site({"/": page})
    await fetch.call({"url": "https://example.com/"})
    assert served.headers[0]["Accept-Encoding"] == "gzip, deflate, br, zstd"


@pytest.mark.parametrize("header", ["gzip, gzip", "gzip, br", "compress", "sdch", "x-unknown"])
async def test_stacked_or_unknown_codings_are_unreadable(
    fetch: WebFetch, raw_site: RawSiteFactory, header: str
) -> None:
    body = gzip.compress(gzip.compress(b"hello"))
    server = await raw_site(sending(body, "text/html", f"Content-Encoding: {header}"))
    assert await fetch.call({"url": "https://example.com/p?q=1"}) == unreadable(
        "https://example.com/p"
    )
    assert len(server.requests) == 1


async def test_two_content_encoding_lines_are_a_stack(
    fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    body = gzip.compress(gzip.compress(b"hello"))
    await raw_site(sending(body, "text/plain", "Content-Encoding: gzip", "Content-Encoding: gzip"))
    assert await fetch.call({"url": "https://example.com/"}) == unreadable("https://example.com/")


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
async def test_corrupt_or_cut_compressed_bodies_are_unreadable(
    fetch: WebFetch, raw_site: RawSiteFactory, coding: str
) -> None:
    whole = compress(b"some text that compresses " * 200, coding)
    await raw_site(sending(whole[: len(whole) // 2], "text/plain", f"Content-Encoding: {coding}"))
    assert await fetch.call({"url": "https://example.com/"}) == unreadable("https://example.com/")


async def test_garbage_labelled_gzip_is_unreadable(
    fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    await raw_site(sending(b"this is not gzip at all", "text/plain", "Content-Encoding: gzip"))
    assert await fetch.call({"url": "https://example.com/"}) == unreadable("https://example.com/")


# --- the byte cap -------------------------------------------------------------------------


async def test_a_body_of_exactly_the_cap_is_accepted(
    fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    body = b"[" + b"1," * ((CAP - 4) // 2) + b"11]"
    assert len(body) == CAP
    await raw_site(sending(body, "application/json"))
    text = await fetch.call({"url": "https://example.com/data.json"})
    assert text == expect_page(
        "https://example.com/data.json", body[:40_000].decode(), truncated=True
    )


@pytest.mark.parametrize("content_type", ["text/html", "application/json", "application/xml"])
async def test_html_json_and_xml_over_the_cap_are_refused_whole(
    fetch: WebFetch, raw_site: RawSiteFactory, content_type: str
) -> None:
    await raw_site(sending(b" " * (CAP + 1), content_type))
    assert await fetch.call({"url": "https://example.com/data.json?x=1"}) == size_cap(
        "https://example.com/data.json"
    )


async def test_an_oversized_chunked_body_is_refused_while_streaming(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def stream(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for _ in range(20):
            await response.write(b"0" * 100)
        return response

    await site({"/": stream})
    fetch = make_fetch(FetchPolicy(max_bytes=1000))
    assert await fetch.call({"url": "https://example.com/"}) == size_cap(
        "https://example.com/", 1000
    )
    # A policy cap is honoured to the byte: exactly 1000 bytes is accepted.
    fetch = make_fetch(FetchPolicy(max_bytes=2000))
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "0" * 2000
    )


async def test_a_declared_length_over_the_cap_is_refused_before_the_body(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    sent = asyncio.Event()

    async def announce(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/html", length=CAP + 1))
        await writer.drain()
        sent.set()
        await asyncio.sleep(30)  # never sends a body byte

    server = await raw_site(announce)
    fetch = make_fetch(QUICK)  # a body wait would end in the body-read text after 1 s instead
    assert await fetch.call({"url": "https://example.com/big"}) == size_cap(
        "https://example.com/big"
    )
    assert sent.is_set() and len(server.requests) == 1


async def test_flat_text_over_the_cap_is_cut_and_flagged(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    body = "é".encode() * 600  # 1200 bytes; a 1001-byte cut splits a character
    await raw_site(sending(body, "text/plain"))
    fetch = make_fetch(FetchPolicy(max_bytes=1001))
    assert await fetch.call({"url": "https://example.com/big.txt"}) == expect_page(
        "https://example.com/big.txt", "é" * 500 + "\ufffd", truncated=True
    )


async def test_flat_text_with_a_large_declared_length_is_read_up_to_the_cap(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def announce(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/csv", length=10**12))
        writer.write(b"a,b\n" * 1000)
        await writer.drain()
        await asyncio.sleep(30)

    await raw_site(announce)
    fetch = make_fetch(FetchPolicy(max_bytes=2000, timeout=5.0))
    assert await fetch.call({"url": "https://example.com/t.csv"}) == expect_page(
        "https://example.com/t.csv", "a,b\n" * 500, truncated=True
    )


async def test_flat_text_of_exactly_the_cap_is_whole(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    await raw_site(sending(b"z" * 2000, "text/plain"))
    fetch = make_fetch(FetchPolicy(max_bytes=2000))
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "z" * 2000
    )


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
async def test_a_small_compressed_body_inflating_past_the_cap(
    make_fetch: FetchFactory, raw_site: RawSiteFactory, coding: str
) -> None:
    await raw_site(
        sending(
            compress(b"<p>" + b"x" * 50_000, coding), "text/html", f"Content-Encoding: {coding}"
        )
    )
    fetch = make_fetch(FetchPolicy(max_bytes=10_000))
    assert await fetch.call({"url": "https://example.com/"}) == size_cap(
        "https://example.com/", 10_000
    )


# --- bombs through the whole fetch path ---------------------------------------------------------


def _deflate_bomb(total: int, wbits: int) -> bytes:
    """``total`` zero bytes compressed, built from one fully flushed 1 MiB block repeated: a
    valid stream (trailer included) without spending seconds compressing a gigabyte."""
    block = bytes(MIB)
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    middle = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    assert middle == c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
    crc = adler = 0
    for _ in range(total // MIB):
        crc = zlib.crc32(block, crc)
    adler = (((total % 65521) << 16) | 1) & 0xFFFFFFFF
    if wbits == 31:
        trailer = crc.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little")
    else:
        trailer = adler.to_bytes(4, "big")
    return first + middle * (total // MIB - 2) + middle + end + trailer


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    z = bytes(MIB)
    br = brotli.Compressor(quality=1)
    zs = zstd.ZstdCompressor(level=1)
    return {
        "gzip": _deflate_bomb(GIB, 31),
        "deflate": _deflate_bomb(GIB, 15),
        "br": b"".join([br.process(z) for _ in range(1024)] + [br.finish()]),
        "zstd": b"".join([zs.compress(z) for _ in range(1024)] + [zs.flush()]),
    }


def test_the_bomb_construction_makes_valid_streams(bombs: dict[str, bytes]) -> None:
    # The same construction at 64 MiB, checked end to end (a gigabyte would cost seconds).
    for wbits in (31, 15):
        data = _deflate_bomb(64 * MIB, wbits)
        d = zlib.decompressobj(wbits)
        out = sum(len(d.decompress(data[i : i + 4096])) for i in range(0, len(data), 4096))
        out += len(d.flush())
        assert out == 64 * MIB and d.eof and not d.unused_data
    # And the gigabyte ones really are gigabyte bombs: small on the wire, same stream shape.
    for coding in ("gzip", "deflate"):
        assert len(bombs[coding]) < 1_100_000
    assert len(bombs["br"]) < 300_000 and len(bombs["zstd"]) < 100_000
    d = zstd.ZstdDecompressor()
    assert len(d.decompress(bombs["zstd"], max_length=16 * MIB)) == 16 * MIB


def _peak_rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize("content_type", ["text/html", "text/plain"])
@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd"])
async def test_a_gigabyte_bomb_stays_within_64_mib(
    fetch: WebFetch,
    raw_site: RawSiteFactory,
    bombs: dict[str, bytes],
    coding: str,
    content_type: str,
) -> None:
    await raw_site(sending(bombs[coding], content_type, f"Content-Encoding: {coding}"))
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # reset the peak-RSS mark to the current RSS
    before = _rss_kib()
    text = await fetch.call({"url": "https://example.com/bomb"})
    extra_mib = (_peak_rss_kib() - before) / 1024
    if content_type == "text/html":
        assert text == size_cap("https://example.com/bomb")
    else:
        assert text == expect_page("https://example.com/bomb", "\0" * 40_000, truncated=True)
    assert extra_mib < 64, f"{coding} bomb took {extra_mib:.1f} MiB"


# --- bodies that break off ----------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/html", "application/json", "text/plain"])
async def test_a_body_that_breaks_off_returns_no_partial_text(
    fetch: WebFetch, raw_site: RawSiteFactory, content_type: str
) -> None:
    async def half(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", f"Content-Type: {content_type}", length=1000))
        writer.write(b"x" * 500)
        await writer.drain()
        writer.transport.abort()

    await raw_site(half)
    assert await fetch.call({"url": "https://example.com/page?id=7"}) == unreadable(
        "https://example.com/page"
    )


async def test_a_broken_chunked_body_is_unreadable(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    # aiohttp alone would leave the body reader waiting for the deadline (connector.py fixes it).
    fetch = make_fetch(FetchPolicy(timeout=10.0))
    started = time.monotonic()

    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", "Transfer-Encoding: chunked"))
        writer.write(b"5\r\nhello\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)  # the head is in; what breaks now is the body
        writer.write(b"ZZ\r\nnot hex\r\n")
        await writer.drain()
        writer.close()

    await raw_site(broken)
    assert await fetch.call({"url": "https://example.com/"}) == unreadable("https://example.com/")
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("transfer", ["gzip", "gzip, chunked", "identity", "chunked, chunked"])
async def test_a_transfer_coding_other_than_chunked_is_unreadable(
    fetch: WebFetch, raw_site: RawSiteFactory, transfer: str
) -> None:
    async def coded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", f"Transfer-Encoding: {transfer}"))
        writer.write(b"5\r\nhello\r\n0\r\n\r\n" if "chunked" in transfer else b"hello")
        await writer.drain()
        writer.close()

    await raw_site(coded)
    assert await fetch.call({"url": "https://example.com/t?x"}) == unreadable(
        "https://example.com/t"
    )


async def test_chunked_in_any_case_is_read(fetch: WebFetch, raw_site: RawSiteFactory) -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain", "Transfer-Encoding: Chunked"))
        writer.write(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        await writer.drain()

    await raw_site(chunked)
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "hello world"
    )


async def test_a_body_read_until_close_is_whole(fetch: WebFetch, raw_site: RawSiteFactory) -> None:
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
        writer.write(b"all of it")
        await writer.drain()
        writer.close()

    await raw_site(until_close)
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "all of it"
    )


# --- what is judged before the body, and what only after it ---------------------------------


@pytest.mark.parametrize(
    ("status", "content_type", "expected"),
    [
        (
            "200 OK",
            "Content-Type: application/pdf",
            "content type application/pdf from https://example.com/r cannot be returned as "
            "text; try an HTML version of the page or a different URL",
        ),
        (
            "200 OK",
            "X-No-Type: 1",
            "response from https://example.com/r declared no content type; refusing to guess "
            "its format; try a different URL",
        ),
        (
            "404 Not Found",
            "Content-Type: text/html",
            "https://example.com/r answered HTTP 404; try a different URL",
        ),
    ],
)
async def test_a_refused_head_costs_no_body_download(
    make_fetch: FetchFactory,
    raw_site: RawSiteFactory,
    status: str,
    content_type: str,
    expected: str,
) -> None:
    async def head_only(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head(status, content_type, length=1_000_000))
        await writer.drain()
        await asyncio.sleep(30)  # the body never comes: waiting for it would hit the deadline

    await raw_site(head_only)
    assert await make_fetch(QUICK).call({"url": "https://example.com/r"}) == expected


async def test_the_charset_is_judged_only_after_the_download(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    await raw_site(sending(b"<p>" * 1000, "text/html; charset=not-a-charset"))
    fetch = make_fetch(FetchPolicy(max_bytes=1000))
    # Over the cap: the size refusal wins, because the charset is never reached.
    assert await fetch.call({"url": "https://example.com/"}) == size_cap(
        "https://example.com/", 1000
    )


async def test_an_unknown_charset_body_that_breaks_off_is_unreadable(
    fetch: WebFetch, raw_site: RawSiteFactory
) -> None:
    async def half(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("200 OK", "Content-Type: text/plain; charset=bogus", length=100))
        writer.write(b"x" * 10)
        await writer.drain()
        writer.transport.abort()

    await raw_site(half)
    assert await fetch.call({"url": "https://example.com/"}) == unreadable("https://example.com/")
