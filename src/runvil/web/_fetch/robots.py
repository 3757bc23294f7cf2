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
Parsing a big robots.txt is pure Python work (about a second for 512 KiB of rules), so it runs on
a small pool of its own, never on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable

from protego import Protego

from runvil._errors import ToolError
from runvil._net.client import EgressClient
from runvil._tools import RunScope
from runvil.web._fetch import failures
from runvil.web._fetch.admission import TargetUrl, UrlRefused, admit_url
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.http import Progress
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.redirects import fetch_page
from runvil.web._fetch.runstore import RunStore

__all__ = ["ROBOTS", "ROBOTS_CAP", "RobotsRules", "parse_rules", "product_token", "robots_check"]

logger = logging.getLogger("runvil.web.fetch")

#: The most of a robots.txt read (RFC 9309 2.5: at least 500 KiB must be parsed).
ROBOTS_CAP = 512 * 1024
#: What every run together may keep of parsed rules, per process; a parsed file costs about 40
#: times its size (measured), so the estimate is 64 times.
ROBOTS_BUDGET = 32 * 1024 * 1024
_BYTES_PER_SOURCE_BYTE = 64
ROBOTS_ENTRIES = 4096
ROBOTS_MAX_AGE = 600.0
#: Files up to this size are matched on the event loop; bigger ones on the pool.
_INLINE_SOURCE = 16 * 1024

_parse_pool = concurrent.futures.ThreadPoolExecutor(
    max_workers=1, thread_name_prefix="runvil-robots"
)
_TOKEN = re.compile(r"[A-Za-z_-]+")
_AGENT_LINE = re.compile(
    r"^[ \t]*user[- ]?agent[ \t]*(?::[ \t]*|[ \t]+)([^#\r\n]*)", re.IGNORECASE | re.MULTILINE
)
#: The user agent Protego is asked about when no group names the product token: no group name
#: can be found inside it, so only the ``*`` group applies.
_ANY_AGENT = "*"


class RobotsRules:
    """What one site's robots.txt allows the fetch's product token."""

    __slots__ = ("_agent", "_parser", "size", "verdict")

    def __init__(
        self, verdict: bool | None, parser: Protego | None = None, agent: str = "", size: int = 0
    ) -> None:
        self.verdict = verdict
        """True: everything allowed; False: everything disallowed; None: ask the parser."""
        self._parser = parser
        self._agent = agent
        self.size = size
        """The bytes these rules are counted as in :data:`ROBOTS`."""

    def allows(self, href: str) -> bool:
        if self.verdict is not None:
            return self.verdict
        assert self._parser is not None
        return bool(self._parser.can_fetch(href, self._agent))


ALLOW_ALL = RobotsRules(True, size=256)
DISALLOW_ALL = RobotsRules(False, size=256)

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
    agent = _ANY_AGENT
    if token is not None:
        wanted = token.lower()
        for match in _AGENT_LINE.finditer(text):
            if match.group(1).strip().lower() == wanted:
                agent = token
                break
    try:
        parser = Protego.parse(text)
    except Exception:  # Protego reads any text; should it fail, the rules could not be read
        logger.warning("robots.txt could not be parsed; treating it as disallowing everything",
                       exc_info=True)
        return DISALLOW_ALL
    size = _BYTES_PER_SOURCE_BYTE * len(text) + 4096
    return RobotsRules(None, parser, agent, size)


def robots_check(
    client: EgressClient,
    policy: FetchPolicy,
    scope: RunScope,
    host_rules: HostRules | None = None,
) -> Callable[[TargetUrl], Awaitable[None]]:
    """The hook :func:`~runvil.web._fetch.redirects.fetch_page` awaits before each hop: raise
    the soft ``{url} is disallowed by the site's robots.txt`` when the hop's URL is."""
    token = product_token(policy.user_agent)

    async def check(target: TargetUrl) -> None:
        key = (target.scheme, target.host, target.port)
        rules = ROBOTS.get(scope, key)
        if rules is None:
            rules = await _load(client, policy, target, token, host_rules)
            ROBOTS.put(scope, key, rules, rules.size)
        if rules.size > _INLINE_SOURCE * _BYTES_PER_SOURCE_BYTE:
            allowed = await asyncio.wrap_future(_parse_pool.submit(rules.allows, target.href))
        else:
            allowed = rules.allows(target.href)
        if not allowed:
            raise failures.robots_disallowed(target.display)

    return check


async def _load(
    client: EgressClient,
    policy: FetchPolicy,
    target: TargetUrl,
    token: str | None,
    host_rules: HostRules | None = None,
) -> RobotsRules:
    """Fetch and read the robots.txt of ``target``'s site (the module docstring's table)."""
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
    return await asyncio.wrap_future(_parse_pool.submit(parse_rules, text, token))
