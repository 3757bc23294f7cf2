"""PDFs as text (``FetchPolicy(pdf=True)``): real PDF files, made in the tests, served over TLS.

Every file is written by ``tests.fixtures.pdfs`` (a multi-page one, a password-protected one, one
cut short, one over the byte cap, a bomb of pages and a bomb of inflation), fetched through the
whole guarded path and converted by the worker process, as in production.
"""

from __future__ import annotations

import asyncio
import sys
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil.web import FetchPolicy
from runvil.web._fetch import pdf as pdf_module
from runvil.web._fetch.admission import admit_url
from runvil.web._fetch.content import BodyKind
from runvil.web._fetch.continuation import Held
from runvil.web._fetch.fairpool import FairPool
from runvil.web._fetch.http import Page
from tests.fixtures.pdfs import encrypted_pdf, image_only_pdf, inflating_pdf, text_pdf
from tests.web.fetch.conftest import FetchFactory, SiteFactory

PDF_ON = FetchPolicy(pdf=True)
URL = "https://example.com/report.pdf"


def serving(body: bytes, content_type: str = "application/pdf") -> Any:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, headers={"Content-Type": content_type})

    return handler


def expect_pdf(body: str, *, truncated: bool = False, url: str = URL) -> str:
    return (
        f"url: {url}\ntruncated: {'true' if truncated else 'false'}\nextraction: pdf\n\n{body}"
    )


REPORT = text_pdf(
    [
        ["Quarterly report", "Revenue rose (slightly)."],
        "The second page.",
        ["Caf\u00e9 and na\u00efve \u2014 in WinAnsi"],
    ]
)
REPORT_TEXT = (
    "## Page 1\n\nQuarterly report\nRevenue rose (slightly).\n\n"
    "## Page 2\n\nThe second page.\n\n"
    "## Page 3\n\nCaf\u00e9 and na\u00efve \u2014 in WinAnsi"
)


async def test_a_multi_page_pdf_comes_back_as_text_with_a_heading_per_page(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(REPORT)})
    assert await make_fetch(PDF_ON).call({"url": URL}) == expect_pdf(REPORT_TEXT)


async def test_a_compressed_pdf_reads_the_same(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/c.pdf": serving(text_pdf(["Hello compressed"], compress=True))})
    text = await make_fetch(PDF_ON).call({"url": "https://example.com/c.pdf"})
    assert text == expect_pdf("## Page 1\n\nHello compressed", url="https://example.com/c.pdf")


async def test_without_the_setting_a_pdf_is_the_seeds_refusal(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(REPORT)})
    assert await make_fetch().call({"url": URL}) == (
        "content type application/pdf from https://example.com/report.pdf cannot be returned "
        "as text; try an HTML version of the page or a different URL"
    )


async def test_an_octet_stream_that_starts_as_a_pdf_is_one(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(REPORT, "application/octet-stream")})
    assert await make_fetch(PDF_ON).call({"url": URL}) == expect_pdf(REPORT_TEXT)


async def test_an_octet_stream_that_is_not_a_pdf_keeps_the_seeds_refusal(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/blob": serving(b"\x00\x01binary", "Application/Octet-Stream; x=1")})
    text = await make_fetch(PDF_ON).call({"url": "https://example.com/blob?k=secret"})
    assert text == (
        "content type Application/Octet-Stream; x=1 from https://example.com/blob cannot be "
        "returned as text; try an HTML version of the page or a different URL"
    )


async def test_max_chars_cuts_a_pdf(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/report.pdf": serving(REPORT)})
    text = await make_fetch(PDF_ON).call({"url": URL, "max_chars": 30})
    assert text == expect_pdf(REPORT_TEXT[:30], truncated=True)


async def test_raw_has_no_effect_on_a_pdf(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/report.pdf": serving(REPORT)})
    assert await make_fetch(PDF_ON).call({"url": URL, "raw": True}) == expect_pdf(REPORT_TEXT)


async def test_a_password_protected_pdf_is_a_soft_failure_naming_the_url(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(encrypted_pdf(["top secret"]))})
    assert await make_fetch(PDF_ON).call({"url": URL + "?token=abc"}) == (
        "the PDF from https://example.com/report.pdf is encrypted; its text cannot be read "
        "without a password; try a different URL"
    )


async def test_an_encrypted_pdf_anyone_may_open_is_read(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(encrypted_pdf(["open to all"], user_password=""))})
    assert await make_fetch(PDF_ON).call({"url": URL}) == expect_pdf("## Page 1\n\nopen to all")


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9])
async def test_a_truncated_pdf_is_a_soft_failure(
    make_fetch: FetchFactory, site: SiteFactory, cut: float
) -> None:
    await site({"/report.pdf": serving(REPORT[: int(len(REPORT) * cut)])})
    assert await make_fetch(PDF_ON).call({"url": URL}) == (
        "the PDF from https://example.com/report.pdf is damaged or incomplete; its text cannot "
        "be read; try a different URL"
    )


