"""Fuzz targets: every parser that reads text a model or a stranger wrote, with its invariants.

Each :class:`Target` bundles three things:

- ``check(value)``: runs the code under test on one input and asserts what must hold for *every*
  input (the only exceptions allowed are the specified ones, carrying a specified message);
- ``strategy``: a Hypothesis strategy for structured inputs (the test suite's smoke run and the
  ``--engine hypothesis`` bench run use it);
- ``from_bytes(data)``: the same kind of input built from raw fuzzer bytes, for atheris
  (coverage-guided, fast enough for millions of inputs on one core).

A check that finds a violation raises ``AssertionError`` (a finding); any other exception that
escapes a check is a finding too. ``bench/fuzz/run.py`` runs them; ``docs/reliability.md``
records the counts.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from runvil import _envelope as env
from runvil._errors import RunError, RunErrorKind, ToolError, ToolErrorKind
from runvil.prompts._document import parse_prompt
from runvil.web._fetch.admission import (
    RedirectRefused,
    TargetUrl,
    UrlRefused,
    admit_redirect,
    admit_url,
)
from runvil.web._fetch.content import (
    BodyKind,
    ContentTypeMissing,
    ContentTypeRefused,
    UnknownCharset,
    classify_content_type,
    decode_body,
)
from runvil.web._fetch.extract import render_html
from runvil.web._search.provider import SearchResult
from runvil.web._search.tool import WebSearch


@dataclass(frozen=True)
class Target:
    name: str
    check: Callable[[Any], None]
    strategy: st.SearchStrategy[Any]
    from_bytes: Callable[[bytes], Any]


# ---------------------------------------------------------------------------------------------
# Shared input builders
# ---------------------------------------------------------------------------------------------


class Bytes:
    """A tiny FuzzedDataProvider: carves typed values out of fuzzer bytes, never failing."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.byte() % len(options)]

    def chunk(self, limit: int = 64) -> bytes:
        n = self.byte() % (limit + 1)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    def text(self, limit: int = 64) -> str:
        """Text that may hold any code point, lone surrogates included."""
        return self.chunk(limit).decode("utf-8", "surrogateescape")

    def rest(self) -> bytes:
        out = self.data[self.pos :]
        self.pos = len(self.data)
        return out


# Pieces that make random text look like the input a parser was written for.
URL_PIECES = (
    "https://", "http://", "HTTPS://", "ftp://", "file:///", "data:,", "javascript:", "//", "/",
    "\\", "@", ":", "user:pass@", ":@", "example.com", "EXAMPLE.com.", "xn--nxasmq6b", "bücher.de",
    "127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]",
    "[64:ff9b::a9fe:a9fe]", "[fe80::1%25eth0]", ":443", ":80", ":8080", ":0", ":65536",
    ":99999999999", "?", "#", "%00", "%2e%2e/", "../", "\t", "\n", "\r", " ", "\x00", "\ud800",
    "%", "%zz", "[", "]", "a" * 300, ".", "..", "\u3002", "\uff0e", "ß", "\u200b",
)

CONTENT_TYPES = (
    "text/html", "text/plain", "application/json", "application/xhtml+xml", "image/svg+xml",
    "application/ld+json", "text/xml", "application/pdf", ";", "charset=", "utf-8", "UTF8",
    "latin1", "shift_jis", "x-user-defined", "replacement", "utf-16le", '"', "\\", " ", "\t",
    "=", ",", "/", "\x00", "\x80", "\xff", "ü", "text/html; charset=\"utf-8\"", "*/*",
)

HTML_PIECES = (
    "<html>", "<head>", "<body>", "<article>", "<div>", "</div>", "<p>", "</p>", "<a href='",
    "'>", "</a>", "<table><tr><td>", "</td></tr></table>", "<pre>", "<code>", "<ul><li>",
    "<ol start='-5'>", "<h1>", "<img src=x alt=\"", "<script>", "</script>", "<style>",
    "<!--", "-->", "<![CDATA[", "]]>", "<svg>", "<math>", "<template>", "<base href='",
    "&amp;", "&lt;", "&#0;", "&#x110000;", "&nbsp;", "\x00", "\ud800", "*", "_", "`", "|",
    "#", "\n", "[", "](", ")", "javascript:alert(1)", "data:text/html,", "<br>", "<hr>",
    "<blockquote>", "<del>", "<sup>", "<frameset>", "<noscript>", "<iframe src=",
)

NONCE_ALPHABET = "0123456789abcdef"


