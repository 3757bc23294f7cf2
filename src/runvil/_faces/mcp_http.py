"""The streamable HTTP MCP transport's guards: which Host may be served, and how much request data
the server holds at once.

**DNS rebinding.** A web page can point a name it controls (``evil.example``) at 127.0.0.1 and
then drive a server on loopback from the visitor's browser; what gives it away is the ``Host``
header (and ``Origin``), which still carry the page's name. The SDK checks them only for a server
bound to exactly ``127.0.0.1``, ``localhost`` or ``::1``, and accepts any port there. This guard
checks every request on every bind against the address actually bound:

* a specific address (any of 127.0.0.0/8, ``::1``, or a non-loopback address or name given
  explicitly): ``Host`` must name that address or the name it was given, with the bound port
  (or no port when it is 80); ``localhost`` also counts for 127.0.0.1 and ``::1``;
* a wildcard (``0.0.0.0``, ``::``): the server has no one address, so ``Host`` must be an IP
  literal or ``localhost``, on any port (port mappings change it). A rebinding page can only
  ever send its own name, never an IP literal;
* ``Origin``, when present, must be ``http://`` followed by a ``Host`` value the rule accepts.

An operator who serves the server under names of its own (a Kubernetes Service's DNS name,
``runvil.tools.svc.cluster.local``) lists them (``[mcp] allowed_hosts``, ``--allow-host``):
exact names, or ``*.suffix`` for every name below a suffix, accepted in ``Host`` (on any port:
a Service or a balancer may map ports) besides what the bind accepts. A rebinding page's own
name is never on the operator's list, so the guard holds; the list is empty by default.

A refused request gets the SDK's own answers: 421 ``Invalid Host header`` or 403 ``Invalid
Origin header``.

**Request bodies.** The SDK refuses a body over 4 MiB but holds any number of them at once. This
guard reads each body before the SDK sees it and counts it against a process-wide budget
(:data:`BODY_BUDGET`) until its response is complete; a request that would push past it gets
503 at once. With uvicorn's connection limit (:data:`MAX_CONNECTIONS`) this bounds what clients
can make the server hold, whatever they send.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "BODY_BUDGET",
    "MAX_CONNECTIONS",
    "MAX_REQUEST_BYTES",
    "Audience",
    "HttpGuard",
    "check_allowed_hosts",
]

#: The largest request body (one JSON-RPC message): the SDK's own default, kept explicit so the
#: stdio transport's line limit can be the same.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Bytes of request bodies the server holds at once, over all requests it is still answering.
BODY_BUDGET = 64 * 1024 * 1024
#: Connections and requests uvicorn serves at once; past it, 503 before anything is read.
MAX_CONNECTIONS = 1024

TOO_LARGE = "Request body too large"
BUSY = (
    "runvil mcp is busy: the requests it is answering hold "
    f"{BODY_BUDGET // (1024 * 1024)} MiB of request bodies; try again shortly"
)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Audience:
    """The ``Host`` values a server bound to one address answers to."""

    names: frozenset[str]
    """Host names and canonical IP addresses (no brackets), lower case."""
    port: int
    any_ip_literal: bool = False
    """A wildcard bind: any IP literal, and ``localhost``, on any port."""
    allowed: tuple[str, ...] = ()
    """The operator's names (:func:`check_allowed_hosts`), accepted on any port."""

    @classmethod
    def for_bind(
        cls, given: str, bound: str, port: int, allowed: tuple[str, ...] = ()
    ) -> Audience:
        """The audience of a server asked to listen on ``given`` and bound to ``bound``:``port``
        (``bound`` is the address the socket reports), and answering the operator's
        ``allowed`` names too."""
        address = _ip(bound.split("%", 1)[0])
        if address is not None and address.is_unspecified:
            return cls(frozenset({"localhost"}), port, any_ip_literal=True, allowed=allowed)
        names = {given.lower().rstrip("."), bound.lower()}
        given_ip = _ip(given)
        if given_ip is not None:
            names.add(str(given_ip))
        if address is not None and str(address) in ("127.0.0.1", "::1"):
            names.add("localhost")
        return cls(frozenset(names), port, allowed=allowed)

    def allows_host(self, value: str) -> bool:
        """Whether a request's ``Host`` header names this server."""
        parsed = _split_host(value)
        if parsed is None:
            return False
        name, port, is_ip = parsed
        if not is_ip and self.allowed and _listed(name.rstrip("."), self.allowed):
            return True
        if self.any_ip_literal:
            return is_ip or name == "localhost"
        return name in self.names and port == self.port

    def allows_origin(self, value: str) -> bool:
        """Whether an ``Origin`` header is a page served from this server's own address."""
        scheme, sep, rest = value.partition("://")
        return sep == "://" and scheme.lower() == "http" and self.allows_host(rest)