async def test_an_image_only_pdf_is_a_soft_failure(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/report.pdf": serving(image_only_pdf(3))})
    assert await make_fetch(PDF_ON).call({"url": URL}) == (
        "the PDF from https://example.com/report.pdf has no text to extract (its pages may be "
        "scanned images); try a different URL"
    )


async def test_a_pdf_over_the_byte_cap_is_refused_whole(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    big = text_pdf([f"page {i}" for i in range(300)])

    async def streamed(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
        await response.prepare(request)  # chunked: no Content-Length to refuse it up front
        await response.write(big)
        return response

    await site({"/report.pdf": serving(big), "/streamed.pdf": streamed})
    fetch = make_fetch(FetchPolicy(pdf=True, max_bytes=len(big) - 1))
    assert await fetch.call({"url": URL}) == (
        f"response from https://example.com/report.pdf exceeds the {len(big) - 1}-byte size cap"
    )
    assert await fetch.call({"url": "https://example.com/streamed.pdf"}) == (
        f"response from https://example.com/streamed.pdf exceeds the {len(big) - 1}-byte size cap"
    )


async def test_a_bomb_of_pages_is_cut_at_the_page_limit(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    bomb = text_pdf([f"p{i}" for i in range(20_000)])
    await site({"/report.pdf": serving(bomb)})
    fetch = make_fetch(FetchPolicy(pdf=True, pdf_max_pages=3))
    assert await fetch.call({"url": URL}) == expect_pdf(
        "## Page 1\n\np0\n\n## Page 2\n\np1\n\n## Page 3\n\np2", truncated=True
    )


async def test_the_default_page_limit_holds(make_fetch: FetchFactory, site: SiteFactory) -> None:
    """200 pages are converted; under continuation the text ends there, flagged as cut."""
    bomb = text_pdf([f"p{i}" for i in range(5_000)])
    await site({"/report.pdf": serving(bomb)})
    fetch = make_fetch(FetchPolicy(pdf=True, continuation=True))
    text = await fetch.call({"url": URL})
    header, _, body = text.partition("\n\n")
    assert body.endswith("## Page 199\n\np198\n\n## Page 200\n\np199")
    assert header.split("\n") == [
        f"url: {URL}", "truncated: true", f"next_start_index: {len(body)}", "extraction: pdf"
    ]
    assert await fetch.call({"url": URL, "start_index": len(body)}) == expect_pdf("")


async def test_an_inflation_bomb_ends_within_the_limit(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    """A few kilobytes that inflate to 8 GB of drawing operators: the worker runs out of its
    memory (or of time) and the call says so, in time."""
    await site({"/report.pdf": serving(inflating_pdf(8 << 30))})
    fetch = make_fetch(FetchPolicy(pdf=True, timeout=10.0))
    text = await asyncio.wait_for(fetch.call({"url": URL}), 30)
    assert text == (
        "the PDF from https://example.com/report.pdf could not be converted within the time "
        "and memory limits; try a different URL"
    )
    # The next conversion gets a fresh worker and works.
    await site({"/ok.pdf": serving(REPORT)}, hosts=("ok.example",))
    assert await fetch.call({"url": "https://ok.example/ok.pdf"}) == expect_pdf(
        REPORT_TEXT, url="https://ok.example/ok.pdf"
    )


class KillRecorder:
    """Runs conversions on stand-in workers that read their request and then never answer,
    on a pool of its own (so no warm worker of an earlier test is reused), and records the
    worker process each killed conversion was running on.

    A real bomb's running time depends on the machine (a fast one inflates 600 MiB in well
    under a second); a worker that never answers makes "still running at the limit" certain.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.processes: list[Any] = []
        self.jobs: list[Any] = []
        recorder = self

        class Recorded(pdf_module._Job):
            def __init__(self, request: bytes, reply_cap: int) -> None:
                super().__init__(request, reply_cap)
                recorder.jobs.append(self)

            def kill(self) -> None:
                with self.lock:
                    recorder.processes.append(self.process)
                super().kill()

        stall = "import sys, time; sys.stdin.buffer.read(1); time.sleep(600)"
        self.pool = FairPool(1, "test-pdf", idle_seconds=None)
        monkeypatch.setattr(pdf_module, "_Job", Recorded)
        monkeypatch.setattr(pdf_module, "_pool", self.pool)
        monkeypatch.setattr(pdf_module, "_worker_command", lambda: [sys.executable, "-c", stall])

    async def started(self) -> None:
        """Wait until the one job runs on its worker process."""
        while not (self.jobs and self.jobs[0].process is not None):
            await asyncio.sleep(0.01)

    def close(self) -> None:
        pass


@pytest.fixture
def killed(monkeypatch: pytest.MonkeyPatch) -> Iterator[KillRecorder]:
    recorder = KillRecorder(monkeypatch)
    yield recorder
    recorder.close()


async def test_a_conversion_over_its_time_is_killed(killed: KillRecorder) -> None:
    """A conversion still running at the limit is stopped there (its process killed)."""
    page = Page(admit_url(URL), BodyKind.PDF, None, REPORT)
    result = await asyncio.wait_for(
        pdf_module.convert_pdf(page, max_pages=10, char_limit=100, timeout=1.0), 20
    )
    assert result == (
        "the PDF from https://example.com/report.pdf could not be converted within the time "
        "and memory limits; try a different URL"
    )
    assert len(killed.processes) == 1 and killed.processes[0] is not None
    assert await asyncio.to_thread(killed.processes[0].wait, 10) == -9  # SIGKILL


async def test_cancelling_the_call_kills_the_conversion(killed: KillRecorder) -> None:
    page = Page(admit_url(URL), BodyKind.PDF, None, REPORT)
    task = asyncio.ensure_future(
        pdf_module.convert_pdf(page, max_pages=10, char_limit=100, timeout=60)
    )
    await asyncio.wait_for(killed.started(), 20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(killed.processes) == 1 and killed.processes[0] is not None
    assert await asyncio.to_thread(killed.processes[0].wait, 10) == -9


async def test_continuation_reads_a_pdf_on(make_fetch: FetchFactory, site: SiteFactory) -> None:
    pages = [[f"line {p}.{n} " + "x" * 60 for n in range(40)] for p in range(30)]
    served_pdf = text_pdf(pages)
    hits = []

    async def handler(request: web.Request) -> web.Response:
        hits.append(1)
        return web.Response(body=served_pdf, headers={"Content-Type": "application/pdf"})

    await site({"/report.pdf": handler})
    fetch = make_fetch(FetchPolicy(pdf=True, continuation=True))
    pieces = []
    start: int | None = 0
    while start is not None:
        text = await fetch.call({"url": URL, "start_index": start, "max_chars": 20_000})
        header, _, body = text.partition("\n\n")
        lines = header.split("\n")
        assert lines[-1] == "extraction: pdf"
        pieces.append(body)
        start = int(lines[2].split(": ")[1]) if lines[1] == "truncated: true" else None
    whole = "".join(pieces)
    expected = "\n\n".join(
        f"## Page {p + 1}\n\n" + "\n".join(lines) for p, lines in enumerate(pages)
    )
    assert whole == expected
    assert len(pieces) == 1 + len(expected) // 20_000
    assert hits == [1]


# -- the conversion on its own, fuzzed ------------------------------------------------------------

KNOWN_FAILURES = {
    "the PDF from https://example.com/report.pdf is encrypted; its text cannot be read without "
    "a password; try a different URL",
    "the PDF from https://example.com/report.pdf is damaged or incomplete; its text cannot be "
    "read; try a different URL",
    "the PDF from https://example.com/report.pdf has no text to extract (its pages may be "
    "scanned images); try a different URL",
    "the PDF from https://example.com/report.pdf could not be converted within the time and "
    "memory limits; try a different URL",
}
SEEDS = [
    REPORT,
    text_pdf(["compressed text"], compress=True),
    encrypted_pdf(["secret"]),
    image_only_pdf(2),
]


@st.composite
def broken_pdfs(draw: st.DrawFn) -> bytes:
    """A real PDF with bytes flipped, cut, spliced or repeated, or a %PDF- header on noise."""
    base = bytearray(draw(st.sampled_from(SEEDS)))
    how = draw(st.sampled_from(["flip", "cut", "splice", "noise", "inflate"]))
    if how == "flip":
        for _ in range(draw(st.integers(1, 20))):
            position = draw(st.integers(0, len(base) - 1))
            base[position] = draw(st.integers(0, 255))
    elif how == "cut":
        del base[draw(st.integers(0, len(base))) :]
    elif how == "splice":
        position = draw(st.integers(0, len(base)))
        base[position:position] = draw(st.binary(max_size=200))
    elif how == "noise":
        base = bytearray(b"%PDF-1." + draw(st.binary(max_size=2000)))
    else:  # a stream that inflates to garbage operators
        junk = zlib.compress(draw(st.binary(min_size=1, max_size=500)) * 1000)
        base = bytearray(
            b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
            b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
            b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] /Contents 4 0 R >> endobj\n"
            + b"4 0 obj << /Length %d /Filter /FlateDecode >> stream\n" % len(junk)
            + junk
            + b"\nendstream endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
        )
    return bytes(base)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=broken_pdfs())
def test_broken_pdfs_never_raise_and_never_hang(body: bytes) -> None:
    page = Page(admit_url(URL), BodyKind.PDF, None, body)

    async def convert() -> Held | str:
        return await asyncio.wait_for(
            pdf_module.convert_pdf(page, max_pages=50, char_limit=10_000, timeout=5.0), 30
        )

    result = asyncio.run(convert())
    if isinstance(result, str):
        assert result in KNOWN_FAILURES
    else:
        assert result.extraction == "pdf"
        assert result.text.startswith("## Page 1")
        assert len(result.text) <= 10_000


def test_the_page_limit_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="pdf_max_pages must be at least 1"):
        FetchPolicy(pdf=True, pdf_max_pages=0)
    assert FetchPolicy().pdf_max_pages == 200
