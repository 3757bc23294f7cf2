"""Every fault the fault server can commit ends in the exact catalogue message.

Each case fetches one fault path (with a secret-looking query, so each assertion also proves which
URL form the message uses: the catch-all keeps the query, every named failure drops it) and
asserts the whole result text. The mapping from fault to message, and why, is in
``docs/reliability.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from runvil.web._fetch.tool import WebFetch
from tests.fixtures.faults import FAULT_HOST, HTTP10_BODY, OK_BODY, TEXT_BODY, TLS_FAULTS

QUERY = "?token=s3cret"


@dataclass(frozen=True)
class Case:
    """One fault: where it lives and the exact text the fetch must return."""

    path: str
    expect: Callable[[str, str], str]
    """Builds the expected text from (href as requested, display form)."""
    host: str = FAULT_HOST

    @property
    def href(self) -> str:
        return f"https://{self.host}{self.path}{QUERY}"

    @property
    def display(self) -> str:
        return f"https://{self.host}{self.path}"


def network_error(href: str, display: str) -> str:
    return f"fetch failed for {href}: network error; try a different URL"


def body_unreadable(href: str, display: str) -> str:
    return f"the response body from {display} could not be read; try again or use a different URL"


def timed_out(href: str, display: str) -> str:
    return f"request to {display} timed out; try again or use a different URL"


def size_cap(href: str, display: str) -> str:
    return f"response from {display} exceeds the 8388608-byte size cap"


def page(
    text: str, *, truncated: bool = False, final: str | None = None
) -> Callable[[str, str], str]:
    def expect(href: str, display: str) -> str:
        flag = "true" if truncated else "false"
        return f"url: {final or href}\ntruncated: {flag}\nextraction: plain\n\n{text}"

    return expect


def status(code: int, final_path: str | None = None) -> Callable[[str, str], str]:
    def expect(href: str, display: str) -> str:
        where = f"https://{FAULT_HOST}{final_path}" if final_path else display
        return f"{where} answered HTTP {code}; try a different URL"

    return expect


def redirect_cap(from_path: str, to_path: str) -> Callable[[str, str], str]:
    def expect(href: str, display: str) -> str:
        return (
            f"redirect from https://{FAULT_HOST}{from_path} to https://{FAULT_HOST}{to_path} "
            "refused: exceeded max redirects (5)"
        )

    return expect


OK = OK_BODY.decode()

CASES: dict[str, Case] = {
    # Nothing of a response arrived, or only part of its head: no body to speak of.
    "reset before the response": Case("/reset/before-response", network_error),
    "clean close before the response": Case("/close/before-response", network_error),
    "reset during the headers": Case("/reset/headers", network_error),
    "clean close during the headers": Case("/close/headers", network_error),
    # The head was accepted and the body broke off: never partial text.
    "reset during the body": Case("/reset/body", body_unreadable),
    "clean close during the body": Case("/close/body", body_unreadable),
    "Content-Length longer than the body": Case("/framing/cl-short", body_unreadable),
    "chunked body without its last chunk": Case("/chunked/truncated", body_unreadable),
    "chunked body cut inside a chunk": Case("/chunked/truncated-mid-chunk", body_unreadable),
    "chunk size that is not hex": Case("/chunked/bad-size", body_unreadable),
    "chunk data without its CRLF": Case("/chunked/bad-terminator", body_unreadable),
    "chunk size that overflows": Case("/chunked/overflow-size", body_unreadable),
    # A head that is not HTTP, or is too big to be one.
    "garbage status code": Case("/status/garbage", network_error),
    "binary garbage instead of a status line": Case("/status/binary", network_error),
    "HTTP/0.9-style reply with no status line": Case("/status/http09", network_error),
    "a 64 KiB header": Case("/headers/64k", network_error),
    "10,000 headers": Case("/headers/10000", network_error),
    # Slow and endless.
    "headers at 1 byte per second": Case("/slow/headers", timed_out),
    "body at 1 byte per second": Case("/slow/body", body_unreadable),
    "an HTML body that never ends": Case("/endless", size_cap),
    "a plain-text body that never ends": Case(
        "/endless/plain", page("y" * 40_000, truncated=True)
    ),
    "a body that never ends, slowly": Case("/endless/slow", body_unreadable),
    "endless 1xx responses": Case("/1xx/flood", timed_out),
    # Close-delimited HTTP/1.0 bodies end where the connection ends.
    "HTTP/1.0 body ended by a clean close": Case("/http10/close", page(HTTP10_BODY.decode())),
    "HTTP/1.0 body ended by a reset": Case("/http10/reset", page(HTTP10_BODY.decode())),
    "HTTP/1.0 body ended without close_notify": Case(
        "/http10/no-close-notify", page(HTTP10_BODY.decode())
    ),
    # Framing the parser must refuse (request smuggling material).
    "two different Content-Lengths": Case("/framing/cl-duplicate-differ", network_error),
    "two equal Content-Length lines": Case("/framing/cl-duplicate-same", network_error),
    "a Content-Length list": Case("/framing/cl-list", network_error),
    "a negative Content-Length": Case("/framing/cl-negative", network_error),
    "a Content-Length with letters": Case("/framing/cl-garbage", network_error),
    "Content-Length and Transfer-Encoding together": Case("/framing/cl-and-te", network_error),
    "a transfer coding other than chunked": Case("/framing/te-not-chunked", body_unreadable),
    "gzip as a transfer coding under chunked": Case(
        "/framing/te-gzip-chunked", body_unreadable
    ),
    # Content codings that cannot be decoded to the end.
    "gzip with a bad CRC in its trailer": Case("/coding/gzip-bad-crc", body_unreadable),
    # Bytes after a complete, CRC-checked gzip member are ignored, as browsers do.
    "gzip followed by garbage": Case(
        "/coding/gzip-trailing-garbage", page(TEXT_BODY[:40_000].decode(), truncated=True)
    ),
    "gzip cut in half": Case("/coding/gzip-truncated", body_unreadable),
    "gzip label on a plain body": Case("/coding/gzip-not-gzip", body_unreadable),
    "corrupt deflate": Case("/coding/deflate-corrupt", body_unreadable),
    "brotli cut in half": Case("/coding/br-truncated", body_unreadable),
    "brotli label on garbage": Case("/coding/br-garbage", body_unreadable),
    "zstd frame with corrupt blocks": Case("/coding/zstd-corrupt", body_unreadable),
    "zstd frame cut in half": Case("/coding/zstd-truncated", body_unreadable),
    "zstd frame with a bad magic number": Case("/coding/zstd-bad-magic", body_unreadable),
    # Informational responses are skipped; a 101 nobody asked for is a non-success status.
    "100, 102 and 103 before the 200": Case("/1xx/before-final", page(OK)),
    "an unrequested 101": Case("/1xx/switching", status(101)),
    # Redirects.
    "a redirect to itself": Case(
        "/redirect/loop", redirect_cap("/redirect/loop", "/redirect/loop")
    ),
    "a two-URL redirect loop": Case(
        "/redirect/ping", redirect_cap("/redirect/pong", "/redirect/ping")
    ),
    "a Location with a bare CR": Case("/location/bare-cr", network_error),
    "a Location with a NUL": Case("/location/nul", network_error),
    "a Location with a percent-encoded CRLF": Case(
        "/location/encoded-crlf",
        page(OK, final=f"https://{FAULT_HOST}/ok?next=%0D%0ASet-Cookie:%20injected=1"),
    ),
    "a Location folded onto a second line": Case(
        "/location/obs-fold", status(404, "/ok%20Set-Cookie:%20injected=1")
    ),
    # TLS and TCP faults, one listener each.
    "a TLS handshake that stalls": Case("/ok", timed_out, host=TLS_FAULTS["tls-stall"][0]),
    "a TCP connect that stalls": Case("/ok", timed_out, host=TLS_FAULTS["connect-stall"][0]),
    "a fatal TLS alert": Case("/ok", network_error, host=TLS_FAULTS["tls-alert"][0]),
    "a certificate for another name": Case("/ok", network_error, host=TLS_FAULTS["wrong-name"][0]),
    "a certificate from an untrusted CA": Case(
        "/ok", network_error, host=TLS_FAULTS["untrusted"][0]
    ),
    "plain HTTP on the TLS port": Case("/ok", network_error, host=TLS_FAULTS["plaintext"][0]),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_fault_ends_in_its_catalogue_message(fault_fetch: WebFetch, name: str) -> None:
    case = CASES[name]
    result = await fault_fetch.call({"url": case.href})
    assert result == case.expect(case.href, case.display)


async def test_control_path_fetches_normally(fault_fetch: WebFetch) -> None:
    href = f"https://{FAULT_HOST}/ok{QUERY}"
    assert await fault_fetch.call({"url": href}) == page(OK)(href, "")


async def test_location_with_bare_lf_is_followed_and_its_injected_header_ignored(
    fault_fetch: WebFetch,
) -> None:
    # A bare LF ends the Location field line (RFC 9112 lets a recipient treat it as a line
    # end), so the "injected" Set-Cookie is just another header: the anonymous client keeps
    # no cookie and sends none to the redirect target.
    result = await fault_fetch.call({"url": f"https://{FAULT_HOST}/location/bare-lf"})
    header, _, echoed = result.partition("\n\n")
    assert header == f"url: https://{FAULT_HOST}/echo\ntruncated: false\nextraction: plain"
    assert echoed.startswith("GET /echo HTTP/1.1\r\n")
    assert "cookie" not in echoed.lower()