_NAME_LABEL = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def check_allowed_hosts(entries: tuple[str, ...], where: str) -> tuple[str, ...]:
    """The operator's host names, lower case: each an exact DNS name (``runvil.tools.svc``) or
    ``*.`` and a suffix of at least two labels (``*.tools.svc``); never an IP address (IP
    literals are already judged by the bind) nor a port. Raises ``ValueError`` naming ``where``
    and the first bad entry."""
    checked = []
    for entry in entries:
        name = entry.strip().lower().rstrip(".")
        bare = name[2:] if name.startswith("*.") else name
        labels = bare.split(".")
        if (
            not bare or len(bare) > 253 or _ip(bare) is not None
            or any(not label or len(label) > 63 or not set(label) <= _NAME_LABEL
                   or label[0] == "-" or label[-1] == "-" for label in labels)
            or (name.startswith("*.") and len(labels) < 2)
        ):
            raise ValueError(
                f"{where}: {entry!r} is not a host name or *.suffix (no port, no IP address)"
            )
        checked.append(name)
    return tuple(checked)


def _listed(name: str, allowed: tuple[str, ...]) -> bool:
    """Whether ``name`` (lower case) is one of ``allowed`` or below one of its ``*.`` suffixes."""
    for entry in allowed:
        if entry.startswith("*."):
            if name.endswith(entry[1:]) and len(name) > len(entry) - 1:
                return True
        elif name == entry:
            return True
    return False


def _split_host(value: str) -> tuple[str, int, bool] | None:
    """``(name, port, is_ip_literal)`` of a ``Host`` value; None when it is malformed. The
    port defaults to 80 (plain HTTP); an IP literal comes back in canonical form."""
    value = value.strip()
    if value.startswith("["):
        inner, sep, rest = value[1:].partition("]")
        address = _ip(inner) if sep else None
        if address is None or address.version != 6:
            return None
        name, is_ip, port_text = str(address), True, rest
        if port_text and not port_text.startswith(":"):
            return None
        port_text = port_text[1:]
        has_port = bool(rest)
    else:
        name, has_port_sep, port_text = value.rpartition(":")
        if not has_port_sep:
            name, port_text = value, ""
        has_port = bool(has_port_sep)
        address = _ip(name)
        if address is not None and address.version != 4:
            return None  # an IPv6 literal must be bracketed
        is_ip = address is not None
        name = str(address) if address is not None else name.lower()
    if not name or any(c in name for c in "/@ \t?#"):
        return None
    if has_port:
        if not port_text.isascii() or not port_text.isdigit() or len(port_text) > 5:
            return None
        port = int(port_text)
    else:
        port = 80
    return name, port, is_ip


class HttpGuard:
    """ASGI middleware in front of the SDK's app: the Host/Origin check, then the body budget."""

    def __init__(
        self,
        app: ASGIApp,
        audience: Audience,
        *,
        max_body: int = MAX_REQUEST_BYTES,
        budget: int = BODY_BUDGET,
    ) -> None:
        self.app = app
        self.audience = audience
        self.max_body = max_body
        self.budget = budget
        self.held = 0
        """Bytes of request bodies held by requests still being answered."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not self.audience.allows_host(headers.get("host", "")):
            await Response("Invalid Host header", status_code=421)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and not self.audience.allows_origin(origin):
            await Response("Invalid Origin header", status_code=403)(scope, receive, send)
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            await Response(TOO_LARGE, status_code=413)(scope, receive, send)
            return
        taken = 0
        try:
            messages: deque[Message] = deque()
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    break
                size = len(message.get("body", b""))
                if taken + size > self.max_body:
                    await Response(TOO_LARGE, status_code=413)(scope, receive, send)
                    return
                if self.held + size > self.budget:
                    await Response(BUSY, status_code=503)(scope, receive, send)
                    return
                taken += size
                self.held += size
                if not message.get("more_body", False):
                    break

            async def replay() -> Message:
                if messages:
                    return messages.popleft()
                return await receive()

            await self.app(scope, replay, send)
        finally:
            self.held -= taken
