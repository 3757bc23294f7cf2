"""The only HTTP client a search provider uses: locked to the provider's declared endpoints.

A provider's requests carry a secret (its API key) and a model-written query, so the client that
sends them may reach exactly the ``host:port`` pairs the provider declared, nothing else. It is
the guarded egress of :mod:`runvil._net` under the endpoint-locked admission rule
(:class:`~runvil._net.rules.EndpointLocked`):

* a URL whose host and port are not declared is refused before any lookup;
* redirects are never followed: a 3xx comes back to the provider as an error status, so a
  vendor (or anyone in its path) cannot bounce the key or the query to another host;
* the host is resolved through ``network.resolve`` and the answers judged by the blocked address
  table, except for an endpoint the operator declared private (``allow_private``, e.g. a
  self-hosted SearXNG on the LAN, or an endpoint named in ``private_hosts``): its answers are
  judged as a named private host's (private, CGNAT, loopback and unique-local addresses allowed;
  link-local, metadata, multicast and the rest never), and it may be reached over ``http``;
* the connection is made by the same guarded connector as every fetch: it dials only the
  approved addresses (routed with ``network.route``), checks every socket's destination as a
  last line, and TLS verifies the real host name;
* no proxy from the environment (the operator's ``proxy`` is a parameter: the endpoint is still
  resolved and approved here, and the proxy only gets a CONNECT to the approved address, see
  :mod:`runvil._net.proxy`), no cookies, a body bounded after decompression (a small
  compressed answer cannot inflate past the cap), and one deadline for the whole exchange,
  retry included.

Failures come back as :class:`ProviderError` with the messages every provider shares:
``request failed`` (nothing usable came back), ``reading response failed`` (the body broke
off), ``response body exceeded {n} bytes``. The precise reason goes to the ``runvil.web._search``
log, never into the message, and no secret is ever logged.

One retry is made on 429 or 5xx, after the ``Retry-After`` the server asked for (capped, and
only if the wait fits the deadline); the second answer is final either way.

**A fleet's shared pause.** Replicas of ``runvil mcp --http`` that share their state set
:data:`shared_pause` around a provider's search: a 429 the client would retry is then noted
there with the (capped) wait, and every send of any replica first waits out a pause noted for
the provider, so the others hold off as long as the vendor asked. When the rest of a pause does
not fit the send's deadline, the send answers with the 429 that asked for it, which the
provider turns into the very message it gives for a 429 of its own. Unset (one process), a
send never waits for another.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json as jsonlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlencode

from aiohttp import hdrs
from multidict import CIMultiDictProxy
from yarl import URL

from runvil._errors import ToolErrorKind
from runvil._net import DnsError, EndpointLocked, Network, NoAllowedAddress
from runvil._net.client import EgressClient, Head, ReadPlan, Transport
from runvil._net.decoding import ACCEPT_ENCODING, UnsupportedEncoding
from runvil._net.errors import (
    BodyTooLarge,
    BodyUnreadable,
    CertificateFailed,
    ConnectFailed,
    LookupFailed,
    RequestFailed,
)
from runvil._net.hostnames import PrivateHosts, host_key
from runvil._net.proxy import Proxies, ProxyRefused, proxy_setting
from runvil.web._search.provider import ProviderError, parse_endpoint

log = logging.getLogger("runvil.web.search")

DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 10.0
MAX_RETRY_WAIT = 10.0
DEFAULT_RETRY_WAIT = 1.0
ERROR_BODY_BYTES = 65_536
USER_AGENT = "runvil-search/0.1"


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


class SharedPause(Protocol):
    """Where replicas keep a vendor's request to wait (a 429's ``Retry-After``)."""

    async def pending(self) -> tuple[float, EgressResponse] | None:
        """Seconds left of a pause noted for the provider, and the answer that asked for it;
        None when there is none (or the shared state does not answer)."""
        ...

    async def pause(self, seconds: float, response: EgressResponse) -> None:
        """Note that the vendor asked to wait ``seconds`` with ``response``."""
        ...


#: Set by a face around one provider's search when replicas share the vendor's pauses (module
#: docstring); None: the process alone, as always.
shared_pause: ContextVar[SharedPause | None] = ContextVar("runvil_search_pause", default=None)


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
    and closes its own guarded session, so nothing outlives the call that made it.
    """

    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        network: Network | None = None,
        allow_private: bool = False,
        allow_http: bool = False,
        private_hosts: PrivateHosts | Iterable[str] = (),
        proxy: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_bytes: int = 1_048_576,
        user_agent: str = USER_AGENT,
        max_retry_wait: float = MAX_RETRY_WAIT,
        default_retry_wait: float = DEFAULT_RETRY_WAIT,
        transport: Transport | None = None,
    ) -> None:
        self.endpoints = frozenset(parse_endpoint(e) for e in endpoints)
        self.network = network if network is not None else Network()
        self.allow_private = allow_private
        listed = private_endpoints(self.endpoints, private_hosts)
        self.private = frozenset(self.endpoints if allow_private else listed)
        self.schemes = frozenset({"https", "http"} if allow_http else {"https"})
        self.rule = EndpointLocked(
            self.endpoints, private=self.private, schemes=self.schemes, logger=log
        )
        checked = proxy_setting(proxy)
        self._proxies = Proxies(checked, self.network) if checked else None
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.max_retry_wait = max_retry_wait
        self.default_retry_wait = default_retry_wait
        self.transport = transport
        """A test's response-level transport (:mod:`runvil._net.mock`); ``None``: the guard."""

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
        request_headers, body = _request_body(headers, json, form)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        pause = shared_pause.get()
        client = self._client()
        try:
            if pause is not None:
                held = await pause.pending()
                if held is not None:
                    wait, answer = held
                    if loop.time() + wait >= deadline:
                        log.info("search endpoint %s asked the fleet to wait %.2f s more; no "
                                 "time left to wait", host, wait)
                        return answer
                    log.info("search endpoint %s asked the fleet to wait; waiting %.2f s",
                             host, wait)
                    await asyncio.sleep(wait)
            retried = False
            while True:
                response = await self._attempt(
                    client, method, target, host, port, request_headers, body, truncate, deadline
                )
                if not retry_if(response):
                    return response
                wait = retry_delay(
                    response.headers, cap=self.max_retry_wait, default=self.default_retry_wait
                )
                if pause is not None and response.status == 429:
                    await pause.pause(wait, response)
                if retried:
                    return response
                if loop.time() + wait >= deadline:
                    log.info("search endpoint %s answered %d; no time left to retry", host,
                             response.status)
                    return response
                log.info("search endpoint %s answered %d; retrying in %.2f s", host,
                         response.status, wait)
                await asyncio.sleep(wait)
                retried = True
        finally:
            await client.aclose()

    # -- pieces ----------------------------------------------------------------------------
    def _check_target(self, target: URL) -> tuple[str, int]:
        host = host_key(target.raw_host or "")
        port = target.port
        if port is None or not self.rule.admits(target.scheme, host, port):
            log.warning(
                "refused a search request to %s://%s:%s: not a declared endpoint",
                target.scheme, host, port,
            )
            raise _request_failed()
        if target.raw_user is not None or target.raw_password is not None:
            log.warning("refused a search request carrying URL credentials")
            raise _request_failed()
        return host, port

    def _client(self) -> EgressClient:
        """The egress client for one send: its own guarded pool, closed when the send ends.
        aiohttp's silent resend of a request whose connection was reset is off
        (``retry_dropped``): our own rule is the only retry (once, on 429/5xx), and a reset is
        a transport failure."""
        return EgressClient(
            self.network,
            headers={
                hdrs.ACCEPT: "*/*",
                hdrs.ACCEPT_ENCODING: ACCEPT_ENCODING,
                hdrs.USER_AGENT: self.user_agent,
            },
            connect_timeout=self.connect_timeout,
            proxies=self._proxies,
            retry_dropped=False,
            transport=self.transport,
        )

    async def _attempt(
        self,
        client: EgressClient,
        method: str,
        target: URL,
        host: str,
        port: int,
        headers: Mapping[str, str],
        body: bytes | None,
        truncate: bool,
        deadline: float,
    ) -> EgressResponse:
        try:
            response = await client.request(
                self.rule,
                target,
                functools.partial(self._plan, truncate=truncate),
                method=method,
                headers=headers,
                body=body,
                deadline=deadline,
                host=host,
                port=port,
            )
        except NoAllowedAddress as refused:
            log.warning(
                "search endpoint %s has no allowed address (answers: %s); a private endpoint "
                "needs search.allow_private or a fetch.private_hosts entry", host,
                ", ".join(refused.answers) or "none",
            )
            raise _request_failed() from None
        except DnsError:
            log.warning("search endpoint %s: dns resolution failed (DnsError)", host)
            raise _request_failed() from None
        except LookupFailed as failed:
            log.warning("search endpoint %s: dns resolution failed (%s)", host, failed.cause)
            raise _request_failed() from None
        except ProxyRefused as refused:
            log.warning(
                "search endpoint %s: the proxy refused the tunnel (status %d)", host,
                refused.status,
            )
            raise _request_failed() from None
        except CertificateFailed:
            log.warning("search endpoint %s: certificate verification failed", host)
            raise _request_failed() from None
        except ConnectFailed as failed:
            log.warning("search endpoint %s: could not connect (%s)", host, failed.cause)
            raise _request_failed() from None
        except RequestFailed as failed:
            log.warning("search endpoint %s: request failed (%s)", host, failed.cause)
            raise _request_failed() from None
        except BodyTooLarge as too_large:
            raise _too_large(too_large.args[0]) from None
        except (BodyUnreadable, UnsupportedEncoding) as broken:
            name = broken.cause if isinstance(broken, BodyUnreadable) else "UnsupportedEncoding"
            log.warning("search response body broke off (%s)", name)
            raise ProviderError(ToolErrorKind.Transport, "reading response failed") from None
        ok = response.ok
        return EgressResponse(
            response.status, response.headers, response.body, response.cut if ok else False
        )

    def _plan(self, head: Head, *, truncate: bool) -> ReadPlan:
        """A 2xx body up to ``max_bytes`` (cut there with ``truncate``, else refused); an error
        status's body up to 64 KiB, cut there, and ``None`` when it cannot be read."""
        if 200 <= head.status < 300:
            return ReadPlan(self.max_bytes, keep_prefix=truncate)
        return ReadPlan(
            min(self.max_bytes, ERROR_BODY_BYTES), keep_prefix=True, keep_unreadable=True
        )


