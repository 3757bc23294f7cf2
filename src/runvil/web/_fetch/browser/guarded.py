"""One request of a page, answered through the fetch's own guard.

A page's script, stylesheet, frame, ``fetch()`` or XHR is fetched exactly as ``web_fetch``
fetches a page, with the same code: the URL is admitted by
:func:`~runvil.web._fetch.admission.admit_url` (scheme, userinfo, port, IP literal, the
operator's ``private_hosts`` and domain lists), its host resolved through the ``Network`` seam
and judged by the address table (:func:`runvil._net.approve`), the connection pinned to the
approved addresses (:func:`runvil._net.connector.send` under the hop's permit, through the
operator's proxy when there is one), every redirect admitted again by
:func:`~runvil.web._fetch.admission.admit_redirect` (cap, downgrade, re-admission) and resolved
and judged again, and the body read under the byte cap through the bounded decoders
(:func:`runvil._net.body.read_bounded`). What differs from a page fetch is only what is
accepted at the end: any content type (a script is ``application/javascript``), since the
browser, not the model, reads it.

Anything refused is ``None``: the browser sees a failed request, and nothing is ever retried
outside the guard.
"""

from __future__ import annotations

from typing import NamedTuple

import aiohttp

from runvil._net import (
    NAMED_PRIVATE,
    PUBLIC_WEB,
    DialRefused,
    DnsError,
    Network,
    NoAllowedAddress,
    approve,
)
from runvil._net.body import BodyTooLarge, read_bounded
from runvil._net.connector import send
from runvil._net.decoding import BodyDecodeError, UnsupportedEncoding
from runvil._net.proxy import ProxyRefused
from runvil.web._fetch.admission import RedirectRefused, UrlRefused, admit_redirect, admit_url
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import REDIRECT_STATUSES, _request_url
from runvil.web._fetch.policy import FetchPolicy

__all__ = ["Resource", "guarded_get"]

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
    session: aiohttp.ClientSession,
    network: Network,
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
    followed = 0
    while True:
        try:
            rule = NAMED_PRIVATE if target.private else PUBLIC_WEB
            permit = await approve(network, rule, target.host, target.port)
        except (DnsError, NoAllowedAddress):
            return None
        request_url = _request_url(target)
        headers = None
        if request_url.host_port_subcomponent != target.host_header:
            headers = {"Host": target.host_header}
        try:
            response = await send(session, request_url, headers, permit=permit)
        except (aiohttp.ClientError, OSError, DialRefused, ProxyRefused, ValueError):
            return None
        try:
            location = response.headers.get("Location")
            if response.status in REDIRECT_STATUSES and location is not None:
                try:
                    target = admit_redirect(
                        target, location, followed, policy.max_redirects, rules
                    )
                except RedirectRefused:
                    return None
                followed += 1
                continue
            try:
                body, _ = await read_bounded(response, byte_limit)
            except (
                aiohttp.ClientError, OSError, BodyTooLarge, BodyDecodeError, UnsupportedEncoding
            ):
                return None
            passed = {
                name.lower(): value
                for name, value in response.headers.items()
                if name.lower() in PASSED_FIELDS
            }
            return Resource(response.status, passed, body)
        finally:
            response.close()
