"""Hints for a person at the command line, printed on stderr after a fetch's exact message.

The tools' messages are contract and never change; a person who typed ``runvil fetch
example.com`` still deserves to learn what went wrong. So the CLI (and only the CLI) adds
``hint:`` lines on stderr, after the message, never in ``--json`` output and never where a model
reads:

* a URL without a scheme: ``hint: did you mean https://example.com/?``;
* an ``http`` URL: ``hint: runvil fetches https only``;
* a host with no allowed address: what it resolved to and why that is refused, and the
  ``private_hosts`` setting when the host is on the operator's own network.

The addresses come from the fetch's own debug log (``host {host} resolved to blocked address
{addr} in range {range}``, logger ``runvil.web._fetch``), the one place that detail lives, read
while the fetch runs.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

from runvil.web._fetch.settings import (
    INVALID_ADDRESS,
    listed_on_any_port,
    may_serve_a_private_host,
)

__all__ = ["fetch_hints", "watch_blocked"]

#: The fetch logger's line for a dropped answer (runvil._net.addresses).
_BLOCKED_LINE = "host %s resolved to blocked address %s in range %s"
_NO_ADDRESS = re.compile(r"host (?P<host>\S+) has no allowed address")
#: What a string a person typed without a scheme looks like: a name with a dot, or localhost,
#: then an optional port and path.
_BARE = re.compile(r"(?:[^\s:/?#@]+\.[^\s:/?#@]+|localhost)(?::[0-9]+)?(?:[/?#]\S*)?", re.I)


class _Blocked(logging.Handler):
    """Keeps each ``(host, address, range)`` the fetch logger reports as dropped."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == _BLOCKED_LINE and isinstance(record.args, tuple):
            host, address, cidr = (str(part) for part in record.args)
            self.seen.append((host, address, cidr))


@contextlib.contextmanager
def watch_blocked() -> Iterator[list[tuple[str, str, str]]]:
    """While the block runs, collect the answers the fetch drops (the list it yields)."""
    logger = logging.getLogger("runvil.web.fetch")
    handler = _Blocked()
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.DEBUG:
        logger.setLevel(logging.DEBUG)
    try:
        yield handler.seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def fetch_hints(
    url: str,
    message: str,
    blocked: list[tuple[str, str, str]],
    private_hosts: tuple[str, ...] = (),
) -> list[str]:
    """The ``hint:`` lines for a fetch of ``url`` that ended with ``message``. ``blocked`` is what
    :func:`watch_blocked` collected; ``private_hosts`` the policy's list."""
    if message == "invalid url" or message.startswith("scheme not allowed: "):
        suggestion = _with_scheme(url)
        if suggestion is not None:
            return [f"hint: did you mean {suggestion}?"]
    if message == "scheme not allowed: http":
        return ["hint: runvil fetches https only"]
    found = _NO_ADDRESS.fullmatch(message)
    if found is not None:
        host = found["host"]
        return _address_hints(host, blocked, _redirected_into(url, host, private_hosts))
    return []


def _redirected_into(url: str, host: str, private_hosts: tuple[str, ...]) -> bool:
    """Whether ``host`` is a listed private host the fetch of ``url`` reached by a redirect
    (the first URL's own host is judged by its port, and was not listed on it)."""
    if not private_hosts:
        return False
    from runvil.web._fetch.admission import UrlRefused, admit_url

    try:
        first = admit_url(url).host
    except UrlRefused:
        return False
    return first.rstrip(".") != host.rstrip(".") and listed_on_any_port(private_hosts, host)


def _with_scheme(url: str) -> str | None:
    """``https://`` + ``url`` as it would be requested, when ``url`` looks like a host name
    typed without a scheme and that form would be admitted."""
    from runvil.web._fetch.admission import UrlRefused, admit_url

    text = url.strip()
    if "://" in text or _BARE.fullmatch(text) is None:
        return None
    try:
        return admit_url(f"https://{text}").href
    except UrlRefused:
        return None


def _address_hints(
    host: str, blocked: list[tuple[str, str, str]], redirected: bool
) -> list[str]:
    name = host.rstrip(".")
    dropped = [(address, cidr) for seen, address, cidr in blocked if seen.rstrip(".") == name]
    if not dropped:
        return [f"hint: {host} resolved to no address"]
    shown = ", ".join(
        f"{address} (not an IP address)" if cidr == INVALID_ADDRESS else f"{address} (in {cidr})"
        for address, cidr in dict.fromkeys(dropped)
    )
    hints = [f"hint: {host} resolved only to addresses runvil does not fetch: {shown}"]
    internal = any(
        cidr != INVALID_ADDRESS and may_serve_a_private_host(address) for address, cidr in dropped
    )
    if internal and not redirected:
        hints.append(
            "hint: to fetch a host on your own network, name it in private_hosts under [fetch] "
            "in runvil.toml (or RUNVIL_FETCH_PRIVATE_HOSTS); a redirect from a public page "
            "still never reaches it"
        )
    elif internal:
        hints.append(
            f"hint: {host} is in private_hosts, but this fetch reached it by a redirect from a "
            "host that is not, and a redirect never carries a fetch into your network"
        )
    else:
        hints.append(
            "hint: link-local (169.254.0.0/16, fe80::/10), multicast, broadcast, unspecified "
            "and IPv4-in-IPv6 addresses are never fetched, not even for a host in private_hosts"
        )
    return hints
