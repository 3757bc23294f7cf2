"""One hop: send the GET, judge the response head, read the body under the byte cap.

The order of the checks is what makes a refused response cheap: status, then content type, then
the declared length, then the content coding are all judged on the head alone, so a response
that will be refused costs no body download. Only an accepted head starts the body read, which
counts *decoded* bytes as they stream in, so a small compressed body cannot inflate past the cap.

A hop that is not followed any further always leaves its connection closed; only a body read to
its end returns the connection to the pool. The connection itself is the shared guarded egress's
(:mod:`runvil._net.connector`, under the hop's permit); :func:`open_fetch_session` gives it the
fetch's own headers and connect timeout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import aiohttp
from aiohttp import hdrs
from yarl import URL

from runvil._net import DialPermit, DialRefused, Network
from runvil._net.body import BodyBuffer, read_decoded
from runvil._net.connector import open_session, send
from runvil._net.decoding import (
    ACCEPT_ENCODING,
    BodyDecodeError,
    BodyDecoder,
    UnsupportedEncoding,
    make_decoder,
)
from runvil._net.proxy import Proxies, ProxyRefused
from runvil.web._fetch import failures
from runvil.web._fetch.admission import TargetUrl
from runvil.web._fetch.content import (
    PDF_SIGNATURE,
    BodyKind,
    ContentTypeMissing,
    ContentTypeRefused,
    classify_content_type,
    pdf_admission,
)
from runvil.web._fetch.policy import FetchPolicy

#: Statuses that are followed when they carry a ``Location``; any other 3xx is a plain status.
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
#: What the fetch can turn into text, best first; anything is still accepted and judged later.
ACCEPT = (
    "text/html,application/xhtml+xml,application/json;q=0.9,application/xml;q=0.9,"
    "text/*;q=0.8,*/*;q=0.1"
)

RawHeaders = tuple[tuple[bytes, bytes], ...]


class Progress:
    """Where a fetch is, so a deadline that fires anywhere can name the right URL and text.

    A plain slotted class: one is made per fetch, and a dataclass with a ``__dict__`` costs an
    extra object that lives as long as the fetch.
    """

    __slots__ = ("expired", "finished", "reading_body", "target")

    def __init__(self, target: TargetUrl) -> None:
        self.target = target
        self.reading_body = False
        self.finished = False
        """The network part is over: the deadline no longer applies."""
        self.expired = False
        """Set by the caller's deadline just before it cancels the fetch."""


@dataclass(frozen=True)
class Redirect:
    """The hop answered with a redirect to ``location`` (raw header text, not yet resolved)."""

    location: str


class Page(NamedTuple):
    """A body that passed every check, ready to be decoded and rendered (a named tuple: one is
    made per fetch, and a frozen dataclass costs twice as much to build)."""

    target: TargetUrl
    kind: BodyKind
    charset: str | None
    body: bytes
    cut_at_cap: bool = False
    """True when a flat-text body was longer than the byte cap and was read only up to it."""


def open_fetch_session(
    network: Network, policy: FetchPolicy, proxies: Proxies | None = None
) -> aiohttp.ClientSession:
    """The fetch's guarded session (see :mod:`runvil._net.connector`); call inside the running
    event loop. Every request carries ``User-Agent``, ``Accept`` and ``Accept-Encoding``, and
    nothing else of the session's; ``connect_timeout`` covers TCP + TLS on each hop (and the
    proxy's tunnel, with ``proxies``), and the whole-request limit is a timer on the fetch
    task."""
    return open_session(
        network.ssl_context,
        headers={
            hdrs.ACCEPT: ACCEPT,
            hdrs.ACCEPT_ENCODING: ACCEPT_ENCODING,
            hdrs.USER_AGENT: policy.user_agent,
        },
        connect_timeout=policy.connect_timeout,
        proxies=proxies,
    )


async def exchange(
    session: aiohttp.ClientSession,
    target: TargetUrl,
    permit: DialPermit,
    policy: FetchPolicy,
    progress: Progress,
) -> Page | Redirect:
    """Run one hop to ``target`` over a connection ``permit`` approves.

    Returns the page or the redirect; every other outcome raises a
    :class:`~runvil.web._fetch.failures.SoftFailure`.
    """
    try:
        url = _request_url(target)
        # aiohttp derives Host from the URL, and that is the WHATWG host except for a trailing
        # dot (which yarl drops): pass it only then, since per-request headers cost a merge.
        headers = None
        if url.host_port_subcomponent != target.host_header:
            headers = {"Host": target.host_header}
        response = await send(session, url, headers, permit=permit)
    except aiohttp.ServerTimeoutError:
        raise failures.timed_out(target.display) from None
    except ProxyRefused:
        raise failures.proxy_refused(target.href) from None
    except (aiohttp.ClientError, OSError, DialRefused, ValueError):
        raise failures.network_error(target.href) from None
    try:
        return await _judge(response, target, policy, progress)
    finally:
        response.close()  # no-op after a complete read released the connection to the pool


