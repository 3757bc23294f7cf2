"""Content types and charsets: which responses fetch turns into text, and how it decodes them.

The Content-Type header alone decides (seed 001, "Content types and charsets"): fetch never sniffs
a body and never reads a ``<meta charset>``. The header is parsed with the WHATWG MIME Sniffing
standard's "parse a MIME type" algorithm, the one browsers use, so ``Text/HTML ; Charset="UTF-8"``
means what a browser would take it to mean. Charset labels are resolved with the WHATWG Encoding
standard's label table (the ``webencodings`` package), so ``latin1``, ``ISO-8859-1`` and
``us-ascii`` all decode as windows-1252, exactly as in a browser.

Classification happens before any body byte is read; decoding happens after the whole (capped)
body is in memory, which is why the two are separate functions.
"""

from __future__ import annotations

import codecs
import functools
import importlib
from enum import Enum

import webencodings
from webencodings.labels import LABELS

__all__ = [
    "PDF_SIGNATURE",
    "BodyKind",
    "ContentTypeMissing",
    "ContentTypeRefused",
    "UnknownCharset",
    "classify_content_type",
    "decode_body",
    "pdf_admission",
]


class BodyKind(Enum):
    """How an accepted body is handled."""

    HTML = "html"
    """Rendered to markdown (readability or the whole page)."""
    STRUCTURED = "structured"
    """JSON or XML: returned verbatim, refused whole when over the byte cap."""
    FLAT = "flat"
    """Any other ``text/*``: returned verbatim, cut at the byte cap and flagged truncated."""
    PDF = "pdf"
    """A PDF, converted to text (only under ``FetchPolicy(pdf=True)``; refused whole over the
    byte cap, like HTML)."""


class ContentTypeRefused(Exception):
    """The declared type cannot be returned as text, or the header does not parse as a MIME
    type. ``header`` is the Content-Type value verbatim, for the soft refusal text."""

    def __init__(self, header: str) -> None:
        super().__init__(header)
        self.header = header


class ContentTypeMissing(Exception):
    """The response declared no content type: no header, an empty one, or one holding a
    non-ASCII byte (which the spec counts as missing)."""


class UnknownCharset(Exception):
    """The declared charset is not a WHATWG Encoding label. ``label`` is the declared label,
    lowercased, for the soft refusal text."""

    def __init__(self, label: str) -> None:
        super().__init__(label)
        self.label = label


def classify_content_type(raw: bytes | None) -> tuple[BodyKind, str | None]:
    """Classify a raw Content-Type header value; return the kind and the declared charset.

    The charset is returned as declared (unquoted, original case), or None when the header has
    no usable charset parameter. Raises :class:`ContentTypeMissing` or
    :class:`ContentTypeRefused`; never anything else, whatever the bytes.
    """
    if raw is None:
        raise ContentTypeMissing()
    try:
        header = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ContentTypeMissing() from None
    if not header.strip(_HTTP_WHITESPACE):
        raise ContentTypeMissing()
    parsed = _parse_mime_type(header)
    if parsed is None:
        raise ContentTypeRefused(header)
    type_, subtype, parameters = parsed
    kind = _kind(type_, subtype)
    if kind is None:
        raise ContentTypeRefused(header)
    charset = parameters.get("charset")
    if charset is not None and not charset.strip(_ASCII_WHITESPACE):
        charset = None  # charset="" declares nothing; decode as if it were absent
    return kind, charset


