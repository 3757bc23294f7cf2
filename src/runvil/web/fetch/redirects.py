"""The hop loop: resolve, dial, follow redirects, all inside one whole-request deadline.

Every hop starts from nothing: its host is resolved again and judged against the blocked table
(no approval carries over from an earlier hop or call, which is what defeats DNS rebinding), and
its connection may only reach that hop's approved addresses. A redirect target must pass
:func:`~runvil.web.fetch.admission.admit_redirect` (cap, parse, downgrade, then the admission
rules) before anything about it is looked up; a refusal ends the fetch with soft text.

One ``asyncio.timeout`` covers every hop and the body. When it fires, the text depends on what
the fetch was doing: waiting for a connection or a response head reads "timed out", while a body
that was still arriving reads "could not be read", both naming the hop that was in flight.
"""

from __future__ import annotations

import asyncio

import aiohttp

from runvil.web.fetch import failures
from runvil.web.fetch.admission import RedirectRefused, TargetUrl, admit_redirect
from runvil.web.fetch.http import Page, Progress, exchange
from runvil.web.fetch.network import DnsError, Network, NoAllowedAddress, approve_host
from runvil.web.fetch.policy import FetchPolicy


async def fetch_page(
    session: aiohttp.ClientSession, network: Network, policy: FetchPolicy, target: TargetUrl
) -> Page:
    """Fetch ``target``, following redirects, under ``policy``'s limits.

    Returns the final page; raises :class:`~runvil.web.fetch.failures.SoftFailure` for every
    soft outcome and :class:`~runvil.errors.ToolError` for a host with no allowed address.
    """
    progress = Progress(target)
    try:
        async with asyncio.timeout(policy.timeout):
            return await _follow(session, network, policy, progress)
    except TimeoutError:
        if progress.reading_body:
            raise failures.body_unreadable(progress.target.display) from None
        raise failures.timed_out(progress.target.display) from None


async def _follow(
    session: aiohttp.ClientSession, network: Network, policy: FetchPolicy, progress: Progress
) -> Page:
    followed = 0
    while True:
        target = progress.target
        try:
            permit = await approve_host(network, target.host, target.port)
        except DnsError:
            raise failures.dns_failed(target.host) from None
        except NoAllowedAddress:
            raise failures.no_allowed_address(target.host) from None
        outcome = await exchange(session, target, permit, policy, progress)
        if isinstance(outcome, Page):
            return outcome
        try:
            progress.target = admit_redirect(
                target, outcome.location, followed, policy.max_redirects
            )
        except RedirectRefused as refused:
            raise failures.SoftFailure(refused.text) from None
        followed += 1
