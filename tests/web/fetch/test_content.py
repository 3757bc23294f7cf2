"""Content-Type routing and charset decoding, exactly as seed 001 "Content types and charsets"."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from runvil.web._fetch.content import (
    BodyKind,
    ContentTypeMissing,
    ContentTypeRefused,
    UnknownCharset,
    classify_content_type,
    decode_body,
)

HTML, STRUCTURED, FLAT = BodyKind.HTML, BodyKind.STRUCTURED, BodyKind.FLAT


@pytest.mark.parametrize(
    ("header", "kind", "charset"),
    [
        (b"text/html", HTML, None),
        (b"text/html; charset=utf-8", HTML, "utf-8"),
        (b"TEXT/HTML;CHARSET=UTF-8", HTML, "UTF-8"),
        (b"  Text/Html ;  charset=\"ISO-8859-1\"  ", HTML, "ISO-8859-1"),
        (b"application/xhtml+xml", HTML, None),
        (b"application/xhtml+xml; charset=windows-1252", HTML, "windows-1252"),
        (b"application/json", STRUCTURED, None),
        (b"application/json; charset=utf-8", STRUCTURED, "utf-8"),
        (b"application/xml", STRUCTURED, None),
        (b"application/ld+json", STRUCTURED, None),
        (b"application/atom+xml", STRUCTURED, None),
        (b"application/rss+xml; charset=shift_jis", STRUCTURED, "shift_jis"),
        (b"application/problem+json", STRUCTURED, None),
        (b"application/vnd.api+json", STRUCTURED, None),
        (b"text/xml", STRUCTURED, None),
        (b"text/json", STRUCTURED, None),
        (b"text/vnd.foo+xml", STRUCTURED, None),
        (b"text/x-thing+json", STRUCTURED, None),
        (b"text/plain", FLAT, None),
        (b"text/plain; charset=ISO-8859-1", FLAT, "ISO-8859-1"),
        (b"text/plain; charset=not-a-charset", FLAT, "not-a-charset"),
        (b"text/markdown", FLAT, None),
        (b"text/csv; header=present", FLAT, None),
        (b"text/javascript", FLAT, None),
        (b"text/css", FLAT, None),
        (b"text/x-json", FLAT, None),
    ],
)
def test_accepted_types(header: bytes, kind: BodyKind, charset: str | None) -> None:
    assert classify_content_type(header) == (kind, charset)


@pytest.mark.parametrize(
    "header",
    [
        "application/pdf",
        "application/octet-stream",
        "image/svg+xml",
        "image/png",
        "image/svg+xml; charset=utf-8",
        "audio/mpeg",
        "video/mp4",
        "application/zip",
        "application/gzip",
        "application/javascript",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "font/woff2",
        "model/gltf+json",
        "message/rfc822",
    ],
)
def test_other_types_are_refused_quoting_the_header(header: str) -> None:
    with pytest.raises(ContentTypeRefused) as caught:
        classify_content_type(header.encode())
    assert caught.value.header == header


@pytest.mark.parametrize(
    "header",
    [
        "html",
        "text",
        "text/",
        "/html",
        "text/html/extra",
        "text /html",
        "text/ht ml",
        "te(xt/html",
        "text/html, text/plain",
        "text/html\x00",
        ";charset=utf-8",
        "\"text/html\"",
        "*/*",
    ],
)
def test_unparsable_types_are_refused_quoting_the_header(header: str) -> None:
    with pytest.raises(ContentTypeRefused) as caught:
        classify_content_type(header.encode())
    assert caught.value.header == header


@pytest.mark.parametrize(
    "header",
    [None, b"", b"   ", b"\t", "text/html; charset=\u00fcber".encode(), "téxt/plain".encode(),
     b"text/plain\xff", "application/json; x=\u2603".encode()],
)
def test_missing_empty_or_non_ascii_header_counts_as_missing(header: bytes | None) -> None:
    with pytest.raises(ContentTypeMissing):
        classify_content_type(header)


@pytest.mark.parametrize(
    ("header", "charset"),
    [
        (b"text/plain; charset=a; charset=b", "a"),  # the first one wins
        (b"text/plain; CHARSET=a", "a"),
        (b"text/plain; charset=\"a;b\"", "a;b"),
        (b"text/plain; charset=\"a\\\"b\"", "a\"b"),
        (b"text/plain; charset=\"unterminated", "unterminated"),
        (b"text/plain; charset=\"abc\"def; x=y", "abc"),
        (b"text/plain; charset=", None),
        (b"text/plain; charset=\"\"", None),
        (b"text/plain; charset= ; charset=latin1", "latin1"),
        (b"text/plain; charset", None),
        (b"text/plain; =utf-8", None),
        (b"text/plain;;;charset=utf-8", "utf-8"),
        (b"text/plain; foo bar=1; charset=utf-8", "utf-8"),
        (b"text/plain; charset=utf-8 ", "utf-8"),
        (b"text/plain; charset=\"utf-8\" ", "utf-8"),
        (b"text/plain; charset=\" utf-8 \"", " utf-8 "),
    ],
)
def test_charset_parameter_follows_whatwg_mime_parsing(header: bytes, charset: str | None) -> None:
    assert classify_content_type(header)[1] == charset


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=80), st.none(),
                 st.builds(lambda t, p: (t + p).encode("utf-8", "surrogatepass"),
                           st.sampled_from(["text/html", "application/json", "image/svg+xml",
                                            "text/plain", "application/x+xml", ""]),
                           st.text(max_size=40))))
def test_any_header_classifies_or_raises_a_specified_error(header: bytes | None) -> None:
    try:
        kind, charset = classify_content_type(header)
    except ContentTypeMissing:
        assert header is None or not header.strip() or not header.isascii()
    except ContentTypeRefused as refused:
        assert header is not None and refused.header == header.decode("ascii")
    else:
        assert isinstance(kind, BodyKind)
        assert charset is None or (charset and charset.isascii())


# --- decoding ------------------------------------------------------------------------------


@pytest.mark.parametrize("charset", [None, "utf-8", "UTF-8", "utf8", "UTF8", "Utf-8",
                                     "unicode-1-1-utf-8", " utf-8 "])
def test_utf8_and_no_charset_decode_lossily(charset: str | None) -> None:
    assert decode_body("Café ☕".encode(), charset) == "Café ☕"
    assert decode_body(b"ok\xff\xfe\xc3(end", charset) == "ok\ufffd\ufffd\ufffd(end"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.sampled_from([None, "utf-8", "UTF8", "unicode-1-1-utf-8"]))
def test_utf8_decodes_exactly_as_the_whatwg_codec_does(body: bytes, charset: str | None) -> None:
    # UTF-8 bodies take bytes.decode directly; the text is the label's codec's, byte for byte.
    # (A UTF-16 byte order mark wins over the label: those bodies are not UTF-8's to decode.)
    import webencodings

    assume(not body.startswith((b"\xff\xfe", b"\xfe\xff")))
    expected = webencodings.UTF8.codec_info.decode(body.removeprefix(b"\xef\xbb\xbf"), "replace")
    assert decode_body(body, charset) == expected[0]


def test_utf8_truncated_multibyte_at_the_end_becomes_one_replacement() -> None:
    assert decode_body("é€".encode()[:-1], None) == "é\ufffd"


def test_latin1_page_keeps_its_accents() -> None:
    assert decode_body("Café".encode("latin-1"), "ISO-8859-1") == "Café"


@pytest.mark.parametrize(
    ("body", "charset", "text"),
    [
        ("Café".encode("cp1252"), "windows-1252", "Café"),
        (b"\x80 \x93quoted\x94", "iso-8859-1", "€ “quoted”"),  # WHATWG: latin1 is windows-1252
        (b"\x80", "latin1", "€"),
        (b"\x80", "us-ascii", "€"),
        (b"\x81\x8d\x8f\x90\x9d", "windows-1252", "\x81\x8d\x8f\x90\x9d"),
        ("日本語".encode("cp932"), "shift_jis", "日本語"),
        ("①".encode("cp932"), "Shift_JIS", "①"),  # NEC extension: cp932, not strict shift_jis
        ("日本語".encode("euc_jp"), "EUC-JP", "日本語"),
        ("한국어".encode("cp949"), "euc-kr", "한국어"),
        ("中文".encode("gbk"), "gb2312", "中文"),
        ("\u20ac\U00020000".encode("gb18030"), "gbk", "\u20ac\U00020000"),
        ("中文".encode("gb18030"), "GB18030", "中文"),
        ("中文".encode("big5"), "big5", "中文"),
        ("Привет".encode("koi8-r"), "koi8-r", "Привет"),
        ("Привет".encode("cp1251"), "windows-1251", "Привет"),
        ("Ελληνικά".encode("iso8859-7"), "iso-8859-7", "Ελληνικά"),
        ("שלום".encode("cp1255"), "windows-1255", "שלום"),
        (b"\xca", "windows-1255", "\u05ba"),
        (b"\xaa\x81", "windows-1253", "\ufffd\x81"),
        (b"\xae\xbe\xc1", "koi8-u", "ўЎа"),  # WHATWG KOI8-U carries KOI8-RU's letters
        (b"\xae\xc1", "koi8-r", "╝а"),
        (b"\xa1\xac\xc1", "iso-8859-6", "\ufffd\u060c\u0621"),  # 0xA1 is unassigned
        (b"\x80\xa5", "iso-8859-3", "\x80\ufffd"),
        (b"\x80\xdb", "macintosh", "Ä€"),
        (b"\x80\xff", "ibm866", "А\xa0"),
        ("hi".encode("utf-16-le"), "utf-16le", "hi"),
        ("hi".encode("utf-16-le"), "utf-16", "hi"),
        ("hi".encode("utf-16-be"), "utf-16be", "hi"),
        (b"h\x00i", "utf-16le", "h\ufffd"),
        (b"\x00\xd8a\x00", "utf-16le", "\ufffda"),
        (b"a\xf8b", "x-user-defined", "a\uf7f8b"),
        (b"anything at all", "iso-2022-kr", "\ufffd"),
        (b"", "hz-gb-2312", ""),
        ("\u3042".encode("iso2022_jp"), "iso-2022-jp", "\u3042"),
        (b"\xa1\xa4", "ISO-8859-16", "Ą€"),
    ],
)
def test_whatwg_labels_decode_through_their_encoding(body: bytes, charset: str, text: str) -> None:
    assert decode_body(body, charset) == text


@pytest.mark.parametrize(
    ("body", "charset", "text"),
    [
        (b"\xef\xbb\xbfCaf\xc3\xa9", None, "Café"),  # UTF-8 BOM is stripped
        (b"\xef\xbb\xbfCaf\xc3\xa9", "iso-8859-1", "Café"),  # and overrides the label
        (b"\xff\xfeh\x00i\x00", "utf-8", "hi"),
        (b"\xfe\xff\x00h\x00i", "windows-1252", "hi"),
        (b"\xef\xbb\xbf", "not-a-charset-but-checked-first", None),
    ],
)
def test_byte_order_mark_wins_over_the_label(body: bytes, charset: str, text: str | None) -> None:
    if text is None:
        with pytest.raises(UnknownCharset):
            decode_body(body, charset)
    else:
        assert decode_body(body, charset) == text


@pytest.mark.parametrize(
    ("charset", "label"),
    [
        ("not-a-charset", "not-a-charset"),
        ("NOT-A-CHARSET", "not-a-charset"),
        ("utf-7", "utf-7"),
        ("UTF-32", "utf-32"),
        ("x-unknown", "x-unknown"),
        ("latin-1", "latin-1"),
        ("", ""),
        ("bogus\u00e9", "bogus\u00e9"),
    ],
)
def test_unknown_label_names_it_lowercased(charset: str, label: str) -> None:
    with pytest.raises(UnknownCharset) as caught:
        decode_body(b"body", charset)
    assert caught.value.label == label


def test_unknown_label_is_refused_even_for_an_empty_body() -> None:
    with pytest.raises(UnknownCharset):
        decode_body(b"", "not-a-charset")


LABELS = ["utf-8", "windows-1252", "shift_jis", "euc-jp", "euc-kr", "gbk", "gb18030", "big5",
          "iso-2022-jp", "utf-16le", "utf-16be", "x-user-defined", "koi8-u", "windows-1255",
          "windows-874", "macintosh", "x-mac-cyrillic", "iso-8859-8-i", "ibm866", "replacement"]


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200), st.one_of(st.none(), st.sampled_from(LABELS), st.text(max_size=12)))
def test_any_body_decodes_or_names_an_unknown_label(body: bytes, charset: str | None) -> None:
    try:
        text = decode_body(body, charset)
    except UnknownCharset as unknown:
        assert charset is not None and unknown.label == charset.lower()
    else:
        text.encode("utf-8")  # never a lone surrogate