def _pieces_text(b: Bytes, pieces: Sequence[str], count: int = 12) -> str:
    out: list[str] = []
    for _ in range(b.byte() % count + 1):
        if b.byte() % 3 == 0:
            out.append(b.text(24))
        else:
            out.append(b.pick(pieces))
    return "".join(out)


def _pieces_strategy(pieces: Sequence[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=24)), max_size=16).map(
        "".join
    )


# ---------------------------------------------------------------------------------------------
# URL admission (and redirect admission)
# ---------------------------------------------------------------------------------------------

_ADMISSION_REFUSAL = re.compile(
    r"invalid url|scheme not allowed: [^\x00]*|url must not contain userinfo"
    r"|port not allowed: \d+|ip literal host not allowed: [0-9a-f.:]+",
    re.S,
)
_BASE = admit_url("https://example.com/a/b?q=1")


def check_admission(value: tuple[str, str]) -> None:
    raw, location = value
    try:
        target = admit_url(raw)
    except UrlRefused as refusal:
        assert _ADMISSION_REFUSAL.fullmatch(refusal.message), refusal.message
        assert refusal.soft == refusal.message.startswith("scheme not allowed: ")
        target = _BASE
    else:
        _check_target(target)
        # The href that was approved is approved again, unchanged: no second reading differs.
        again = admit_url(target.href)
        assert again == target, (again, target)
    try:
        hop = admit_redirect(target, location, 0, 5)
    except RedirectRefused as refused:
        assert refused.text.startswith(f"redirect from {target.display} to "), refused.text
        reason = refused.text.rsplit(" refused: ", 1)[1]
        assert reason == "refusing https to http downgrade" or _ADMISSION_REFUSAL.fullmatch(
            reason
        ), refused.text
    else:
        _check_target(hop)
    # The cap comes first, whatever the location.
    try:
        admit_redirect(target, location, 5, 5)
    except RedirectRefused as refused:
        assert refused.text.endswith(" refused: exceeded max redirects (5)"), refused.text
    else:
        raise AssertionError("a sixth redirect was admitted")


def _check_target(target: TargetUrl) -> None:
    assert target.scheme == "https"
    assert target.href.startswith("https://"), target.href
    assert "#" not in target.href
    assert target.port in (80, 443)
    assert target.host and target.host == target.host.lower(), target.host
    assert target.href.isascii(), target.href
    assert target.display.startswith(f"https://{target.host_header}/"), target.display
    assert "?" not in target.display and "#" not in target.display
    assert "@" not in target.href.split("/", 3)[2], target.href
    assert target.path_and_query.startswith("/"), target.path_and_query
    assert not any(c in target.href for c in "\x00\t\n\r "), target.href


def _admission_from_bytes(data: bytes) -> tuple[str, str]:
    b = Bytes(data)
    mode = b.byte() % 3
    raw = b.rest().decode("utf-8", "surrogateescape") if mode == 0 else _pieces_text(b, URL_PIECES)
    return raw, _pieces_text(b, URL_PIECES, 6)


ADMISSION = Target(
    "admission",
    check_admission,
    st.tuples(
        st.one_of(st.text(), _pieces_strategy(URL_PIECES)),
        st.one_of(st.text(max_size=40), _pieces_strategy(URL_PIECES)),
    ),
    _admission_from_bytes,
)


# ---------------------------------------------------------------------------------------------
# Content-Type and charset
# ---------------------------------------------------------------------------------------------


def check_content(value: tuple[bytes | None, bytes]) -> None:
    header, body = value
    try:
        kind, charset = classify_content_type(header)
    except ContentTypeMissing:
        return
    except ContentTypeRefused as refused:
        assert isinstance(refused.header, str)
        assert header is not None
        return
    assert isinstance(kind, BodyKind)
    assert charset is None or isinstance(charset, str)
    try:
        text = decode_body(body, charset)
    except UnknownCharset as unknown:
        assert charset is not None and unknown.label.lower() == unknown.label.lower()
        return
    assert isinstance(text, str)
    text.encode("utf-8")  # decoded text never holds a lone surrogate


def _content_from_bytes(data: bytes) -> tuple[bytes | None, bytes]:
    b = Bytes(data)
    if b.byte() % 8 == 0:
        header = None
    else:
        header = _pieces_text(b, CONTENT_TYPES).encode("utf-8", "surrogateescape")
    return header, b.rest()


