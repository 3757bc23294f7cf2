"""URL admission: the five checks every fetched URL passes before any network access.

The checks run on the parsed WHATWG URL record (the ``ada-url`` parser, the same algorithm a
browser uses), never on the text the caller wrote. That closes the classic parser-differential
holes: ``https://0177.0.0.1/``, ``https://127.1/`` and ``https://2130706433/`` are all the host
``127.0.0.1`` once parsed, ``https://@example.com/`` has no userinfo, and ``HTTPS://EXAMPLE.COM``
is ``https://example.com/``. The href the checks approved is exactly what gets requested, so no
second parser can see a different host.

Order and messages are contract (seed 001, "URL admission rules"): parse, scheme, userinfo,
port, IP literal, reporting only the first failure. Only the scheme refusal is soft. Redirect
targets go through the same checks, preceded by the redirect cap, parsing relative to the current
URL and the https-to-http downgrade rule, and every hop refusal is soft text.

An operator's host rules (:class:`~runvil.web._fetch.hosts.HostRules`, absent by default) add
two things. A host listed in ``private_hosts`` may use ``http`` and its listed port, and its
target is marked ``private`` (its addresses are then judged by the named-private rule); a
redirect keeps that only while every URL of the fetch so far was a listed host, so a public
page can never send the fetch into the intranet. A host with an empty label
(``secret.example.com..``, ``a..b``: anything but one trailing dot) is ``invalid url`` after the
IP-literal check, hard for the first URL and the soft redirect refusal for a hop, so every later
comparison reads one spelling of the name. And the domain lists run last, before any lookup:
``domain not allowed: {host}``, hard for the first URL, the soft redirect refusal for a hop.
Without host rules (the default policy) none of this applies, and such a name goes to the
resolver as the specification says (the system resolver cannot look it up: ``dns resolution
failed for {host}``).
"""

from __future__ import annotations

from typing import NamedTuple

from ada_url import HostType

from runvil._net.hostnames import has_empty_label
from runvil.web._fetch.hosts import HostRules
from runvil.web._fetch.policy import ALLOWED_PORTS, ALLOWED_SCHEMES
from runvil.web._fetch.urlrecord import UrlRecord, parse_record

__all__ = [
    "RedirectRefused",
    "TargetUrl",
    "UrlRefused",
    "admit_redirect",
    "admit_url",
    "display_url",
    "domain_not_allowed",
]

#: WHATWG special schemes and their default ports (the only schemes that have one).
_DEFAULT_PORTS: dict[str, int] = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

#: The schemes a listed private host may use (any other host: https only).
_PRIVATE_SCHEMES = frozenset({"http", "https"})

INVALID_URL = "invalid url"
USERINFO_NOT_ALLOWED = "url must not contain userinfo"


class UrlRefused(Exception):
    """A URL broke an admission rule. ``message`` is the spec's exact text; ``soft`` is True only
    for the scheme rule, whose refusal is returned as text instead of failing the call."""

    def __init__(self, message: str, *, soft: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.soft = soft

    def __str__(self) -> str:
        return self.message


class RedirectRefused(Exception):
    """A redirect hop was refused; ``text`` is the whole soft result text
    ``redirect from {from} to {to} refused: {reason}``."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


class TargetUrl(NamedTuple):
    """An admitted URL, in the exact forms the HTTP layer and the messages need.

    A named tuple rather than a frozen dataclass: just as immutable, and made on every fetch and
    hop, where a frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) cost
    twice as much.
    """

    href: str
    """WHATWG href without its fragment: exactly what is requested (query unchanged)."""
    scheme: str
    """The scheme, lowercase, without the colon (``https``)."""
    host: str
    """WHATWG ASCII host: punycode, lowercase, trailing dot kept, never bracketed."""
    port: int
    """Effective port: the written port, else the scheme's default."""
    path_and_query: str
    """The request target (``/path?q=1``); an empty query keeps its ``?``, as in the href."""
    host_header: str
    """WHATWG host, with ``:port`` only when the port is not the scheme's default."""
    display: str
    """``scheme://host[:port]/path`` for named-failure messages: no userinfo, query or fragment."""
    private: bool = False
    """The operator listed this host and port in ``private_hosts`` (and, for a redirect, every
    URL before it in the fetch was listed too): its addresses may be private."""


def admit_url(raw: str, rules: HostRules | None = None) -> TargetUrl:
    """Run the five admission checks on a ``url`` argument, in the spec's order, then the
    operator's domain lists when ``rules`` has them.

    Raises :class:`UrlRefused` with the first broken rule's message. Never raises anything else,
    whatever the string holds (control characters, lone surrogates, megabytes of text).
    """
    url = _parse(raw)
    if url is None:
        raise UrlRefused(INVALID_URL)
    target = _admit_parsed(url, rules, True)
    if rules is not None and rules.domain_refused(target.host):
        raise UrlRefused(domain_not_allowed(target.host))
    return target


def domain_not_allowed(host: str) -> str:
    """The domain lists' refusal, for the first URL and (as a reason) for a redirect hop."""
    return f"domain not allowed: {host}"


