"""robots.txt on request (``FetchPolicy(robots=True)``), with RFC 9309's semantics.

Before every hop of a fetch (the first URL and each redirect target), the site's rules are
looked up: ``{scheme}://{host}[:{port}]/robots.txt``, fetched by the very hop loop a page is
(:func:`~runvil.web._fetch.redirects.fetch_page`: the same admission, address guard, redirect
rules and time limits; an operator's setting that changes how a page is reached changes it for
robots.txt too), with a 512 KiB body cap, inside the call's own deadline. What the answer means
is RFC 9309's, section 2.3.1:

- **2xx**: the body is the rules (a text body over 512 KiB is cut there, as the RFC allows;
  other bodies over it cannot be read, see below);
- **4xx** ("unavailable"): everything is allowed;
- **5xx, any other status, or an unreachable server** (connection, TLS, time limit, a body that
  cannot be read): everything is disallowed;
- **redirects** are followed like a page's (five at most); one the fetch refuses to follow
  (too many, a downgrade, a blocked address) leaves the file unavailable: allowed (2.3.1.2);
- a lookup failure or a host with no allowed address is the page's own failure, with the page's
  own text (it is the same host, and the page could not be fetched either); for a host
  robots.txt was redirected to, a failed lookup is unreachable and a blocked address is a
  redirect not followed.

The rules are parsed by Protego (Scrapy's parser; docs/dependencies.md), which implements the
RFC's matching: the longest matching path wins, ``Allow`` wins a tie, ``*`` and ``$`` wildcards,
percent-encoding compared normalised. Which group applies is chosen here, by the RFC's rule: the
group whose user-agent line names the User-Agent's product token (case-insensitively), else the
``*`` group. (Protego on its own would also apply a group named by a leading part of the token,
such as ``harness`` for ``harness-webfetch``.)

The rules of each site are kept for the run (:data:`ROBOTS`, bounded like the page store).
A policy with a ``robots_store`` (replicas of a fleet, docs/deploy.md) also keeps them there,
as :class:`KeptRobots` (the verdict, or the text of the group that applies, never a parsed
object), under the same key, so the run's next hop to the site on another replica parses the
kept text instead of fetching robots.txt again; the copy a replica parses is served no longer
than the first reading's age allows. A shared store that does not answer is a miss: robots.txt
is read again.

**A caller's cost is small and its own.** Before Protego reads a file, one linear pass
(:mod:`.robotsgroup`) keeps only the group that applies, so Protego parses at most the file's
own rules once (no shape makes it grow faster than the file), and a group with more than
:data:`~.robotsgroup.MAX_WILDCARD_RULES` rules with a ``*`` (each costs up to the URL's length
to match) disallows everything instead of being evaluated. Parsing a big file is still pure
Python work (up to about a second for 512 KiB of rules), so a file over 16 KiB is parsed, and
matched, on two threads shared fairly between runs (:mod:`.fairpool`): one job per run at a
time, the least served run first, so one run's hostile files never queue another run's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from protego import Protego

from runvil._errors import ToolError
from runvil._net.client import EgressClient
from runvil._net.hostnames import host_key
from runvil._tools import RunScope
from runvil.web._fetch import failures
from runvil.web._fetch.admission import TargetUrl, UrlRefused, admit_url
from runvil.web._fetch.fairpool import FairPool
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import Progress
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.redirects import fetch_page
from runvil.web._fetch.robotsgroup import MAX_WILDCARD_RULES, select_group
from runvil.web._fetch.runstore import RunStore, RunStoreBackend

__all__ = [
    "ROBOTS",
    "ROBOTS_CAP",
    "KeptRobots",
    "RobotsRules",
    "parse_rules",
    "product_token",
    "robots_check",
]

logger = logging.getLogger("runvil.web.fetch")

#: The most of a robots.txt read (RFC 9309 2.5: at least 500 KiB must be parsed).
ROBOTS_CAP = 512 * 1024
#: What every run together may keep of parsed rules, per process; a parsed file costs about 40
#: times its size (measured), so the estimate is 64 times.
ROBOTS_BUDGET = 32 * 1024 * 1024
_BYTES_PER_SOURCE_BYTE = 64
ROBOTS_ENTRIES = 4096
ROBOTS_MAX_AGE = 600.0
#: Files up to this size are parsed on the event loop; bigger ones on the pool, where the URL
#: that asked for the file is matched in the same job.
_INLINE_SOURCE = 16 * 1024
#: Rules are matched on the event loop when a group has at most this many (each costs a Python
#: step; 1,024 about a millisecond)...
_INLINE_RULES = 1024
#: ...and at most this many with a ``*`` (each costs up to the URL's length: 16 at most about
#: 0.6 ms against an 8,192-character URL); other groups are matched on the pool.
_INLINE_WILDCARDS = 16

#: Parsing and matching of big files, fairly between runs (one job per run at a time).
_parse_pool = FairPool(2, "runvil-robots")
_TOKEN = re.compile(r"[A-Za-z_-]+")
_AGENT_LINE = re.compile(
    r"^[ \t]*user[- ]?agent[ \t]*(?::[ \t]*|[ \t]+)([^#\r\n]*)", re.IGNORECASE | re.MULTILINE
)
#: The user agent Protego is asked about, and the group name when no group names the product
#: token: Protego is given only the group that applies, under this name (:mod:`.robotsgroup`).
_ANY_AGENT = "*"


class RobotsRules:
    """What one site's robots.txt allows the fetch's product token."""

    __slots__ = ("_parser", "expires", "inline", "size", "source", "verdict")

    def __init__(
        self, verdict: bool | None, parser: Protego | None = None, size: int = 0,
        inline: bool = True, source: str = "",
    ) -> None:
        self.verdict = verdict
        """True: everything allowed; False: everything disallowed; None: ask the parser."""
        self._parser = parser
        self.size = size
        """The bytes these rules are counted as in :data:`ROBOTS`."""
        self.inline = inline
        """Matching is cheap enough for the event loop."""
        self.source = source
        """The text of the group the parser read (what a shared store keeps)."""
        self.expires: float | None = None
        """For rules parsed from a shared store's copy: when (``time.monotonic``) the first
        reading's age runs out, after which they are not served; None: the store's own age."""

    def allows(self, href: str) -> bool:
        if self.verdict is not None:
            return self.verdict
        assert self._parser is not None
        return bool(self._parser.can_fetch(href, _ANY_AGENT))


ALLOW_ALL = RobotsRules(True, size=256)
DISALLOW_ALL = RobotsRules(False, size=256)

class KeptRobots(NamedTuple):
    """A site's rules as a store shared by replicas keeps them."""

    verdict: bool | None
    """As :attr:`RobotsRules.verdict`."""
    source: str
    """The text of the group that applies (with ``verdict`` None)."""
    read_at: float
    """When robots.txt was read (``time.time()``): the kept rules' age counts from there."""