CONTENT = Target(
    "content",
    check_content,
    st.tuples(
        st.one_of(
            st.none(),
            st.binary(max_size=80),
            _pieces_strategy(CONTENT_TYPES).map(lambda s: s.encode("utf-8", "surrogatepass")),
        ),
        st.binary(max_size=200),
    ),
    _content_from_bytes,
)


# ---------------------------------------------------------------------------------------------
# HTML rendering
# ---------------------------------------------------------------------------------------------


def check_render(value: tuple[str, bool]) -> None:
    html, raw = value
    text, label = render_html(html, "https://example.com/page", raw)
    assert isinstance(text, str)
    assert label in ("readability", "raw-html"), label
    if raw:
        assert label == "raw-html"


def _render_from_bytes(data: bytes) -> tuple[str, bool]:
    b = Bytes(data)
    raw = bool(b.byte() & 1)
    if b.byte() % 4 == 0:
        return b.rest().decode("utf-8", "surrogateescape"), raw
    return _pieces_text(b, HTML_PIECES, 40), raw


RENDER = Target(
    "render",
    check_render,
    st.tuples(st.one_of(st.text(), _pieces_strategy(HTML_PIECES)), st.booleans()),
    _render_from_bytes,
)


# ---------------------------------------------------------------------------------------------
# The envelope
# ---------------------------------------------------------------------------------------------

_LUA_BODY = re.compile(r"\n\n(.*)\n</untrusted_input_[0-9a-f]+>$", re.S)


def check_envelope(value: tuple[str, str]) -> None:
    text, nonce = value
    if not env.is_nonce(nonce):
        try:
            env.envelope(text, nonce)
        except ValueError:
            return
        raise AssertionError(f"a malformed nonce was accepted: {nonce!r}")
    wrapped = env.envelope(text, nonce)
    opening, closing = f"<untrusted_input_{nonce}>\n", f"\n</untrusted_input_{nonce}>"
    assert wrapped.startswith(opening) and wrapped.endswith(closing)
    inner = wrapped[len(opening) : -len(closing)]
    assert env.unwrap(wrapped) == inner
    assert "<" not in inner
    assert nonce not in inner
    for token in env.CONTROL_MARKUP:
        assert token not in inner, token
    # Exactly one envelope: nothing inside can close it or open another.
    assert wrapped.count(f"untrusted_input_{nonce}") == 2
    # The seed's Lua cut of a fetch result returns exactly the escaped body.
    result = f"url: https://example.com/\ntruncated: false\nextraction: plain\n\n{text}"
    match = _LUA_BODY.search(env.envelope(result, nonce))
    assert match is not None
    assert match.group(1) == env.escape(text, nonce)


def _envelope_from_bytes(data: bytes) -> tuple[str, str]:
    b = Bytes(data)
    if b.byte() % 16 == 0:
        nonce = b.chunk(20).decode("latin-1")
    else:
        nonce = "".join(b.pick(NONCE_ALPHABET[: 2 + b.byte() % 15]) for _ in range(16))
    pieces = ("<", "untrusted_input_", "</untrusted_input_", ">", "[INST]", "[/INST]",
              "[TOOL_CALLS]", "[", "]", "\n", nonce, nonce[:8], nonce[8:], "&lt;", "%x")
    return _pieces_text(b, pieces, 24), nonce


ENVELOPE = Target(
    "envelope",
    check_envelope,
    st.one_of(
        st.tuples(st.text(), st.text(NONCE_ALPHABET, min_size=16, max_size=16)),
        st.text("ab", min_size=16, max_size=16).flatmap(
            lambda n: st.tuples(
                st.lists(st.sampled_from([n, n[:8], n[8:], "<", "[INST]", "[", "a", "b"]))
                .map("".join),
                st.just(n),
            )
        ),
        st.tuples(st.text(max_size=30), st.text(max_size=20)),
    ),
    _envelope_from_bytes,
)


# ---------------------------------------------------------------------------------------------
# Search arguments, through WebSearch.call with a provider that records what reached it
# ---------------------------------------------------------------------------------------------

SEARCH_KEYS = (
    "query", "count", "freshness", "country", "search_lang", "safesearch", "include_domains",
    "exclude_domains", "Query", "query ", "", "api_key", "__proto__",
)
SEARCH_SCALARS: tuple[Any, ...] = (
    None, True, False, 0, 1, 5, 20, 21, -1, 1.0, 1.5, 2**64, float("nan"), "", " ", "pd", "pw",
    "pm", "py", "PD", "off", "moderate", "strict", "us", "en", "example.com", "a/b", "a b",
    "\x00", "\u3000", "x" * 129, "q" * 401, [], {}, ["example.com"], ["", "x"], [1],
    ["example.com"] * 21,
)


