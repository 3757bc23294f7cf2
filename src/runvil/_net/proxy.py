"""An egress proxy that keeps the address guard: CONNECT tunnels to approved addresses only.

Behind a company proxy, the usual client hands the proxy a host name and lets it resolve and
connect: the proxy then reaches whatever the name points at, internal addresses included, and
the client's own address checks see nothing. runvil does the opposite. Every hop is still
resolved and judged by its own admission rule (:mod:`runvil._net.rules`); only then does the
connector ask the proxy for a tunnel, ``CONNECT {approved address}:{port}``, and speak TLS
through it with the host *name* for SNI and certificate checks (and ``Host``). The proxy sees
approved addresses and nothing else, and a redirect is judged exactly as without a proxy.

The proxy itself is the operator's: its address may be private, its name is resolved through the
:class:`~runvil._net.network.Network` seam like any other, and no rule judges it. Credentials
come only from the configured URL (``http://user:password@proxy.corp:3128``) and go only into the
``Proxy-Authorization`` header of the CONNECT request: never into a message, a log line, a
``repr`` or ``runvil config`` (:func:`masked`).

``"env"`` reads ``HTTPS_PROXY`` (``https`` targets), ``HTTP_PROXY`` (``http`` targets, the
operator's private hosts), ``ALL_PROXY`` as the fallback of both, lowercase forms included, and
``NO_PROXY``; nothing reads them otherwise. A proxy that answers the CONNECT with anything but a
2xx raises :class:`ProxyRefused`, which each caller reports in its own words, naming the URL and
never the proxy.

This module speaks plain sockets; the hook that hands the tunnel to aiohttp is in
:mod:`runvil._net.connector`, the one module that touches aiohttp's internals.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import re
import socket
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from runvil._net.hostnames import host_key
from runvil._net.network import Network
from runvil._net.permit import DialPermit, DialRefused, normalise_endpoint
from runvil._net.rules import approve, operator_endpoints

__all__ = [
    "ENV",
    "Proxies",
    "Proxy",
    "ProxyRefused",
    "env_proxies",
    "masked",
    "parse_proxy",
    "proxy_setting",
]

log = logging.getLogger("runvil.proxy")

#: The setting value that reads the proxy from the environment.
ENV = "env"
#: Values that mean "no proxy" (the default when the setting is absent).
_DIRECT = frozenset({"", "none", "direct"})
#: A CONNECT response head larger than this is not a proxy's answer.
MAX_RESPONSE_HEAD = 16_384
_STATUS = re.compile(rb"HTTP/1\.[01] ([0-9]{3})(?: [^\r\n]*)?\r\n")

_SHAPE = 'an http:// URL with a host (http://[user:password@]host[:port]), "env" or "none"'


class ProxyRefused(Exception):
    """The proxy answered the CONNECT with a status other than 2xx (``status``), or with
    something that is not an HTTP answer (``status`` 0). Not an ``OSError``: no layer of aiohttp
    may mistake it for a routine connect failure."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the proxy refused the tunnel (status {status})")
        self.status = status


class Proxy:
    """One proxy: where it listens and the ``Proxy-Authorization`` value, if any. Its ``repr``
    never shows the credentials."""

    __slots__ = ("authorization", "host", "port")

    def __init__(self, host: str, port: int, authorization: str | None = None) -> None:
        self.host = host
        self.port = port
        self.authorization = authorization

    def __repr__(self) -> str:
        auth = "********@" if self.authorization else ""
        return f"Proxy('http://{auth}{self.host}:{self.port}')"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Proxy) and (self.host, self.port, self.authorization) == (
            other.host, other.port, other.authorization,
        )

    def __hash__(self) -> int:
        return hash((self.host, self.port))


def parse_proxy(url: str) -> Proxy:
    """``http://[user:password@]host[:port]`` as a :class:`Proxy` (port 80 when absent).

    Raises ``ValueError`` with a message that never quotes ``url``: it may hold a password.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValueError(f"the proxy must be {_SHAPE}") from None
    if parts.scheme.lower() != "http" or not parts.hostname:
        raise ValueError(f"the proxy must be {_SHAPE}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"the proxy must be {_SHAPE}, with no path")
    authorization = None
    if parts.username is not None or parts.password is not None:
        user = unquote(parts.username or "")
        password = unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        authorization = f"Basic {token}"
    return Proxy(parts.hostname.lower(), port if port is not None else 80, authorization)


def proxy_setting(value: object) -> str | None:
    """A ``proxy`` setting checked: ``None`` (direct), ``"env"``, or a proxy URL as given.
    Raises ``ValueError`` (never quoting the value) for anything else."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"the proxy must be {_SHAPE}")
    text = value.strip()
    if text.lower() in _DIRECT:
        return None
    if text.lower() == ENV:
        return ENV
    parse_proxy(text)
    return text


def masked(value: str | None) -> str | None:
    """A proxy setting as ``runvil config`` shows it: credentials replaced with ``********``."""
    if value is None or value == ENV:
        return value
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "********"
    auth = "********@" if parts.username is not None or parts.password is not None else ""
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{auth}{shown}" + (f":{port}" if port is not None else "")


