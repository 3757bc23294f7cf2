"""One hop: send the GET, judge the response head, read the body under the byte cap.

The order of the checks is what makes a refused response cheap: status, then content type, then
the declared length, then the content coding are all judged on the head alone, so a response
that will be refused costs no body download. Only an accepted head starts the body read, which
counts *decoded* bytes as they stream in, so a small compressed body cannot inflate past the cap.

A hop that is not followed any further always leaves its connection closed; only a body read to
its end returns the connection to the pool. The request goes through the one egress client
(:mod:`runvil._net.client`): it resolves the hop's host, judges the answers by the hop's rule,
dials only those, checks the codings and reads the body; :func:`fetch_client` gives it the
fetch's own headers and connect timeout, and :func:`exchange` maps its typed errors to the
fetch's texts.
"""

from __future__ import annotations

import functools
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, NamedTuple

from aiohttp import hdrs
from yarl import URL

from runvil._net import (
    NAMED_PRIVATE,
    PUBLIC_WEB,
    DnsError,
    Network,
    NoAllowedAddress,
    blocked_range,
)
from runvil._net.client import EgressClient, Head, Judge, ReadPlan, Response
from runvil._net.decoding import ACCEPT_ENCODING, UnsupportedEncoding
from runvil._net.errors import (
    BodyTooLarge,
    BodyUnreadable,
    CertificateFailed,
    RequestFailed,
    TimedOut,
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
from runvil.web._fetch.outcome import AddressRefused, CertificateRefused
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

    __slots__ = ("expired", "finished", "policy", "reading_body", "target")

    def __init__(self, target: TargetUrl) -> None:
        self.target = target
        self.reading_body = False
        self.finished = False
        """The network part is over: the deadline no longer applies."""
        self.expired = False
        """Set by the caller's deadline just before it cancels the fetch."""
        self.policy: FetchPolicy | None = None
        """The policy of the hop in flight (set by :func:`exchange`, read by :meth:`__call__`)."""

    def __call__(self, head: Head) -> ReadPlan:
        """The hop's verdict on its response head (:func:`_judge`). The record itself is the
        judge the client is handed: a bound method would be one more object per hop, alive
        while the hop waits for its answer (docs/benchmarks.md, "Python's collector")."""
        policy = self.policy
        assert policy is not None
        return _judge(head, self.target, policy, self)


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


def fetch_client(
    network: Network, policy: FetchPolicy, proxies: Proxies | None = None
) -> EgressClient:
    """The fetch's egress client (:mod:`runvil._net.client`): one guarded keep-alive pool, made
    inside the running event loop on first use. Every request carries ``User-Agent``,
    ``Accept`` and ``Accept-Encoding``, and nothing else of the client's; ``connect_timeout``
    covers TCP + TLS on each hop (and the proxy's tunnel, with ``proxies``), and the
    whole-request limit is a timer on the fetch task."""
    return EgressClient(
        network,
        headers={
            hdrs.ACCEPT: ACCEPT,
            hdrs.ACCEPT_ENCODING: ACCEPT_ENCODING,
            hdrs.USER_AGENT: policy.user_agent,
        },
        connect_timeout=policy.connect_timeout,
        proxies=proxies,
    )


class _PagePlan(ReadPlan):
    """The read plan of an accepted head, with what the head said about the body."""

    __slots__ = ("charset", "kind", "sniffed_type")

    def __init__(
        self, limit: int, kind: BodyKind, charset: str | None, sniffed_type: str | None
    ) -> None:
        # The base's four fields set here: one call fewer per hop.
        self.limit = limit
        self.keep_prefix = kind is BodyKind.FLAT
        self.keep_unreadable = False
        self.read = True
        self.kind = kind
        self.charset = charset
        self.sniffed_type = sniffed_type


class _RedirectPlan(ReadPlan):
    """A redirect's head: its body is not read."""

    __slots__ = ("location",)

    def __init__(self, location: bytes) -> None:
        super().__init__(0, read=False)
        self.location = location


async def exchange(
    client: EgressClient, target: TargetUrl, policy: FetchPolicy, progress: Progress
) -> Page | Redirect:
    """Run one hop to ``target``: its host resolved and judged again (the public-web rule, or
    the named-private one for a host the operator listed), the request sent over a connection
    that permit approves, the head judged, the body read under the byte cap.

    Returns the page or the redirect; raises :class:`~runvil._errors.ToolError` for a host with
    no allowed address, and a :class:`~runvil.web._fetch.failures.SoftFailure` for every other
    outcome.
    """
    progress.policy = policy
    try:
        response = await request_target(client, target, progress)
    except DnsError:
        raise failures.dns_failed(target.host) from None
    except NoAllowedAddress as refused:
        raise AddressRefused(
            failures.no_allowed_address(target.host),
            target.host,
            tuple((answer, blocked_range(answer) or "") for answer in refused.answers),
        ) from None
    except TimedOut:
        raise failures.timed_out(target.display) from None
    except ProxyRefused:
        raise failures.proxy_refused(target.href) from None
    except CertificateFailed as failed:
        url = _request_url(target)
        certificate = CertificateRefused(
            url.raw_host or target.host, url.port, failed.reason, failed.verify_code
        )
        raise failures.network_error(target.href, type(failed).__name__, certificate) from None
    except RequestFailed as failed:
        raise failures.network_error(target.href, type(failed).__name__) from None
    except BodyTooLarge:
        raise failures.size_cap(target.display, policy.max_bytes) from None
    except (BodyUnreadable, UnsupportedEncoding):
        raise failures.body_unreadable(target.display) from None
    plan = response.plan
    if isinstance(plan, _RedirectPlan):
        return Redirect(plan.location.decode("utf-8", "replace"))
    assert isinstance(plan, _PagePlan) and response.body is not None
    progress.reading_body = False
    data = response.body
    if plan.sniffed_type is not None and not data.startswith(PDF_SIGNATURE):
        raise failures.content_type_refused(plan.sniffed_type, target.display)
    return Page(
        target=target, kind=plan.kind, charset=plan.charset, body=data, cut_at_cap=response.cut
    )


def _judge(head: Head, target: TargetUrl, policy: FetchPolicy, progress: Progress) -> ReadPlan:
    """The head's verdict, in the order that makes a refusal cheap: status, content type,
    declared length (the client checks it, then the codings, before any body byte is read)."""
    content_type, location = _fields(head.raw_headers)
    status = head.status
    if status in REDIRECT_STATUSES and location is not None:
        return _RedirectPlan(location)
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
    progress.reading_body = True
    return _PagePlan(policy.max_bytes, kind, charset, sniffed_type)


#: Content-Type values repeat across responses (``text/html; charset=utf-8``), and the WHATWG
#: MIME parse is pure, so accepted values are remembered (refusals raise and are not cached).
_classify = functools.lru_cache(maxsize=512)(classify_content_type)


def request_target(
    client: EgressClient, target: TargetUrl, judge: Judge
) -> Coroutine[Any, Any, Response]:
    """The one guarded request for an admitted ``target`` (a page's hop, or a browser's
    request): the address rule its admission chose, and its own Host header only where it
    differs from the URL's. aiohttp derives Host from the URL, and that is the WHATWG host
    except for a trailing dot (which yarl drops): pass it only then, since per-request headers
    cost a merge."""
    url = _request_url(target)
    headers = None
    if url.host_port_subcomponent != target.host_header:
        headers = {"Host": target.host_header}
    return client.request(
        NAMED_PRIVATE if target.private else PUBLIC_WEB,
        url,
        judge,
        headers=headers,
        host=target.host,
        port=target.port,
    )


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


#: The lengths of the two field names :func:`_fields` looks for.
_FIELD_NAME_LENGTHS = frozenset((len(b"content-type"), len(b"location")))


def _fields(raw: RawHeaders) -> tuple[bytes | None, bytes | None]:
    """Content-Type and Location from the raw head, in one pass.

    Repeated Content-Type lines are combined with ``", "``, as HTTP defines a repeated field;
    of several Location lines the first counts.
    """
    content_type: bytes | None = None
    location: bytes | None = None
    for key, value in raw:
        if len(key) not in _FIELD_NAME_LENGTHS:
            continue  # most lines (Date, Server, ETag, ...): no lowercased copy, no comparisons
        name = key.lower()
        if name == b"content-type":
            content_type = value if content_type is None else content_type + b", " + value
        elif name == b"location" and location is None:
            location = value
    return content_type, location
