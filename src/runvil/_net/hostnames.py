"""Host names an operator lists: the named private hosts, and the one way a list entry is read.

The address guard refuses every internal address (:mod:`runvil._net.addresses`). An operator who
wants a model to read the company wiki names the hosts that may be internal, and nothing else:
:class:`PrivateHosts` is that list. An entry is

* ``wiki.corp.example``: that name exactly, on the default ports (80 and 443);
* ``*.corp.example``: any name *below* ``corp.example`` (not ``corp.example`` itself);
* either of those with ``:port`` (``localhost:8080``): that port only.

Entries are names, never addresses: an IP literal is refused when the list is read, because a
listed name is still resolved and its answers judged (:mod:`runvil._net.rules`), while a listed
address would skip that. Every entry and every host it is compared with is read by the WHATWG
host parser (lowercase, punycode), with one trailing dot ignored, so ``Wiki.Corp.Example.`` and
``wiki.corp.example`` are the same name.

**One spelling for every comparison.** Every place that compares two host names (the domain
lists, this list, the search endpoint locks, the connector's check of a request against its
permit, the proxy's ``NO_PROXY``) reads both through :func:`host_key`: lowercase, one trailing
dot dropped, nothing else. Layers that each stripped dots their own way (one here, all of them
in the connector) read ``secret.example.com..`` as two different names, and a blocked domain
was fetched. A name with an empty label (:func:`has_empty_label`: ``a..b``, ``.a``, ``a..``)
is not a DNS name at all; where an operator's host rules apply the fetch refuses it at
admission, and every matcher here treats it as matching nothing it could admit.

The same list serves the fetch (which hosts may resolve to private addresses and be reached
over ``http``) and the search providers (which declared endpoints may), so the rule is written
once, here and in :class:`~runvil._net.rules.NamedPrivate`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ada_url import URL, HostType

__all__ = [
    "DEFAULT_PORTS",
    "NO_PRIVATE_HOSTS",
    "PrivateHosts",
    "domain_entry",
    "domain_refused",
    "has_empty_label",
    "host_key",
    "normal_host",
]

#: The ports an entry without ``:port`` covers: the default ports of ``http`` and ``https``.
DEFAULT_PORTS: frozenset[int] = frozenset({80, 443})

#: What an entry may look like before the host parser reads its name: an optional ``*.``, a
#: name without URL punctuation, an optional ``:port``.
_ENTRY = re.compile(r"(?P<wild>\*\.)?(?P<name>[^\s/\\?#@:\[\]*%]+)(?::(?P<port>[0-9]{1,5}))?")


#: A parsed host name: ASCII labels of letters, digits, ``-`` and ``_``, one trailing dot at most.
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")


def host_key(host: str) -> str:
    """The one form in which two host names are compared: lowercase, without one trailing dot
    (the DNS root). Every other dot stays, so ``a..`` is ``a.``, never ``a``."""
    name = host.lower()
    return name[:-1] if name.endswith(".") else name


def has_empty_label(host: str) -> bool:
    """Whether ``host`` has an empty label: it is empty, starts with a dot, or holds two dots in
    a row, once one trailing dot (the root, not a label) is set aside."""
    name = host[:-1] if host.endswith(".") else host
    return not name or name.startswith(".") or name.endswith(".") or ".." in name


def domain_entry(entry: object, setting: str = "allowed_domains") -> str:
    """A ``allowed_domains`` / ``blocked_domains`` entry as the host parser writes it; raises
    ``ValueError`` naming the entry for anything that is not a domain name. The one reading of
    an entry, for the fetch policy, the configuration and the search tool alike."""
    if not isinstance(entry, str):
        raise ValueError(f"{setting} entry {entry!r} is not a string")
    if entry.strip().startswith(("*.", ".")):
        bare = entry.strip().lstrip("*.")
        raise ValueError(
            f"{setting} entry {entry!r}: write the domain itself ({bare}); it covers every "
            "subdomain"
        )
    try:
        return normal_host(entry.strip())
    except ValueError as err:
        raise ValueError(f"{setting} entry {entry!r} is {err}") from None


def domain_refused(host: str, allowed: tuple[str, ...], blocked: tuple[str, ...]) -> bool:
    """Whether an operator's domain lists refuse ``host``: a name equal to or below a
    ``blocked`` domain, or, when ``allowed`` is not empty, a name below none of them. Entries are
    :func:`normal_host` names; ``host`` is read through :func:`host_key`, and a name with an empty
    label is refused whenever a list is set (it has no one reading to compare). The fetch
    (every hop) and the search tool (every result row) ask this one question."""
    if not allowed and not blocked:
        return False
    if has_empty_label(host):
        return True
    name = host_key(host)
    if blocked and _below(name, blocked):
        return True
    return bool(allowed) and not _below(name, allowed)


def _below(name: str, domains: tuple[str, ...]) -> bool:
    return any(name == domain or name.endswith("." + domain) for domain in domains)


def normal_host(name: str) -> str:
    """``name`` as the WHATWG host parser writes it (lowercase, punycode), without one trailing
    dot. Raises ``ValueError`` for a name that is not a valid domain (an IP address included)."""
    try:
        parsed = URL(f"https://{name}/")
    except ValueError:
        raise ValueError("not a valid host name") from None
    if parsed.host_type != HostType.DEFAULT:
        raise ValueError("an IP address, not a host name")
    host: str = parsed.hostname
    if parsed.href != f"https://{host}/" or _NAME.fullmatch(host) is None:
        raise ValueError("not a valid host name")
    return host[:-1] if host.endswith(".") else host


class PrivateHosts:
    """The operator's named private hosts: which ``(host, port)`` targets may be internal.

    Build one with :meth:`parse`; an empty list (the default) lists nothing, and then every
    target is judged exactly as without the feature. :attr:`entries` keeps each entry in its
    normal written form (``*.corp.example``, ``localhost:8080``), for messages and
    ``runvil config``.
    """

    __slots__ = ("_exact", "_wild", "entries")

    def __init__(self) -> None:
        self.entries: tuple[str, ...] = ()
        self._exact: dict[str, frozenset[int]] = {}
        self._wild: tuple[tuple[str, int | None], ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str], *, setting: str = "private_hosts") -> PrivateHosts:
        """Read a list of entries. Raises ``ValueError`` naming the first bad entry and why
        (``{setting} entry 'x' ...``: the caller says where the list came from)."""
        if isinstance(entries, str):
            raise ValueError(f"{setting} must be a list of host names, not one string")
        hosts = cls()
        exact: dict[str, set[int]] = {}
        wild: list[tuple[str, int | None]] = []
        written: list[str] = []
        for entry in entries:
            if not isinstance(entry, str):
                raise ValueError(f"{setting} entry {entry!r} is not a string")
            match = _ENTRY.fullmatch(entry.strip())
            if match is None:
                raise ValueError(
                    f"{setting} entry {entry!r} must read NAME, *.NAME, NAME:PORT or "
                    "*.NAME:PORT"
                )
            try:
                name = normal_host(match["name"])
            except ValueError as err:
                raise ValueError(f"{setting} entry {entry!r} is {err}") from None
            port: int | None = None
            if match["port"] is not None:
                port = int(match["port"])
                if not 0 < port < 65536:
                    raise ValueError(f"{setting} entry {entry!r} has a port out of range")
            shown = ("*." if match["wild"] else "") + name + (f":{port}" if port else "")
            if shown not in written:
                written.append(shown)
            if match["wild"]:
                wild.append(("." + name, port))
            else:
                exact.setdefault(name, set()).update(DEFAULT_PORTS if port is None else {port})
        hosts.entries = tuple(written)
        hosts._exact = {name: frozenset(ports) for name, ports in exact.items()}
        hosts._wild = tuple(wild)
        return hosts

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __repr__(self) -> str:
        return f"PrivateHosts({list(self.entries)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrivateHosts) and set(self.entries) == set(other.entries)

    def __hash__(self) -> int:
        return hash(frozenset(self.entries))

    def match(self, host: str, port: int) -> bool:
        """Whether ``host`` (a WHATWG host: lowercase, punycode) on ``port`` is listed."""
        if not self.entries or has_empty_label(host):
            return False
        name = host_key(host)
        ports = self._exact.get(name)
        if ports is not None and port in ports:
            return True
        for suffix, wild_port in self._wild:
            if name.endswith(suffix) and (
                port in DEFAULT_PORTS if wild_port is None else port == wild_port
            ):
                return True
        return False

    def names(self, host: str) -> bool:
        """Whether ``host`` is listed on any port (for explaining a refusal, never for
        admitting one: :meth:`match` decides that)."""
        if has_empty_label(host):
            return False
        name = host_key(host)
        return name in self._exact or any(name.endswith(suffix) for suffix, _ in self._wild)


#: The empty list: nothing is a private host (the default everywhere).
NO_PRIVATE_HOSTS = PrivateHosts()