#: Every run's robots.txt rules, keyed by ``(scheme, host, port)``.
ROBOTS: RunStore[RobotsRules] = RunStore(
    budget=ROBOTS_BUDGET, max_entries=ROBOTS_ENTRIES, max_age=ROBOTS_MAX_AGE
)


def product_token(user_agent: str) -> str | None:
    """The product token of a User-Agent: its leading run of letters, ``-`` and ``_``
    (``harness-webfetch`` for ``harness-webfetch/0.0``), or None if it starts otherwise."""
    match = _TOKEN.match(user_agent)
    return match.group(0) if match else None


def parse_rules(text: str, token: str | None) -> RobotsRules:
    """The rules ``text`` sets for ``token`` (RFC 9309 2.2.1 chooses the group)."""
    name = _ANY_AGENT
    if token is not None:
        wanted = token.lower()
        for match in _AGENT_LINE.finditer(text):
            if match.group(1).strip().lower() == wanted:
                name = wanted
                break
    group = select_group(text, name)
    if group.wildcards > MAX_WILDCARD_RULES:
        logger.warning("robots.txt has %d rules with a wildcard for this agent (at most %d are "
                       "evaluated); treating it as disallowing everything",
                       group.wildcards, MAX_WILDCARD_RULES)
        return DISALLOW_ALL
    if not group.rules:
        return ALLOW_ALL
    try:
        parser = Protego.parse(group.text)
    except Exception:  # Protego reads any text; should it fail, the rules could not be read
        logger.warning("robots.txt could not be parsed; treating it as disallowing everything",
                       exc_info=True)
        return DISALLOW_ALL
    size = _BYTES_PER_SOURCE_BYTE * len(group.text) + 4096
    inline = group.rules <= _INLINE_RULES and group.wildcards <= _INLINE_WILDCARDS
    return RobotsRules(None, parser, size, inline, group.text)


def robots_check(
    client: EgressClient,
    policy: FetchPolicy,
    scope: RunScope,
    host_rules: HostRules | None = None,
) -> Callable[[TargetUrl], Awaitable[None]]:
    """The hook :func:`~runvil.web._fetch.redirects.fetch_page` awaits before each hop: raise
    the soft ``{url} is disallowed by the site's robots.txt`` when the hop's URL is."""
    token = product_token(policy.user_agent)

    shared = policy.robots_store

    async def check(target: TargetUrl) -> None:
        key = (target.scheme, host_key(target.host), target.port)  # one spelling per host
        rules = ROBOTS.get(scope, key)
        if rules is not None and rules.expires is not None and rules.expires <= time.monotonic():
            rules = None
        allowed: bool | None = None
        if rules is None and shared is not None:
            kept = await _recall_shared(shared, scope, key)
            if kept is not None:
                rules, allowed = await _parse_kept(kept, target, scope)
                ROBOTS.put(scope, key, rules, rules.size)
        if rules is None:
            rules, allowed = await _load(client, policy, target, token, scope, host_rules)
            ROBOTS.put(scope, key, rules, rules.size)
            if shared is not None:
                kept = KeptRobots(rules.verdict, rules.source, time.time())
                await asyncio.to_thread(shared.put, scope, key, kept, rules.size)
        if allowed is not None:
            pass  # matched where the file was parsed
        elif rules.inline:
            allowed = rules.allows(target.href)
        else:
            allowed = await asyncio.wrap_future(
                _parse_pool.submit(scope, lambda: rules.allows(target.href), rules.size)
            )
        if not allowed:
            raise failures.robots_disallowed(target.display)

    return check