def decode_body(body: bytes, charset: str | None) -> str:
    """Decode a body with its declared charset, the way the WHATWG Encoding standard's
    "decode" does: a byte order mark wins over the label, and malformed bytes become U+FFFD.

    No charset means UTF-8. Every WHATWG label decodes; any other label raises
    :class:`UnknownCharset`, the only way decoding can fail.
    """
    encoding = webencodings.UTF8 if charset is None else _lookup(charset)
    if body.startswith(b"\xef\xbb\xbf"):
        encoding, body = webencodings.UTF8, body[3:]
    elif body.startswith(b"\xff\xfe"):
        encoding, body = _UTF16LE, body[2:]
    elif body.startswith(b"\xfe\xff"):
        encoding, body = _UTF16BE, body[2:]
    if encoding is webencodings.UTF8:
        # Most bodies: the same decoder as below, without the codec registry's Python wrapper.
        return body.decode("utf-8", "replace")
    name: str = encoding.name
    if name == "replacement":
        # The label names an encoding that is unsafe to decode (ISO-2022-KR, HZ, ...): the whole
        # stream decodes to a single U+FFFD, as the Encoding standard's replacement decoder does.
        return "\ufffd" if body else ""
    table = _SINGLE_BYTE_TABLES.get(name)
    if table is not None:
        single_byte_text: str = codecs.charmap_decode(body, "strict", table)[0]
        return single_byte_text
    codec_info: codecs.CodecInfo = _CODEC_OVERRIDES.get(name, encoding.codec_info)
    text: str = codec_info.decode(body, "replace")[0]
    return text


@functools.lru_cache(maxsize=256)
def _lookup(label: str) -> webencodings.Encoding:
    """The WHATWG encoding a charset label names. Remembered per label (a pure function, and
    every decoded body asks it); an unknown label raises, and a raise is never remembered."""
    if not label.isascii():
        raise UnknownCharset(label.lower())
    encoding = webencodings.lookup(label)
    if encoding is None:
        raise UnknownCharset(label.lower())
    return encoding


_UTF16LE = _lookup("utf-16le")
_UTF16BE = _lookup("utf-16be")

#: WHATWG's gbk decoder *is* its gb18030 decoder (four-byte sequences included); Python's gbk
#: codec would turn those into replacement characters.
_CODEC_OVERRIDES: dict[str, codecs.CodecInfo] = {"gbk": codecs.lookup("gb18030")}

def _single_byte_table(name: str) -> str | None:
    """A complete decoding table for a WHATWG single-byte encoding, or None if Python's codec
    is not table-driven (a multi-byte encoding).

    Python's table is completed the way WHATWG's index is: in the Windows code pages the
    unassigned bytes 0x80-0x9F decode to the C1 control of the same value (as Windows does),
    :data:`_WHATWG_EXTRA` adds the characters WHATWG assigns and Python lacks, and every byte
    still unassigned decodes to U+FFFD. With no undefined entry left, decoding never calls an
    error handler and stays in C: per-byte error handling took seconds on a hostile 8 MiB body.
    """
    codec_info = webencodings.lookup(name)
    if codec_info is None:  # pragma: no cover - every name passed here is a WHATWG name
        return None
    try:
        module_name = codecs.lookup(codec_info.codec_info.name).name.replace("-", "_")
        module = importlib.import_module(f"encodings.{module_name}")
    except (LookupError, ImportError):  # webencodings' own codecs (replacement, x-user-defined)
        return None
    decoding_table = getattr(module, "decoding_table", None)
    if not isinstance(decoding_table, str) or len(decoding_table) != 256:
        return None
    table = list(decoding_table)
    if name.startswith("windows-"):
        for byte in range(0x80, 0xA0):
            if table[byte] == "\ufffe":
                table[byte] = chr(byte)
    for byte, char in _WHATWG_EXTRA.get(name, {}).items():
        table[byte] = char
    return "".join(table).replace("\ufffe", "\ufffd")


#: Where WHATWG's single-byte indexes assign a character that Python's codec does not (or maps
#: to something else): windows-1255 0xCA, and KOI8-U's Belarusian letters (KOI8-RU).
_WHATWG_EXTRA: dict[str, dict[int, str]] = {
    "windows-1255": {0xCA: "\u05ba"},
    "koi8-u": {0xAE: "\u045e", 0xBE: "\u040e"},
}

#: Complete tables for every single-byte WHATWG encoding Python implements with a table.
_SINGLE_BYTE_TABLES: dict[str, str] = {
    name: table
    for name in sorted(set(LABELS.values()))
    if (table := _single_byte_table(name)) is not None
}


