"""Fetching pages: the seeds' examples, the provenance header, content types, charsets, cuts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from runvil.web import FetchPolicy, WebFetch
from runvil.web._fetch.admission import admit_url
from runvil.web._fetch.arguments import FetchRequest
from runvil.web._fetch.content import BodyKind, decode_body
from runvil.web._fetch.http import Page
from runvil.web._fetch.tool import render_page
from tests.web.fetch.conftest import (
    ARTICLE_HTML,
    FetchFactory,
    RawSiteFactory,
    SiteFactory,
    expect_page,
)

JSON_BODY = '{"key":"value","numbers":[1,2,3],"nested":{"ok":true}}'


def respond(body: bytes | str, content_type: str | None, status: int = 200) -> web.Response:
    data = body.encode("utf-8") if isinstance(body, str) else body
    response = web.Response(body=data, status=status)
    if content_type is None:
        response.headers.popall("Content-Type", None)
    else:
        response.headers["Content-Type"] = content_type
    return response


def serving(
    body: bytes | str, content_type: str | None, status: int = 200
) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return respond(body, content_type, status)

    return handler


async def test_fetch_page_returns_the_article_as_markdown(
    fetch: WebFetch, site: SiteFactory
) -> None:
    served = await site({"/": serving(ARTICLE_HTML, "text/html; charset=utf-8")})
    text = await fetch.call({"url": "https://example.com/"})
    header, _, body = text.partition("\n\n")
    assert header == "url: https://example.com/\ntruncated: false\nextraction: readability"
    assert "This domain is for use in illustrative examples" in body
    assert "Footer boilerplate" not in body
    assert "About" not in body
    assert served.request_lines == ["GET /"]


async def test_a_short_page_comes_back_whole_as_raw_html(
    fetch: WebFetch, site: SiteFactory
) -> None:
    await site({"/": serving("<div>short</div>", "text/html")})
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "short", extraction="raw-html"
    )


async def test_raw_true_keeps_the_rows_of_a_table_page(fetch: WebFetch, site: SiteFactory) -> None:
    rows = "".join(f"<tr><td>item {i}</td><td>{i}.00</td></tr>" for i in range(30))
    html = f"<html><body><h1>Prices</h1><table>{rows}</table></body></html>"
    await site({"/prices": serving(html, "text/html")})
    text = await fetch.call({"url": "https://example.com/prices", "raw": True})
    header, _, body = text.partition("\n\n")
    assert header == "url: https://example.com/prices\ntruncated: false\nextraction: raw-html"
    for i in range(30):
        assert f"item {i}" in body and f"{i}.00" in body


async def test_missing_page_is_a_soft_404(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/missing": serving("<h1>Not here</h1>", "text/html", status=404)})
    assert await fetch.call({"url": "https://example.com/missing"}) == (
        "https://example.com/missing answered HTTP 404; try a different URL"
    )


@pytest.mark.parametrize("status", [400, 403, 410, 451, 500, 502, 503, 304, 300, 399])
async def test_every_non_success_status_is_soft(
    fetch: WebFetch, site: SiteFactory, status: int
) -> None:
    await site({"/x": serving("", "text/plain", status=status)})
    assert await fetch.call({"url": "https://example.com/x?token=secret#frag"}) == (
        f"https://example.com/x answered HTTP {status}; try a different URL"
    )


@pytest.mark.parametrize("status", [200, 201, 203, 206, 299])
async def test_every_2xx_is_success(fetch: WebFetch, site: SiteFactory, status: int) -> None:
    await site({"/": serving("ok", "text/plain", status=status)})
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "ok"
    )


async def test_json_comes_back_verbatim(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/data.json": serving(JSON_BODY, "application/json")})
    assert await fetch.call({"url": "https://example.com/data.json"}) == expect_page(
        "https://example.com/data.json", JSON_BODY
    )


@pytest.mark.parametrize(
    ("content_type", "extraction"),
    [
        ("application/xml", "plain"),
        ("text/xml", "plain"),
        ("application/ld+json", "plain"),
        ("application/atom+xml", "plain"),
        ("text/plain", "plain"),
        ("text/markdown", "plain"),
        ("text/csv", "plain"),
        ("TEXT/PLAIN ; Charset=UTF-8", "plain"),
    ],
)
async def test_text_types_come_back_verbatim(
    fetch: WebFetch, site: SiteFactory, content_type: str, extraction: str
) -> None:
    body = "<a>1 & 2</a>\n  kept   as is\n"
    await site({"/doc": serving(body, content_type)})
    assert await fetch.call({"url": "https://example.com/doc", "raw": True}) == expect_page(
        "https://example.com/doc", body, extraction=extraction
    )


async def test_xhtml_is_html(fetch: WebFetch, site: SiteFactory) -> None:
    await site(
        {"/": serving("<html><body><p>hello xhtml</p></body></html>", "application/xhtml+xml")}
    )
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "hello xhtml", extraction="raw-html"
    )


async def test_pdf_is_refused_naming_its_type(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/report.pdf": serving(b"%PDF-1.7 ...", "application/pdf")})
    assert await fetch.call({"url": "https://example.com/report.pdf"}) == (
        "content type application/pdf from https://example.com/report.pdf cannot be returned "
        "as text; try an HTML version of the page or a different URL"
    )


@pytest.mark.parametrize(
    "content_type",
    [
        "application/octet-stream",
        "image/svg+xml",
        "image/png",
        "application/javascript",
        "audio/mpeg",
        "application/zip",
        "no-slash",
        "text/",
    ],
)
async def test_other_types_are_refused_quoting_the_header(
    fetch: WebFetch, site: SiteFactory, content_type: str
) -> None:
    await site({"/f": serving(b"\x00\x01", content_type)})
    assert await fetch.call({"url": "https://example.com/f?q=1"}) == (
        f"content type {content_type} from https://example.com/f cannot be returned as text; "
        "try an HTML version of the page or a different URL"
    )


@pytest.mark.parametrize(
    "content_type_line",
    [
        None,
        b"Content-Type: ",
        b"Content-Type: text/html; charset=\xc3\xa9",
        b"Content-Type: t\xe9xt/html",
    ],
)
async def test_no_content_type_is_refused(
    fetch: WebFetch, raw_site: RawSiteFactory, content_type_line: bytes | None
) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lines = [b"HTTP/1.1 200 OK", b"Content-Length: 6"]
        if content_type_line is not None:
            lines.append(content_type_line)
        writer.write(b"\r\n".join(lines) + b"\r\n\r\n<rss/>")
        await writer.drain()

    await raw_site(answer)
    assert await fetch.call({"url": "https://example.com/feed"}) == (
        "response from https://example.com/feed declared no content type; refusing to guess "
        "its format; try a different URL"
    )


async def test_latin1_notes_keep_their_accents(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/notes": serving("Café".encode("latin-1"), "text/plain; charset=ISO-8859-1")})
    assert await fetch.call({"url": "https://example.com/notes"}) == expect_page(
        "https://example.com/notes", "Café"
    )


async def test_unknown_charset_is_named_lowercased(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/notes": serving(b"Caf\xe9", "text/plain; charset=Not-A-Charset")})
    assert await fetch.call({"url": "https://example.com/notes"}) == (
        "response from https://example.com/notes declared unknown charset not-a-charset; "
        "cannot decode its text"
    )


async def test_charset_comes_from_the_header_never_a_meta_tag(
    fetch: WebFetch, site: SiteFactory
) -> None:
    html = '<html><head><meta charset="shift_jis"></head><body><div>Café ü</div></body></html>'
    await site({"/": serving(html.encode("utf-8"), "text/html")})
    text = await fetch.call({"url": "https://example.com/", "raw": True})
    assert text.endswith("Café ü")


async def test_invalid_utf8_is_replaced_not_fatal(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/": serving(b"ok \xff\xfe end", "text/plain; charset=utf8")})
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "ok \ufffd\ufffd end"
    )


async def test_shift_jis_and_windows_1252_decode(fetch: WebFetch, site: SiteFactory) -> None:
    async def sjis(request: web.Request) -> web.Response:
        return respond("日本語".encode("shift_jis"), "text/plain; charset=shift_jis")

    async def cp1252(request: web.Request) -> web.Response:
        return respond("“quoted” €".encode("cp1252"), "text/plain; charset=windows-1252")

    await site({"/sjis": sjis, "/cp": cp1252})
    assert (await fetch.call({"url": "https://example.com/sjis"})).endswith("\n\n日本語")
    assert (await fetch.call({"url": "https://example.com/cp"})).endswith("\n\n“quoted” €")


async def test_max_chars_25_cuts_and_flags(fetch: WebFetch, site: SiteFactory) -> None:
    body = "abcdefghijklmnopqrstuvwxyz0123456789"
    await site({"/": serving(body, "text/plain")})
    assert await fetch.call({"url": "https://example.com/", "max_chars": 25}) == expect_page(
        "https://example.com/", body[:25], truncated=True
    )


async def test_a_huge_html_page_cut_at_max_chars_is_exactly_its_rendering_cut(
    fetch: WebFetch, site: SiteFactory
) -> None:
    # The fetch tells the renderer how much it keeps, so the rendering stops early; what the
    # caller gets is still exactly the whole rendering's first max_chars characters.
    from runvil.web._fetch.extract import render_html

    html = "<html><body>" + "".join(f"<p>Paragraph number {n}.</p>" for n in range(60_000))
    await site({"/": serving(html, "text/html; charset=utf-8")})
    whole, label = render_html(html, "https://example.com/", False)
    assert label == "raw-html"
    for max_chars in (1, 5_000, 40_000):
        result = await fetch.call({"url": "https://example.com/", "max_chars": max_chars})
        assert result == expect_page(
            "https://example.com/", whole[:max_chars], truncated=True, extraction="raw-html"
        )


async def test_text_of_exactly_max_chars_is_whole(fetch: WebFetch, site: SiteFactory) -> None:
    body = "é" * 25  # 25 characters, 50 bytes: the cut counts characters
    await site({"/": serving(body, "text/plain")})
    assert await fetch.call({"url": "https://example.com/", "max_chars": 25}) == expect_page(
        "https://example.com/", body
    )
    assert await fetch.call({"url": "https://example.com/", "max_chars": 24}) == expect_page(
        "https://example.com/", body[:24], truncated=True
    )


async def test_the_cut_never_splits_a_character(fetch: WebFetch, site: SiteFactory) -> None:
    body = "a😀b😀c"
    await site({"/": serving(body, "text/plain")})
    assert await fetch.call({"url": "https://example.com/", "max_chars": 2}) == expect_page(
        "https://example.com/", "a😀", truncated=True
    )


async def test_max_chars_above_the_ceiling_is_lowered(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    body = "x" * 45_000
    await site({"/": serving(body, "text/plain")})
    fetch = make_fetch()
    assert await fetch.call({"url": "https://example.com/", "max_chars": 100_000}) == expect_page(
        "https://example.com/", "x" * 40_000, truncated=True
    )
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", "x" * 40_000, truncated=True
    )


async def test_a_long_article_cut_to_5000_characters(fetch: WebFetch, site: SiteFactory) -> None:
    paragraphs = "".join(
        f"<p>Paragraph {i} of the long article, with enough words to count as prose.</p>"
        for i in range(400)
    )
    html = f"<html><body><nav>menu</nav><article><h1>Long</h1>{paragraphs}</article></body></html>"
    await site({"/long-article": serving(html, "text/html; charset=utf-8")})
    whole = await fetch.call({"url": "https://example.com/long-article"})
    body = whole.partition("\n\n")[2]
    assert whole.startswith("url: https://example.com/long-article\ntruncated: false\n")
    assert len(body) > 5000
    text = await fetch.call({"url": "https://example.com/long-article", "max_chars": 5000})
    assert text == expect_page(
        "https://example.com/long-article", body[:5000], truncated=True, extraction="readability"
    )


async def test_max_chars_applies_after_extraction(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/": serving(ARTICLE_HTML, "text/html")})
    whole = (await fetch.call({"url": "https://example.com/"})).partition("\n\n")[2]
    cut = await fetch.call({"url": "https://example.com/", "max_chars": 10})
    assert cut == expect_page(
        "https://example.com/", whole[:10], truncated=True, extraction="readability"
    )


async def test_empty_body_is_an_empty_page(fetch: WebFetch, site: SiteFactory) -> None:
    await site({"/": serving(b"", "text/plain")})
    assert await fetch.call({"url": "https://example.com/"}) == expect_page(
        "https://example.com/", ""
    )


async def test_a_policy_may_set_another_user_agent(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site({"/": serving("ok", "text/plain")})
    await make_fetch(FetchPolicy(user_agent="embedder/1.0")).call({"url": "https://example.com/"})
    assert served.headers[0]["User-Agent"] == "embedder/1.0"


@pytest.mark.parametrize(
    ("user_agent", "message"),
    [
        ("bot/1.0\r\nX-Injected: 1", "user_agent must be printable ASCII (an HTTP header value)"),
        ("bot/1.0\n", "user_agent must be printable ASCII (an HTTP header value)"),
        ("bot/1.0\t(x)", "user_agent must be printable ASCII (an HTTP header value)"),
        ("bot\x7f/1.0", "user_agent must be printable ASCII (an HTTP header value)"),
        ("bötchen/1.0", "user_agent must be printable ASCII (an HTTP header value)"),
        ("b" * 1025, "user_agent must be at most 1024 characters"),
        ("b" * 65536, "user_agent must be at most 1024 characters"),
        (b"bot/1.0", "user_agent must be a string"),
    ],
)
def test_a_user_agent_that_is_no_header_value_is_refused_when_the_policy_is_made(
    user_agent: object, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        FetchPolicy(user_agent=user_agent)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_the_longest_printable_user_agent_is_kept() -> None:
    longest = " !~" + "b" * 1021
    assert FetchPolicy(user_agent=longest).user_agent == longest
    assert FetchPolicy(user_agent="").user_agent == ""


# --- the result text is the same whether or not the whole body had to be decoded -----------

_bodies = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=150).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.tuples(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]), st.binary()).map(
        lambda parts: parts[0] + parts[1] * 3
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    body=_bodies,
    max_chars=st.integers(min_value=1, max_value=40),
    charset=st.sampled_from([None, "utf-8", " UTF8 ", "Utf-8"]),
    kind=st.sampled_from([BodyKind.FLAT, BodyKind.STRUCTURED]),
)
def test_a_long_utf8_body_renders_as_if_decoded_whole(
    body: bytes, max_chars: int, charset: str | None, kind: BodyKind
) -> None:
    target = admit_url("https://example.com/")
    page = Page(target=target, kind=kind, charset=charset, body=body)
    whole = decode_body(body, charset)
    expected = expect_page(
        "https://example.com/", whole[:max_chars], truncated=len(whole) > max_chars
    )
    rendered = render_page(page, FetchRequest(url=target.href, max_chars=max_chars, raw=False))
    assert rendered.model_text() == expected
