"""The hop loop: resolve, dial, follow redirects.

Every hop starts from nothing (:func:`~runvil.web._fetch.http.exchange`): its host is resolved
again and judged by the public-web rule (:data:`runvil._net.PUBLIC_WEB`, the blocked table), or,
for a target admission marked as one of the operator's named private hosts, by the named-private
rule (:data:`runvil._net.NAMED_PRIVATE`).
No approval carries over from an earlier hop or call, which is what defeats DNS rebinding, and the
hop's connection may only reach that hop's approved addresses. A redirect target must pass
:func:`~runvil.web._fetch.admission.admit_redirect` (cap, parse, downgrade, then the admission
rules) before anything about it is looked up; a refusal ends the fetch with soft text.

The whole-request deadline is not here: the caller runs this loop in a task of its own and
cancels that task when the deadline passes (see :mod:`runvil.web._fetch.tool`), reading
``progress`` to name the hop that was in flight and what it was doing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from runvil._net.client import EgressClient
from runvil.web._fetch import failures
from runvil.web._fetch.admission import RedirectRefused, TargetUrl, admit_redirect
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import Page, Progress, exchange
from runvil.web._fetch.policy import FetchPolicy


async def fetch_page(
    client: EgressClient,
    policy: FetchPolicy,
    progress: Progress,
    rules: HostRules | None = None,
    before_hop: Callable[[TargetUrl], Awaitable[None]] | None = None,
) -> Page:
    """Fetch ``progress.target``, following redirects, under ``policy``'s limits.

    Returns the final page; raises :class:`~runvil.web._fetch.failures.SoftFailure` for every
    soft outcome and :class:`~runvil._errors.ToolError` for a host with no allowed address.
    ``progress`` always names the hop in flight. ``before_hop`` is awaited with every hop's
    admitted URL before anything about it is looked up (the robots.txt check, which may raise a
    soft failure of its own).
    """
    followed = 0
    while True:
        target = progress.target
        if before_hop is not None:
            await before_hop(target)
        outcome = await exchange(client, target, policy, progress)
        if isinstance(outcome, Page):
            return outcome
        try:
            progress.target = admit_redirect(
                target, outcome.location, followed, policy.max_redirects, rules
            )
        except RedirectRefused as refused:
            raise failures.HopRefused(refused.text) from None
        followed += 1
