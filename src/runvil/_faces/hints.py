"""Hints for a person at the command line, printed on stderr after a fetch's exact message.

The tools' messages are contract and never change; a person who typed ``runvil fetch
example.com`` still deserves to learn what went wrong. So the CLI (and only the CLI) adds
``hint:`` lines on stderr, after the message, never in ``--json`` output and never where a model
reads:

* a URL without a scheme: ``hint: did you mean https://example.com/?``;
* an ``http`` URL: ``hint: runvil fetches https only`` (or, when the operator lists private
  hosts, that http is for those hosts only);
* a port other than 443 or 80: that public hosts use those two, and the ``private_hosts`` entry
  (``"host:port"``) that lets a host of your own network be fetched on its port;
* a host with no allowed address: what it resolved to and why that is refused, and the
  ``private_hosts`` setting when the host is on the operator's own network;
* a server certificate runvil does not trust: ``ca_bundle`` when an unknown CA signed it.

The addresses come from the fetch's own outcome (:class:`~runvil.web._fetch.outcome.FetchOutcome`:
the answers the refused host resolved to, the table row each fell in, and whether a redirect led
there), and so does a refused certificate (its ``cause``, ``CertificateFailed``, and the
verifier's reason): what the fetch already knew, read from its fields.
"""

from __future__ import annotations

import re
from typing import Any

from runvil.web._fetch.hosts import NOT_AN_IP_ADDRESS as INVALID_ADDRESS
from runvil.web._fetch.hosts import lists_private_host, may_serve_a_private_host
from runvil.web._fetch.outcome import CertificateRefused, FetchOutcome

__all__ = ["fetch_hints"]

#: What a string a person typed without a scheme looks like: a name with a dot, or localhost,
#: then an optional port and path.
_BARE = re.compile(r"(?:[^\s:/?#@]+\.[^\s:/?#@]+|localhost)(?::[0-9]+)?(?:[/?#]\S*)?", re.I)


#: OpenSSL verify codes that mean "signed by a CA this client does not know": a company CA.
_UNKNOWN_CA_CODES = frozenset({2, 18, 19, 20, 21})
_PRIVATE_HOSTS_WHERE = (
    "under [fetch] in runvil.toml (or RUNVIL_FETCH_PRIVATE_HOSTS, --private-host)"
)


def fetch_hints(
    url: str, outcome: FetchOutcome, private_hosts: tuple[str, ...] = ()
) -> list[str]:
    """The ``hint:`` lines for a fetch of ``url`` that ended with ``outcome`` (its message, and
    what the fetch knew: for a host with no allowed address the answers it refused and whether
    a redirect led there, for a refused certificate the verifier's reason); ``private_hosts``
    the policy's list."""
    message = outcome.message or ""
    if message == "invalid url" or message.startswith("scheme not allowed: "):
        suggestion = _with_scheme(url)
        if suggestion is not None:
            hints = [f"hint: did you mean {suggestion}?"]
            record = _parsed(suggestion)
            if record is not None and record.port and int(record.port) not in (80, 443):
                hints += _port_hints(record.hostname, record.port, record.host_type)
            return hints
    if message == "scheme not allowed: http":
        return _http_hints(url, private_hosts)
    if message.startswith("port not allowed: "):
        record = _parsed(url)
        if record is not None and record.port:
            return _port_hints(record.hostname, record.port, record.host_type)
    if outcome.cause == "CertificateFailed" and outcome.certificate is not None:
        return _certificate_hints(outcome.certificate)
    if outcome.host is not None:
        host = outcome.host
        redirected = (
            bool(private_hosts)
            and outcome.redirected
            and lists_private_host(private_hosts, host)
        )
        return _address_hints(host, outcome.refused, redirected)
    return []


def _with_scheme(url: str) -> str | None:
    """``https://`` + ``url`` as it would be requested, when ``url`` looks like a host name
    typed without a scheme and that form would be admitted, or refused for its port alone
    (the port hint then follows)."""
    from runvil.web._fetch.admission import UrlRefused, admit_url

    text = url.strip()
    if "://" in text or _BARE.fullmatch(text) is None:
        return None
    try:
        return admit_url(f"https://{text}").href
    except UrlRefused as refused:
        if not str(refused).startswith("port not allowed: "):
            return None
    record = _parsed(f"https://{text}")
    if record is None or record.host_type != 0:
        return None
    href: str = record.href
    return href


def _parsed(url: str) -> Any:
    """The WHATWG record of ``url`` (None when it does not parse)."""
    from runvil.web._fetch.urlrecord import parse_record

    return parse_record(url.strip())


def _port_hints(host: str, port: str, host_type: int) -> list[str]:
    """A port other than 443 and 80: what public hosts use, and the entry that lets a host of
    the operator's own network be fetched on its port (a name only: an IP address as the host
    is never fetched)."""
    if host_type != 0:
        return [
            "hint: public hosts are fetched on ports 443 and 80 only; a host of your own network "
            "is fetched by its name, listed in private_hosts with its port, never by its IP "
            "address"
        ]
    return [
        "hint: public hosts are fetched on ports 443 and 80 only",
        f'hint: to fetch {host} on port {port} as a host of your own network, name it with '
        f'its port: private_hosts = ["{host}:{port}"] {_PRIVATE_HOSTS_WHERE}',
    ]


def _http_hints(url: str, private_hosts: tuple[str, ...]) -> list[str]:
    """An ``http`` URL refused: https only, or http only for the listed private hosts."""
    if not private_hosts:
        return ["hint: runvil fetches https only"]
    record = _parsed(url)
    host = record.hostname if record is not None else ""
    if host and lists_private_host(private_hosts, host):
        port = record.port or "80"
        return [
            f"hint: {host} is in private_hosts, but not with port {port}; http is fetched only "
            "from a listed host on its listed port"
        ]
    named = f"{host} is not one of them" if host else "this URL names none of them"
    return [
        "hint: runvil fetches http only from the hosts listed in private_hosts, and "
        f"{named}; every other host is fetched over https"
    ]


def _certificate_hints(refused: CertificateRefused) -> list[str]:
    """A server certificate refused: the fix for an unknown CA is ``ca_bundle``."""
    host, port, reason, code = refused
    where = host if port in (443, None) else f"{host}:{port}"
    if code in _UNKNOWN_CA_CODES:
        return [
            f"hint: the certificate of {where} is signed by a CA runvil does not trust "
            f"({reason}); if it is your organisation's own CA, name its PEM file in ca_bundle "
            "under [fetch] in runvil.toml (or RUNVIL_FETCH_CA_BUNDLE, --ca-bundle)"
        ]
    return [f"hint: the certificate of {where} was refused: {reason}"]


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