def private_endpoints(
    endpoints: Iterable[tuple[str, int]], private_hosts: PrivateHosts | Iterable[str]
) -> frozenset[tuple[str, int]]:
    """The ``(host, port)`` endpoints the operator's ``private_hosts`` list names. An endpoint
    that is an IP address is never named (entries are names)."""
    listed = (
        private_hosts
        if isinstance(private_hosts, PrivateHosts)
        else PrivateHosts.parse(private_hosts)
    )
    if not listed:
        return frozenset()
    return frozenset((host, port) for host, port in endpoints if listed.match(host, port))


def _request_body(
    headers: Mapping[str, str] | None, json: Any, form: Mapping[str, str] | None
) -> tuple[dict[str, str], bytes | None]:
    """The request's headers and body bytes: ``json`` as UTF-8 JSON, ``form`` URL-encoded (what
    aiohttp's own ``json=`` and ``data=`` make), with the matching Content-Type."""
    request_headers = dict(headers or {})
    if json is not None:
        request_headers.setdefault(hdrs.CONTENT_TYPE, "application/json")
        return request_headers, jsonlib.dumps(json).encode("utf-8")
    if form is not None:
        request_headers.setdefault(hdrs.CONTENT_TYPE, "application/x-www-form-urlencoded")
        return request_headers, urlencode(list(form.items()), doseq=True).encode("utf-8")
    return request_headers, None


def _request_failed() -> ProviderError:
    return ProviderError(ToolErrorKind.Transport, "request failed")


def _too_large(cap: int) -> ProviderError:
    return ProviderError(ToolErrorKind.Backend, f"response body exceeded {cap} bytes")