class Proxies:
    """Which proxy a request takes, and the tunnel through it.

    Built once per session from the setting (a URL, or ``"env"`` read here, once) and the
    network seam the proxy's own name is resolved through.
    """

    def __init__(
        self, setting: str, network: Network, environ: Mapping[str, str] | None = None
    ) -> None:
        self.network = network
        self._no_proxy: tuple[str, ...] = ()
        if setting == ENV:
            self._by_scheme, self._no_proxy = env_proxies(
                os.environ if environ is None else environ
            )
        else:
            proxy = parse_proxy(setting)
            self._by_scheme = {"https": proxy, "http": proxy}

    def __repr__(self) -> str:
        return f"Proxies({self._by_scheme!r}, no_proxy={list(self._no_proxy)!r})"

    def proxy_for(self, scheme: str, host: str) -> Proxy | None:
        """The proxy a request to ``scheme://host`` goes through, or ``None`` (direct)."""
        proxy = self._by_scheme.get(scheme)
        if proxy is None or not self._no_proxy:
            return proxy
        name = host_key(host)
        if any(name == entry or name.endswith("." + entry) for entry in self._no_proxy):
            return None
        return proxy

    async def open(self, proxy: Proxy, permit: DialPermit) -> tuple[socket.socket, tuple[str, int]]:
        """A socket tunnelled through ``proxy`` to the first of ``permit``'s approved addresses
        the proxy connects to, in answer order, and that address as routed (what the pooled
        connection is checked against later).

        Raises :class:`ProxyRefused` when the proxy refused every address, ``OSError`` when it
        could not be reached or the tunnel broke, :class:`DialRefused` for a proxy address
        outside its own permit. Cancellation closes whatever is open.
        """
        refused: ProxyRefused | None = None
        failure: OSError | None = None
        for address, routed in zip(permit.addresses, permit.routed(), strict=True):
            try:
                sock = await self._tunnel(proxy, address, permit.port)
            except ProxyRefused as err:
                log.info(
                    "the proxy refused a tunnel to %s port %d for %s (status %d)",
                    address, permit.port, permit.host, err.status,
                )
                refused = err
                continue
            except OSError as err:
                failure = err
                continue
            return sock, routed
        if refused is not None:
            raise refused
        raise failure if failure is not None else OSError("no address to tunnel to")

    async def _tunnel(self, proxy: Proxy, address: str, port: int) -> socket.socket:
        sock = await self._connect(proxy)
        try:
            await _handshake(sock, proxy, address, port)
        except BaseException:
            sock.close()
            raise
        return sock

    async def _connect(self, proxy: Proxy) -> socket.socket:
        """A connected non-blocking socket to the proxy: its name resolved through the seam
        (any address: the operator named it), each answer tried in order."""
        permit = await approve(
            self.network,
            operator_endpoints([(proxy.host, proxy.port)], logger=log),
            proxy.host,
            proxy.port,
        )
        loop = asyncio.get_running_loop()
        last: OSError | None = None
        for ip, port in permit.routed():
            if not permit.allows(ip, port):  # the route gave something that is not an address
                raise DialRefused(f"proxy address {ip}:{port} is not approved")
            family = socket.AF_INET6 if ":" in ip else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, (ip, port))
            except OSError as err:
                sock.close()
                last = err
                continue
            except BaseException:
                sock.close()
                raise
            return sock
        raise last if last is not None else OSError("the proxy has no address")


async def _handshake(sock: socket.socket, proxy: Proxy, address: str, port: int) -> None:
    """``CONNECT address:port`` and its answer, read exactly to the end of the head."""
    ip, port = normalise_endpoint((address, port))
    target = f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"
    lines = [f"CONNECT {target} HTTP/1.1", f"Host: {target}"]
    if proxy.authorization is not None:
        lines.append(f"Proxy-Authorization: {proxy.authorization}")
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, ("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
    head = b""
    while b"\r\n\r\n" not in head:
        if len(head) > MAX_RESPONSE_HEAD:
            raise ProxyRefused(0)
        chunk = await loop.sock_recv(sock, 4096)
        if not chunk:
            raise ConnectionResetError("the proxy closed the connection during CONNECT")
        head += chunk
    head, _, rest = head.partition(b"\r\n\r\n")
    status = _STATUS.match(head + b"\r\n")
    if status is None:
        raise ProxyRefused(0)
    code = int(status.group(1))
    if not 200 <= code < 300:
        raise ProxyRefused(code)
    if rest:
        # Nothing may arrive before the client speaks (TLS, or an HTTP request): bytes here
        # are not the target's, and using them would let the proxy forge the answer.
        raise ProxyRefused(0)


def env_proxies(
    env: Mapping[str, str],
) -> tuple[dict[str, Proxy | None], tuple[str, ...]]:
    """The proxies the environment names, by target scheme, and its ``NO_PROXY`` suffixes.

    Raises ``ValueError`` naming the variable (never its value) for one that is not a proxy URL.
    A scheme-less ``host:port`` is read as ``http://host:port``, as curl reads it.
    """
    every = _env_proxy(env, "ALL_PROXY")
    by_scheme = {
        "https": _env_proxy(env, "HTTPS_PROXY") or every,
        "http": _env_proxy(env, "HTTP_PROXY") or every,
    }
    no_proxy = tuple(
        host_key(entry.strip().lstrip("*").lstrip("."))
        for entry in (_env(env, "NO_PROXY") or "").split(",")
        if entry.strip()
    )
    if "" in no_proxy:  # NO_PROXY=* : nothing goes through a proxy
        return {"https": None, "http": None}, ()
    return by_scheme, no_proxy


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name) or env.get(name.lower())
    return value.strip() if value and value.strip() else None


def _env_proxy(env: Mapping[str, str], name: str) -> Proxy | None:
    value = _env(env, name)
    if value is None:
        return None
    if "://" not in value:
        value = f"http://{value}"
    try:
        return parse_proxy(value)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
