"""The typed network errors the egress client raises: one vocabulary for every caller.

:class:`~runvil._net.client.EgressClient` turns whatever aiohttp, the sockets, the decoders or a
deadline raised into one of these, so the fetch, the search providers and the model clients each
map a short, fixed list of outcomes to their own words instead of catching aiohttp's exception
tree themselves. Besides these, a request can end in the lookup's own
:class:`~runvil._net.network.DnsError`, the rule's
:class:`~runvil._net.rules.NoAllowedAddress`, the operator's proxy's
:class:`~runvil._net.proxy.ProxyRefused`, :class:`BodyTooLarge` and
:class:`~runvil._net.decoding.UnsupportedEncoding`.

``cause`` is the name of the exception that was turned into the typed one
(``ClientConnectorError``, ``TimeoutError``, ...): the model clients quote it and the search
providers log it. The original exception is chained as ``__cause__`` for a debugger, never
shown.

A light module: naming the errors loads no HTTP stack.
"""

from __future__ import annotations

__all__ = [
    "BodyTooLarge",
    "BodyUnreadable",
    "CertificateFailed",
    "ConnectFailed",
    "LookupFailed",
    "NetworkError",
    "RequestFailed",
    "TimedOut",
]


class NetworkError(Exception):
    """A request failed on the network; ``cause`` names what failed underneath."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class LookupFailed(NetworkError):
    """The lookup itself broke (it ran out of time, or the resolver raised an ``OSError``); a
    name that does not resolve is the resolver's :class:`~runvil._net.network.DnsError`."""


class RequestFailed(NetworkError):
    """No response head came back: the connection, the request or the head failed."""


class ConnectFailed(RequestFailed):
    """No connection could be made to any approved address."""


class CertificateFailed(ConnectFailed):
    """The server's TLS certificate did not verify against the trusted CAs. ``reason`` is the
    verifier's reason (``unable to get local issuer certificate``) and ``verify_code`` its
    OpenSSL code (None when it gave none): a person's hint reads them, since the codes of an
    unknown CA say the fix may be a CA bundle (:mod:`runvil._net.trust`)."""

    def __init__(self, cause: str, reason: str = "", verify_code: int | None = None) -> None:
        super().__init__(cause)
        self.reason = reason
        self.verify_code = verify_code


class TimedOut(RequestFailed):
    """The connect timeout (or aiohttp's socket read timeout) passed before the head came."""


class BodyUnreadable(NetworkError):
    """The head came, but the body broke off, its coding was corrupt, or the deadline passed
    while it was arriving."""


class BodyTooLarge(Exception):
    """The decoded body is longer than the cap (and the caller asked for no prefix)."""