async def _judge(
    response: aiohttp.ClientResponse, target: TargetUrl, policy: FetchPolicy, progress: Progress
) -> Page | Redirect:
    content_type, coding, transfer, location = _fields(response.raw_headers)
    status = response.status
    if status in REDIRECT_STATUSES and location is not None:
        if response.content.at_eof():
            response.release()  # an empty redirect body: keep the connection for the next hop
        return Redirect(location.decode("utf-8", "replace"))
    if not 200 <= status < 300:
        raise failures.http_status(target.display, status)

    sniffed_type: str | None = None
    try:
        kind, charset = _classify(content_type)
    except ContentTypeMissing:
        raise failures.no_content_type(target.display) from None
    except ContentTypeRefused as refused:
        # A PDF is refused too, unless the policy reads PDFs (content.pdf_admission).
        pdf = pdf_admission(refused.header) if policy.pdf else None
        if pdf is None:
            raise failures.content_type_refused(refused.header, target.display) from None
        kind, charset = BodyKind.PDF, None
        if pdf == "sniff":
            sniffed_type = refused.header

    declared = response.content_length
    if kind is not BodyKind.FLAT and declared is not None and declared > policy.max_bytes:
        raise failures.size_cap(target.display, policy.max_bytes)

    if transfer is not None and transfer.strip(b" \t").lower() != b"chunked":
        # aiohttp undoes only the chunked transfer coding; anything else would reach us still
        # encoded (and, per RFC 9112, delimited by the close), so it cannot be read as the body.
        raise failures.body_unreadable(target.display)

    decoder: BodyDecoder | None = None
    if coding is not None:
        try:
            decoder = make_decoder(coding.decode("latin-1"))
        except UnsupportedEncoding:
            raise failures.body_unreadable(target.display) from None

    progress.reading_body = True
    body = BodyBuffer(limit=policy.max_bytes, keep_prefix=kind is BodyKind.FLAT)
    try:
        complete = await read_decoded(response, decoder, body)
    except (aiohttp.ClientError, OSError, BodyDecodeError):
        raise failures.body_unreadable(target.display) from None
    if not complete and not body.cut:
        raise failures.size_cap(target.display, policy.max_bytes)
    progress.reading_body = False
    if complete:
        response.release()
    data = body.joined()
    if sniffed_type is not None and not data.startswith(PDF_SIGNATURE):
        raise failures.content_type_refused(sniffed_type, target.display)
    return Page(target=target, kind=kind, charset=charset, body=data, cut_at_cap=body.cut)


#: Content-Type values repeat across responses (``text/html; charset=utf-8``), and the WHATWG
#: MIME parse is pure, so accepted values are remembered (refusals raise and are not cached).
_classify = functools.lru_cache(maxsize=512)(classify_content_type)


def _request_url(target: TargetUrl) -> URL:
    """The yarl URL whose request line is exactly ``target.path_and_query``.

    The whole request target goes into ``path`` with ``encoded=True``, so yarl neither re-quotes
    it nor normalises it: not even an empty query (``/?``), which ``URL(href)`` would drop. What
    the admission checks approved is, byte for byte, what the server receives.
    """
    return URL.build(
        scheme=target.scheme,
        host=target.host,
        port=target.port,
        path=target.path_and_query,
        encoded=True,
    )


#: The lengths of the four field names :func:`_fields` looks for.
_FIELD_NAME_LENGTHS = frozenset(
    len(name) for name in (b"content-type", b"content-encoding", b"transfer-encoding", b"location")
)


def _fields(
    raw: RawHeaders,
) -> tuple[bytes | None, bytes | None, bytes | None, bytes | None]:
    """Content-Type, Content-Encoding, Transfer-Encoding and Location from the raw head, in one
    pass.

    Repeated Content-Type, Content-Encoding or Transfer-Encoding lines are combined with
    ``", "``, as HTTP defines a repeated field (so two codings on two lines are a stack); of
    several Location lines the first counts.
    """
    content_type: bytes | None = None
    coding: bytes | None = None
    transfer: bytes | None = None
    location: bytes | None = None
    for key, value in raw:
        if len(key) not in _FIELD_NAME_LENGTHS:
            continue  # most lines (Date, Server, ETag, ...): no lowercased copy, no comparisons
        name = key.lower()
        if name == b"content-type":
            content_type = value if content_type is None else content_type + b", " + value
        elif name == b"content-encoding":
            coding = value if coding is None else coding + b", " + value
        elif name == b"transfer-encoding":
            transfer = value if transfer is None else transfer + b", " + value
        elif name == b"location" and location is None:
            location = value
    return content_type, coding, transfer, location
