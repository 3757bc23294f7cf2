"""One request of a page, answered through the fetch's own guard.

A page's script, stylesheet, frame, ``fetch()`` or XHR is fetched exactly as ``web_fetch``
fetches a page, through the same egress client (:mod:`runvil._net.client`, the fetch's own,
with its headers, connect timeout, proxy and keep-alive pool): the URL is admitted by
:func:`~runvil.web._fetch.admission.admit_url` (scheme, userinfo, port, IP literal, the
operator's ``private_hosts`` and domain lists), its host resolved through the ``Network`` seam
and judged by the hop's address rule, the connection pinned to the approved addresses, every
redirect admitted again by :func:`~runvil.web._fetch.admission.admit_redirect` (cap, downgrade,
re-admission) and resolved and judged again, and the body read under a byte cap through the
bounded decoders. What differs from a page fetch is only the read plan: any content type is
accepted (a script is ``application/javascript``), since the browser, not the model, reads it,
and the cap is the request's own (what is left of the page's budget).

Anything refused is ``None``: the browser sees a failed request, and nothing is ever retried
outside the guard.
"""

from __future__ import annotations

from typing import NamedTuple

from runvil._net import DnsError, NoAllowedAddress
from runvil._net.client import EgressClient, Head, ReadPlan
from runvil._net.decoding import UnsupportedEncoding
from runvil._net.errors import BodyTooLarge, NetworkError
from runvil._net.proxy import ProxyRefused
from runvil.web._fetch.admission import RedirectRefused, UrlRefused, admit_redirect, admit_url
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import REDIRECT_STATUSES, request_target
from runvil.web._fetch.policy import FetchPolicy

__all__ = ["Resource", "guarded_get"]

#: A redirect's head: its body is not read (the connection is kept only when it is over).
_REDIRECT = ReadPlan(0, read=False)

#: Response fields the browser is told (the body is already decoded; cookies are never kept).
PASSED_FIELDS = frozenset(
    {
        "content-type",
        "access-control-allow-origin",
        "access-control-allow-credentials",
        "access-control-allow-headers",
        "access-control-allow-methods",
        "access-control-expose-headers",
        "cache-control",
        "last-modified",
        "etag",
    }
)


class Resource(NamedTuple):
    """A response the guard let through."""

    status: int
    headers: dict[str, str]
    body: bytes


async def guarded_get(
    client: EgressClient,
    policy: FetchPolicy,
    rules: HostRules | None,
    url: str,
    byte_limit: int,
) -> Resource | None:
    """GET ``url`` under every rule of the fetch (see the module docstring); the body at most
    ``byte_limit`` decoded bytes (more: refused). None for anything refused or failed."""
    try:
        target = admit_url(url, rules)
    except UrlRefused:
        return None
    body_plan = ReadPlan(byte_limit)

    def judge(head: Head) -> ReadPlan:
        if head.status in REDIRECT_STATUSES and "Location" in head.headers:
            return _REDIRECT
        return body_plan

    followed = 0
    while True:
        try:
            response = await request_target(client, target, judge)
        except (
            DnsError, NoAllowedAddress, ProxyRefused, NetworkError, BodyTooLarge,
            UnsupportedEncoding,
        ):
            return None
        if response.plan is _REDIRECT:
            try:
                target = admit_redirect(
                    target, response.headers["Location"], followed, policy.max_redirects, rules
                )
            except RedirectRefused:
                return None
            followed += 1
            continue
        assert response.body is not None
        passed = {
            name.lower(): value
            for name, value in response.headers.items()
            if name.lower() in PASSED_FIELDS
        }
        return Resource(response.status, passed, response.body)