def admit_redirect(
    current: TargetUrl,
    location: str,
    hops_followed: int,
    max_redirects: int,
    rules: HostRules | None = None,
) -> TargetUrl:
    """Decide whether to follow a redirect from ``current`` to ``location``.

    ``hops_followed`` counts the redirects already followed in this fetch, so the hop is refused
    once it reaches ``max_redirects``. The rules run in DESIGN.md's order: the cap, parsing
    ``location`` relative to the current URL, the https-to-http downgrade, then the admission
    rules. Every refusal raises :class:`RedirectRefused` naming both URLs in display form.
    """
    target = _parse(location, current.href)
    to_display = _display(target) if target is not None else _cut_before_query(location)

    def refuse(reason: str) -> RedirectRefused:
        return RedirectRefused(
            f"redirect from {current.display} to {to_display} refused: {reason}"
        )

    if hops_followed >= max_redirects:
        raise refuse(f"exceeded max redirects ({max_redirects})")
    if target is None:
        raise refuse(INVALID_URL)
    if current.scheme == "https" and _scheme(target) == "http":
        raise refuse("refusing https to http downgrade")
    try:
        admitted = _admit_parsed(target, rules, current.private)
    except UrlRefused as refusal:
        raise refuse(refusal.message) from None
    if rules is not None and rules.domain_refused(admitted.host):
        raise refuse(domain_not_allowed(admitted.host))
    return admitted


def display_url(href: str) -> str:
    """The display form of any URL string: ``scheme://host[:port]/path``.

    A URL without an authority (``data:``, ``javascript:``, ``mailto:``) shows as ``{scheme}:``
    so its payload never reaches a message. A string that does not parse is cut before its first
    ``?`` or ``#``.
    """
    url = _parse(href)
    if url is None:
        return _cut_before_query(href)
    return _display(url)


def _parse(raw: str, base: str | None = None) -> UrlRecord | None:
    """Parse with the WHATWG algorithm; None when the string is not a valid absolute URL."""
    if not isinstance(raw, str):
        return None
    return parse_record(raw, base)


def _admit_parsed(
    url: UrlRecord, rules: HostRules | None = None, private_ok: bool = True
) -> TargetUrl:
    """The five checks. ``private_ok`` False (a hop after a URL that was not a listed private
    host) judges a listed host as if it were not listed."""
    scheme = _scheme(url)
    written_port: str = url.port
    port = int(written_port) if written_port else _DEFAULT_PORTS.get(scheme, 0)
    private = (
        rules is not None
        and private_ok
        and url.host_type == HostType.DEFAULT
        and rules.private.match(url.hostname, port)
        and scheme in _PRIVATE_SCHEMES
    )
    if scheme not in ALLOWED_SCHEMES and not private:
        raise UrlRefused(f"scheme not allowed: {scheme}", soft=True)
    if url.has_credentials:
        raise UrlRefused(USERINFO_NOT_ALLOWED)
    if port not in ALLOWED_PORTS and not private:
        raise UrlRefused(f"port not allowed: {port}")
    hostname: str = url.hostname
    if url.host_type in (HostType.IPV4, HostType.IPV6):
        raise UrlRefused(f"ip literal host not allowed: {hostname.strip('[]')}")
    if rules is not None and has_empty_label(hostname):
        # The operator's rules compare names; a name with an empty label has no one reading
        # (one trailing dot is the root, two are not a DNS name), so it is not a URL they admit.
        raise UrlRefused(INVALID_URL)

    # A fragment never goes to the server (seed 001, "Query strings and fragments"). In a
    # serialised special URL the first "#" always starts the fragment (the parser percent-encodes
    # or ends every other component at it), so cutting there drops exactly the fragment.
    href: str = url.href.partition("#")[0]
    host_header = _host(url)
    origin = f"{scheme}://{host_header}"
    if not hostname or not href.startswith(origin):
        # Unreachable for special schemes (they always have a non-empty host, and userinfo was
        # refused above); kept so an unexpected record can never be requested half-checked.
        raise UrlRefused(INVALID_URL)
    return TargetUrl(
        href=href,
        scheme=scheme,
        host=hostname,
        port=port,
        path_and_query=href[len(origin) :],
        host_header=host_header,
        display=f"{origin}{url.pathname}",
        private=private,
    )


def _scheme(url: UrlRecord) -> str:
    """The scheme without its colon. An href always starts with the scheme and ``:``, and a
    scheme never contains ``:``, so this is exactly the record's ``protocol`` minus the colon."""
    href: str = url.href
    return href.partition(":")[0]


def _host(url: UrlRecord) -> str:
    """The record's ``host``: its hostname, then ``:port`` when the URL has a port (the WHATWG
    host getter's definition; ada-url reports a null or default port as ``""``)."""
    hostname: str = url.hostname
    port: str = url.port
    return f"{hostname}:{port}" if port else hostname


def _display(url: UrlRecord) -> str:
    scheme = _scheme(url)
    href: str = url.href
    if href.startswith(f"{scheme}://"):
        return f"{scheme}://{_host(url)}{url.pathname}"
    return f"{scheme}:"


def _cut_before_query(raw: str) -> str:
    """The raw text before its first ``?`` or ``#``, for a URL that does not parse. Lone
    surrogates become ``?`` so the message can always be encoded."""
    for mark in ("?", "#"):
        raw = raw.split(mark, 1)[0]
    return raw.encode("utf-8", "replace").decode("utf-8")
