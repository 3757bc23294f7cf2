"""Hints for a person at the command line, printed on stderr after a fetch's exact message.

The tools' messages are contract and never change; a person who typed ``runvil fetch
example.com`` still deserves to learn what went wrong. So the CLI (and only the CLI) adds
``hint:`` lines on stderr, after the message, never in ``--json`` output and never where a model
reads:

* a URL without a scheme: ``hint: did you mean https://example.com/?``;
* an ``http`` URL: ``hint: runvil fetches https only``;
* a host with no allowed address: what it resolved to and why that is refused, and the
  ``private_hosts`` setting when the host is on the operator's own network.

The addresses come from the fetch's own outcome (:class:`~runvil.web._fetch.outcome.FetchOutcome`:
the answers the refused host resolved to, the table row each fell in, and whether a redirect led
there): what the fetch already knew, read from its fields.
"""

from __future__ import annotations

import re

from runvil.web._fetch.outcome import FetchOutcome
from runvil.web._fetch.settings import (
    INVALID_ADDRESS,
    listed_on_any_port,
    may_serve_a_private_host,
)

__all__ = ["fetch_hints"]

#: What a string a person typed without a scheme looks like: a name with a dot, or localhost,
#: then an optional port and path.
_BARE = re.compile(r"(?:[^\s:/?#@]+\.[^\s:/?#@]+|localhost)(?::[0-9]+)?(?:[/?#]\S*)?", re.I)


def fetch_hints(
    url: str, outcome: FetchOutcome, private_hosts: tuple[str, ...] = ()
) -> list[str]:
    """The ``hint:`` lines for a fetch of ``url`` that ended with ``outcome`` (its message, and
    for a host with no allowed address what the fetch knew: the answers it refused and whether
    a redirect led there); ``private_hosts`` the policy's list."""
    message = outcome.message or ""
    if message == "invalid url" or message.startswith("scheme not allowed: "):
        suggestion = _with_scheme(url)
        if suggestion is not None:
            return [f"hint: did you mean {suggestion}?"]
    if message == "scheme not allowed: http":
        return ["hint: runvil fetches https only"]
    if outcome.host is not None:
        host = outcome.host
        redirected = (
            bool(private_hosts)
            and outcome.redirected
            and listed_on_any_port(private_hosts, host)
        )
        return _address_hints(host, outcome.refused, redirected)
    return []


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
    host: str, dropped: tuple[tuple[str, str], ...], redirected: bool
) -> list[str]:
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