async def _recall_shared(
    shared: RunStoreBackend[KeptRobots], scope: RunScope, key: tuple[str, str, int]
) -> KeptRobots | None:
    """The run's rules for ``key`` in a shared store; None when it has none or does not
    answer (robots.txt is then read again: forgetting is always safe)."""
    try:
        kept = await asyncio.to_thread(shared.get, scope, key)
    except ToolError:
        return None
    if kept is None or kept.read_at + ROBOTS_MAX_AGE <= time.time():
        return None  # past the first reading's age (a clock between replicas may differ)
    return kept


async def _parse_kept(
    kept: KeptRobots, target: TargetUrl, scope: RunScope
) -> tuple[RobotsRules, bool | None]:
    """Rules from a shared store's copy, served until the first reading's age runs out; a big
    group is parsed (and ``target`` matched) on the pool, as when it was first read."""
    rules: RobotsRules
    allowed: bool | None = None
    if kept.verdict is not None:
        rules = RobotsRules(kept.verdict, size=ALLOW_ALL.size)
    elif len(kept.source) <= _INLINE_SOURCE:
        rules = parse_rules(kept.source, None)
    else:

        def parse_and_match() -> tuple[RobotsRules, bool]:
            parsed = parse_rules(kept.source, None)
            return parsed, parsed.allows(target.href)

        rules, allowed = await asyncio.wrap_future(
            _parse_pool.submit(scope, parse_and_match, len(kept.source))
        )
    if rules.verdict is not None:  # never mark the shared ALLOW_ALL / DISALLOW_ALL
        rules = RobotsRules(rules.verdict, size=rules.size)
    rules.expires = time.monotonic() + (kept.read_at + ROBOTS_MAX_AGE - time.time())
    return rules, allowed


async def _load(
    client: EgressClient,
    policy: FetchPolicy,
    target: TargetUrl,
    token: str | None,
    scope: RunScope,
    host_rules: HostRules | None = None,
) -> tuple[RobotsRules, bool | None]:
    """Fetch and read the robots.txt of ``target``'s site (the module docstring's table); and,
    for a file parsed on the pool, whether it allows ``target`` (matched in the same job, so a
    fetch waits for the pool once), else None."""
    rules = await _load_rules(client, policy, target, token, scope, host_rules)
    if isinstance(rules, RobotsRules):
        return rules, None
    return rules


async def _load_rules(
    client: EgressClient,
    policy: FetchPolicy,
    target: TargetUrl,
    token: str | None,
    scope: RunScope,
    host_rules: HostRules | None = None,
) -> RobotsRules | tuple[RobotsRules, bool]:
    origin = target.href[: len(target.href) - len(target.path_and_query)]
    try:
        robots_url = admit_url(f"{origin}/robots.txt", host_rules)
    except UrlRefused:  # pragma: no cover - the origin of an admitted URL is admitted
        return DISALLOW_ALL
    reading = dataclasses.replace(
        policy, max_bytes=ROBOTS_CAP, continuation=False, pdf=False, robots=False
    )
    try:
        page = await fetch_page(client, reading, Progress(robots_url), host_rules)
    except failures.StatusFailure as failure:
        return ALLOW_ALL if 400 <= failure.status < 500 else DISALLOW_ALL
    except failures.HopRefused:
        return ALLOW_ALL
    except failures.DnsFailed as failure:
        if failure.host == target.host:
            raise  # the page's own host: its own text
        return DISALLOW_ALL  # robots.txt redirected to a name that does not resolve: unreachable
    except failures.SoftFailure:
        return DISALLOW_ALL
    except ToolError as error:
        if error.message == failures.no_allowed_address(target.host).message:
            raise  # the page's own host: its own error
        return ALLOW_ALL  # a redirect of robots.txt to a blocked address: not followed
    text = page.body.decode("utf-8-sig", "replace")
    if len(text) <= _INLINE_SOURCE:
        return parse_rules(text, token)

    def parse_and_match() -> tuple[RobotsRules, bool]:
        rules = parse_rules(text, token)
        return rules, rules.allows(target.href)

    return await asyncio.wrap_future(_parse_pool.submit(scope, parse_and_match, len(text)))