# --- PDFs (runvil's extension, docs/fetch.md "Reading more") ---------------------------------

#: How a PDF file starts.
PDF_SIGNATURE = b"%PDF-"


def pdf_admission(header: str) -> str | None:
    """How a Content-Type the seed refuses may still be a PDF, under ``FetchPolicy(pdf=True)``:
    ``"pdf"`` for ``application/pdf``; ``"sniff"`` for ``application/octet-stream``, which is a
    PDF only if its body starts with :data:`PDF_SIGNATURE`; None for anything else."""
    parsed = _parse_mime_type(header)
    if parsed is None or parsed[0] != "application":
        return None
    if parsed[1] == "pdf":
        return "pdf"
    if parsed[1] == "octet-stream":
        return "sniff"
    return None


# --- WHATWG MIME Sniffing, "parse a MIME type" ---------------------------------------------

_HTTP_WHITESPACE = "\t\n\r "
_ASCII_WHITESPACE = "\t\n\f\r "
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_QUOTED_STRING_TOKEN = frozenset("\t" + "".join(chr(c) for c in range(0x20, 0x7F)) +
                                 "".join(chr(c) for c in range(0x80, 0x100)))


def _parse_mime_type(text: str) -> tuple[str, str, dict[str, str]] | None:
    """The WHATWG algorithm: None on failure, else (type, subtype, parameters) with type,
    subtype and parameter names lowercased and the first occurrence of a parameter kept."""
    text = text.strip(_HTTP_WHITESPACE)
    slash = text.find("/")
    if slash <= 0:
        return None
    type_ = text[:slash]
    semicolon = text.find(";", slash + 1)
    end = len(text) if semicolon < 0 else semicolon
    subtype = text[slash + 1 : end].rstrip(_HTTP_WHITESPACE)
    if not _is_token(type_) or not subtype or not _is_token(subtype):
        return None
    parameters: dict[str, str] = {}
    position = end
    while position < len(text):
        position += 1  # past ";"
        while position < len(text) and text[position] in _HTTP_WHITESPACE:
            position += 1
        start = position
        while position < len(text) and text[position] not in ";=":
            position += 1
        name = text[start:position].lower()
        if position < len(text):
            if text[position] == ";":
                continue
            position += 1  # past "="
        if position >= len(text):
            break
        if text[position] == '"':
            value, position = _collect_quoted_string(text, position)
            while position < len(text) and text[position] != ";":
                position += 1
        else:
            start = position
            while position < len(text) and text[position] != ";":
                position += 1
            value = text[start:position].rstrip(_HTTP_WHITESPACE)
            if not value:
                continue
        if (
            name
            and _is_token(name)
            and all(char in _QUOTED_STRING_TOKEN for char in value)
            and name not in parameters
        ):
            parameters[name] = value
    return type_.lower(), subtype.lower(), parameters


def _collect_quoted_string(text: str, position: int) -> tuple[str, int]:
    """Collect an HTTP quoted string starting at the opening quote (extract-value mode)."""
    value: list[str] = []
    position += 1
    while True:
        start = position
        while position < len(text) and text[position] not in '"\\':
            position += 1
        value.append(text[start:position])
        if position >= len(text):
            break
        quote_or_backslash = text[position]
        position += 1
        if quote_or_backslash == "\\":
            if position >= len(text):
                value.append("\\")
                break
            value.append(text[position])
            position += 1
        else:
            break
    return "".join(value), position


def _is_token(text: str) -> bool:
    return all(char in _TOKEN for char in text)


def _kind(type_: str, subtype: str) -> BodyKind | None:
    if (type_, subtype) in {("text", "html"), ("application", "xhtml+xml")}:
        return BodyKind.HTML
    structured = subtype in {"json", "xml"} or subtype.endswith(("+json", "+xml"))
    if type_ in {"application", "text"} and structured:
        return BodyKind.STRUCTURED
    if type_ == "text":
        return BodyKind.FLAT
    return None
