"""The only HTTP client a search provider uses: locked to the provider's declared endpoints.

A provider's requests carry a secret (its API key) and a model-written query, so the client that
sends them may reach exactly the ``host:port`` pairs the provider declared, nothing else:

* a URL whose host and port are not declared is refused before any lookup;
* redirects are never followed: a 3xx comes back to the provider as an error status, so a
  vendor (or anyone in its path) cannot bounce the key or the query to another host;
* the host is resolved through ``network.resolve`` and the answers judged by the fetch address
  policy (:func:`runvil.web.fetch.addresses.allowed_addresses`), unless the operator declared a
  private endpoint (``allow_private``, e.g. a self-hosted SearXNG on the LAN);
* the approved address is routed with ``network.route`` and dialled directly (the URL carries
  the address, TLS verifies the real host name through ``server_hostname`` and ``Host`` names
  it), and a socket factory refuses any other destination as a last line;
* no proxy from the environment, no cookies, a bounded body, and one deadline for the whole
  exchange, retry included.

Failures come back as :class:`ProviderError` with the messages every provider shares:
``request failed`` (nothing usable came back), ``reading response failed`` (the body broke
off), ``response body exceeded {n} bytes``. The precise reason goes to the ``runvil.web.search``
log, never into the message, and no secret is ever logged.

One retry is made on 429 or 5xx, after the ``Retry-After`` the server asked for (capped, and
only if the wait fits the deadline); the second answer is final either way.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import logging
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from runvil._net import DnsError, Network, allowed_addresses
from runvil.errors import ToolErrorKind
from runvil.web.search.provider import ProviderError, parse_endpoint

log = logging.getLogger("runvil.web.search")

DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 10.0
MAX_RETRY_WAIT = 10.0
DEFAULT_RETRY_WAIT = 1.0
ERROR_BODY_BYTES = 65_536
USER_AGENT = "runvil-search/0.1"

_CHUNK = 65_536


@dataclass(frozen=True)
class EgressResponse:
    """A response as the provider sees it. ``body`` is ``None`` only for an error status whose
    body could not be read; ``truncated`` says a 2xx body was cut at the cap (``truncate=True``)."""

    status: int
    headers: CIMultiDictProxy[str]
    body: bytes | None
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def retry_on_status(response: EgressResponse) -> bool:
    """The default retry rule: once on 429 (rate limited) or any 5xx."""
    return response.status == 429 or 500 <= response.status <= 599


def retry_delay(
    headers: Mapping[str, str],
    *,
    cap: float = MAX_RETRY_WAIT,
    default: float = DEFAULT_RETRY_WAIT,
    now: float | None = None,
) -> float:
    """Seconds to wait before the retry: ``Retry-After`` (seconds or an HTTP date), else the
    first ``X-RateLimit-Reset`` window (Brave's documented signal), else ``default``; never more
    than ``cap`` and never negative."""
    wait: float | None = None
    retry_after = headers.get("Retry-After")
    if retry_after is not None:
        wait = _seconds(retry_after)
        if wait is None:
            try:
                when = email.utils.parsedate_to_datetime(retry_after.strip())
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None and when.tzinfo is not None:
                wait = when.timestamp() - (time.time() if now is None else now)
    if wait is None and "X-RateLimit-Reset" in headers:
        wait = _seconds(headers["X-RateLimit-Reset"].split(",", 1)[0])
    if wait is None:
        wait = default
    return min(max(wait, 0.0), cap)


def _seconds(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and value != float("inf") else None


class Egress:
    """An HTTP client that can only reach ``endpoints`` (each ``host:port``).

    A provider makes one per configuration and calls :meth:`send` per search; each send opens
    and closes its own connections, so nothing outlives the call that made it.
    """

    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        network: Network | None = None,
        allow_private: bool = False,
        allow_http: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_bytes: int = 1_048_576,
        user_agent: str = USER_AGENT,
        max_retry_wait: float = MAX_RETRY_WAIT,
        default_retry_wait: float = DEFAULT_RETRY_WAIT,
    ) -> None:
        self.endpoints = frozenset(parse_endpoint(e) for e in endpoints)
        self.network = network if network is not None else Network()
        self.allow_private = allow_private
        self.schemes = frozenset({"https", "http"} if allow_http else {"https"})
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.max_retry_wait = max_retry_wait
        self.default_retry_wait = default_retry_wait

    async def send(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        form: Mapping[str, str] | None = None,
        truncate: bool = False,
        retry_if: Callable[[EgressResponse], bool] = retry_on_status,
    ) -> EgressResponse:
        """Send one request (and at most one retry) within the deadline.

        A 2xx body over ``max_bytes`` fails with ``response body exceeded {max_bytes} bytes``,
        or is cut at the cap when ``truncate`` is set. Any status is returned as is; deciding
        what an error status means is the provider's job.
        """
        target = URL(url)
        if params:
            target = target.with_query(dict(params))
        host, port = self._check_target(target)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        approved: set[tuple[str, int]] = set()
        async with self._session(approved) as session:
            retried = False
            while True:
                response = await self._attempt(
                    session, approved, method, target, host, port, headers, json, form, truncate,
                    deadline,
                )
                if retried or not retry_if(response):
                    return response
                wait = retry_delay(
                    response.headers, cap=self.max_retry_wait, default=self.default_retry_wait
                )
                if loop.time() + wait >= deadline:
                    log.info("search endpoint %s answered %d; no time left to retry", host,
                             response.status)
                    return response
                log.info("search endpoint %s answered %d; retrying in %.2f s", host,
                         response.status, wait)
                await asyncio.sleep(wait)
                retried = True

    # -- pieces ----------------------------------------------------------------------------
    def _check_target(self, target: URL) -> tuple[str, int]:
        host = (target.raw_host or "").lower().rstrip(".")
        port = target.port
        if target.scheme not in self.schemes or port is None or (host, port) not in self.endpoints:
            log.warning(
                "refused a search request to %s://%s:%s: not a declared endpoint",
                target.scheme, host, port,
            )
            raise _request_failed()
        if target.raw_user is not None or target.raw_password is not None:
            log.warning("refused a search request carrying URL credentials")
            raise _request_failed()
        return host, port

    def _session(self, approved: set[tuple[str, int]]) -> aiohttp.ClientSession:
        def checked_socket(addr_info: Any) -> socket.socket:
            family, type_, proto, _canon, sockaddr = addr_info
            if (_normal_ip(str(sockaddr[0])), int(sockaddr[1])) not in approved:
                raise OSError(f"refused to dial {sockaddr[0]}: not an approved search address")
            return socket.socket(family, type_, proto)

        connector = aiohttp.TCPConnector(
            use_dns_cache=False,
            ssl=self.network.ssl_context,
            socket_factory=checked_socket,
            limit=0,
        )
        session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            timeout=aiohttp.ClientTimeout(total=None, connect=self.connect_timeout),
            headers={"User-Agent": self.user_agent},
            raise_for_status=False,
        )
        # aiohttp silently resends an idempotent request once when the connection is reset.
        # Our own rule is the only retry (once, on 429/5xx): a reset is a transport failure and
        # fails the call. There is no public switch; aiohttp's own test client flips this one.
        session._retry_connection = False
        return session

    async def _addresses(self, host: str, deadline: float) -> list[str]:
        if _is_ip(host):
            answers = [host]
        else:
            try:
                async with asyncio.timeout_at(
                    min(deadline, asyncio.get_running_loop().time() + self.connect_timeout)
                ):
                    answers = list(await self.network.resolve(host))
            except (DnsError, TimeoutError, OSError) as exc:
                log.warning("search endpoint %s: dns resolution failed (%s)", host,
                            type(exc).__name__)
                raise _request_failed() from None
        allowed = answers if self.allow_private else allowed_addresses(host, answers)
        if not allowed:
            log.warning(
                "search endpoint %s has no allowed address (answers: %s); a private endpoint "
                "needs allow_private=True", host, ", ".join(answers) or "none",
            )
            raise _request_failed()
        return allowed

    async def _attempt(
        self,
        session: aiohttp.ClientSession,
        approved: set[tuple[str, int]],
        method: str,
        target: URL,
        host: str,
        port: int,
        headers: Mapping[str, str] | None,
        json: Any,
        form: Mapping[str, str] | None,
        truncate: bool,
        deadline: float,
    ) -> EgressResponse:
        request_headers = CIMultiDict(headers or {})
        request_headers["Host"] = _host_header(target, host, port)
        https = target.scheme == "https"
        addresses = await self._addresses(host, deadline)
        failure = "no address answered"
        for ip in addresses:
            dial_host, dial_port = self.network.route(ip, port)
            approved.add((_normal_ip(dial_host), dial_port))
            pinned = target.with_host(dial_host).with_port(dial_port)
            try:
                async with asyncio.timeout_at(deadline):
                    response = await session.request(
                        method,
                        pinned,
                        headers=request_headers,
                        json=json,
                        data=dict(form) if form is not None else None,
                        allow_redirects=False,
                        server_hostname=host if https else None,
                    )
            except aiohttp.ClientConnectorCertificateError:
                log.warning("search endpoint %s (%s): certificate verification failed", host, ip)
                raise _request_failed() from None
            except aiohttp.ClientConnectorError as exc:
                failure = f"{ip}: {type(exc).__name__}"
                continue  # the next approved address, in answer order
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                log.warning("search endpoint %s (%s): request failed (%s)", host, ip,
                            type(exc).__name__)
                raise _request_failed() from None
            async with response:
                return await self._read(response, truncate, deadline)
        log.warning("search endpoint %s: could not connect (%s)", host, failure)
        raise _request_failed()

    async def _read(
        self, response: aiohttp.ClientResponse, truncate: bool, deadline: float
    ) -> EgressResponse:
        status = response.status
        ok = 200 <= status < 300
        cap = self.max_bytes if ok else min(self.max_bytes, ERROR_BODY_BYTES)
        if ok and not truncate and (response.content_length or 0) > cap:
            raise _too_large(cap)
        body: bytes | None
        truncated = False
        try:
            async with asyncio.timeout_at(deadline):
                body, truncated = await _read_capped(response, cap, cut=truncate or not ok)
        except _TooLarge:
            raise _too_large(cap) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            if ok:
                log.warning("search response body broke off (%s)", type(exc).__name__)
                raise ProviderError(ToolErrorKind.Transport, "reading response failed") from None
            body = None
        return EgressResponse(status, response.headers, body, truncated if ok else False)


class _TooLarge(Exception):
    pass


async def _read_capped(
    response: aiohttp.ClientResponse, cap: int, *, cut: bool
) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_CHUNK):
        if size + len(chunk) > cap:
            if not cut:
                raise _TooLarge
            chunks.append(chunk[: cap - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _request_failed() -> ProviderError:
    return ProviderError(ToolErrorKind.Transport, "request failed")


def _too_large(cap: int) -> ProviderError:
    return ProviderError(ToolErrorKind.Backend, f"response body exceeded {cap} bytes")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _normal_ip(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host.split("%", 1)[0]))
    except ValueError:
        return host


def _host_header(target: URL, host: str, port: int) -> str:
    name = f"[{host}]" if ":" in host else host
    default = 443 if target.scheme == "https" else 80
    return name if port == default else f"{name}:{port}"