class RecordingProvider:
    """A provider that answers every search with one fixed row and counts its calls."""

    name = "recording"
    endpoints: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.calls = 0

    async def search(self, request: Any) -> list[Any]:
        self.calls += 1
        return [SearchResult(title="t", url="https://example.com/", description="d")]


_LOOP: asyncio.AbstractEventLoop | None = None


def _loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    if _LOOP is None:
        _LOOP = asyncio.new_event_loop()
    return _LOOP


def check_search(arguments: Any) -> None:
    provider = RecordingProvider()
    search = WebSearch(provider, memo_size=0)
    try:
        text = _loop().run_until_complete(search.call(arguments))
    except ToolError as err:
        assert err.kind is ToolErrorKind.InvalidArguments, (err.kind, err.message)
        assert err.message.startswith("web_search: "), err.message
        assert provider.calls == 0
        return
    assert provider.calls == 1
    out = json.loads(text)
    assert set(out) == {"query", "results"}
    assert out["results"] == [{"title": "t", "url": "https://example.com/", "description": "d"}]


def _json_value(b: Bytes, depth: int = 0) -> Any:
    choice = b.byte() % 7
    if choice < 3 or depth > 3:
        return b.pick(SEARCH_SCALARS)
    if choice == 3:
        return b.text(40)
    if choice == 4:
        return [_json_value(b, depth + 1) for _ in range(b.byte() % 4)]
    if choice == 5:
        return {b.pick(SEARCH_KEYS): _json_value(b, depth + 1) for _ in range(b.byte() % 4)}
    return b.byte() - 128


def _search_from_bytes(data: bytes) -> Any:
    b = Bytes(data)
    mode = b.byte() % 8
    if mode == 0:
        return b.rest().decode("utf-8", "surrogateescape")  # JSON text (or not)
    if mode == 1:
        return _json_value(b)
    args = {"query": b.text(60)} if mode < 6 else {}
    for _ in range(b.byte() % 5):
        key = b.pick(SEARCH_KEYS)
        args[key] = _json_value(b) if b.byte() % 2 else b.text(30)
    return args


_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
    st.sampled_from(SEARCH_SCALARS),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)

SEARCH = Target(
    "search",
    check_search,
    st.one_of(
        st.dictionaries(st.sampled_from(SEARCH_KEYS), _json, max_size=6),
        st.fixed_dictionaries({"query": st.text(max_size=420)}, optional={
            k: _json for k in SEARCH_KEYS[1:8]
        }),
        _json,
        st.text(max_size=80),
    ),
    _search_from_bytes,
)


# ---------------------------------------------------------------------------------------------
# Prompt files
# ---------------------------------------------------------------------------------------------

PROMPT_PIECES = (
    "---\n", "name: p\n", "description: d\n", "runvil: 0\n", "promptforge: 0\n", "uses: [web]\n",
    "uses:\n  - web\n", "plugins: [web]\n", "tools:\n  f: promptforge/web/fetch\n",
    "models:\n  writer: {}\n", "models:\n  w: {temperature: hot}\n", "# Title\n", "## Section\n",
    "## \n", "```lua\n", "```\n", "````\n", "return 1\n", "~~~\n", "\n", ": \n", "- \n",
    "&anchor ", "*anchor", "!!python/object:os.system ", "{", "}", "[", "]", "'", '"', "\t",
    "\x00", "\ud800", "\ufeff", "\r\n", "key: " + "x" * 200 + "\n",
)


def check_prompt(text: str) -> None:
    try:
        parse_prompt(text, source="fuzz.md")
    except RunError as err:
        assert err.kind is RunErrorKind.Parse, (err.kind, err.text)
        assert err.text.startswith("fuzz.md"), err.text
        assert "\n" not in err.text or len(err.text) < 2000


def _prompt_from_bytes(data: bytes) -> str:
    b = Bytes(data)
    if b.byte() % 6 == 0:
        return b.rest().decode("utf-8", "surrogateescape")
    return _pieces_text(b, PROMPT_PIECES, 30)


PROMPT = Target(
    "prompt",
    check_prompt,
    st.one_of(st.text(), _pieces_strategy(PROMPT_PIECES)),
    _prompt_from_bytes,
)


TARGETS: dict[str, Target] = {
    t.name: t for t in (ADMISSION, SEARCH, CONTENT, RENDER, ENVELOPE, PROMPT)
}
