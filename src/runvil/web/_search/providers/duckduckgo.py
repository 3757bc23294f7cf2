"""DuckDuckGo's HTML endpoint: the keyless default (``POST https://html.duckduckgo.com/html/``).

There is no API, so this provider reads the result page, defensively: at most 1 MiB of it, and
of that no more than its first 4,096 start tags, is parsed (the results sit at the top), with a
forgiving HTML parser, keeping only organic result
blocks (ads and ``y.js`` links dropped) and unwrapping DuckDuckGo's ``/l/?uddg=`` redirect links
to the real target, so a follow-up fetch goes to the page and not through DuckDuckGo.

DuckDuckGo throttles per address and answers a throttled client with a bot-challenge page
(usually status 202, sometimes 200 or 403). That page is reported as a Transport error saying the
search was rate limited (never as "no results"), and the provider then stays quiet for a
cool-down instead of prolonging the block. Requests are made one at a time, spaced out.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from urllib.parse import parse_qs, urlsplit

from selectolax.lexbor import LexborHTMLParser

from runvil._errors import ToolErrorKind
from runvil._net import Network
from runvil._net.client import Transport
from runvil.web._search.egress import DEFAULT_TIMEOUT, Egress, EgressResponse
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from runvil.web._search.providers._common import (
    backend_error,
    describe_error_body,
    filter_domains,
    hostname_of,
    query_with_operators,
    truncate,
    unreadable_error,
)

URL = "https://html.duckduckgo.com/html/"
ENDPOINT = "html.duckduckgo.com:443"
#: How much of a result page is parsed.
MAX_PAGE_BYTES = 1_048_576
#: Start tags parsed at most. The HTML tree builder's cost grows with the square of the nesting
#: depth (a megabyte of nested ``<div>`` takes minutes, on the event loop), and no element can
#: nest deeper than the start tags before it, so the page is cut before its 4,097th: a real
#: result page has well under a thousand. Counted generously (void elements, and a ``<`` plus
#: letter anywhere, script and comments included), so the cut only comes earlier.
MAX_START_TAGS = 4096
_START_TAG = re.compile(r"<[A-Za-z]")
#: DuckDuckGo serves its HTML page to browsers; a library User-Agent is challenged at once.
BROWSER_USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

DATE_FILTERS = {"pd": "d", "pw": "w", "pm": "m", "py": "y"}
SAFESEARCH = {"strict": "1", "moderate": "-1", "off": "-2"}
RATE_LIMITED = (
    "duckduckgo rate limited the search (it answered with its bot challenge); "
    "try again in about a minute"
)
_CHALLENGE_MARKERS = (
    b"anomaly-modal",
    b'id="challenge-form"',
    b"/anomaly.js",
    b"bots use DuckDuckGo too",
)


class DuckDuckGoProvider:
    """Search DuckDuckGo's HTML results page; needs no key."""

    name = "duckduckgo"
    endpoints: Sequence[str] = (ENDPOINT,)

    def __init__(
        self,
        network: Network | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        min_interval: float = 1.5,
        cooldown: float = 60.0,
        proxy: str | None = None,
        transport: Transport | None = None,
    ) -> None:
        self._egress = Egress(
            self.endpoints, network=network, timeout=timeout, max_bytes=MAX_PAGE_BYTES,
            proxy=proxy,
            transport=transport,
        )
        self.min_interval = min_interval
        self.cooldown = cooldown
        self._last_start = -float("inf")
        self._blocked_until = -float("inf")
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def __repr__(self) -> str:
        return "DuckDuckGoProvider()"

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        async with self._serial():
            if time.monotonic() < self._blocked_until:
                raise ProviderError(ToolErrorKind.Transport, RATE_LIMITED)
            wait = self._last_start + self.min_interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_start = time.monotonic()
            response = await self._egress.send(
                "POST",
                URL,
                form=form_fields(request),
                headers={
                    "User-Agent": BROWSER_USER_AGENT,
                    "Accept": "text/html,application/xhtml+xml",
                    "Accept-Language": "en-US,en;q=0.7",
                    "Referer": "https://html.duckduckgo.com/",
                },
                truncate=True,
                retry_if=lambda r: 500 <= r.status <= 599,
            )
            if _challenged(response):
                self._blocked_until = time.monotonic() + self.cooldown
                raise ProviderError(ToolErrorKind.Transport, RATE_LIMITED)
        if not response.ok:
            if response.body is None:
                raise unreadable_error(response.status)
            raise backend_error(response.status, describe_error_body(response.body))
        results = parse_page(response.body or b"")
        return truncate(filter_domains(results, request), request.count)

    def _serial(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]


def form_fields(request: SearchRequest) -> dict[str, str]:
    fields = {"q": query_with_operators(request), "b": "", "kl": _region(request)}
    if request.freshness is not None:
        fields["df"] = DATE_FILTERS[request.freshness]
    if request.safesearch is not None:
        fields["kp"] = SAFESEARCH[request.safesearch]
    return fields


def _region(request: SearchRequest) -> str:
    """``kl``: ``{country}-{language}`` (``us-en``, ``uk-en``, ``de-de``); ``wt-wt`` (no region)
    without a usable country."""
    country = (request.country or "").strip().lower()
    if country == "gb":
        country = "uk"
    if len(country) != 2 or not country.isascii() or not country.isalpha():
        return "wt-wt"
    lang = (request.search_lang or "").strip().lower().replace("_", "-").split("-", 1)[0]
    if not (2 <= len(lang) <= 3 and lang.isascii() and lang.isalpha()):
        lang = "en"
    return f"{country}-{lang}"


def _challenged(response: EgressResponse) -> bool:
    if response.status in (202, 403, 429):
        return True
    body = response.body or b""
    return any(marker in body for marker in _CHALLENGE_MARKERS)


def parse_page(page: bytes) -> list[SearchResult]:
    """Organic results of a DuckDuckGo HTML page, in page order."""
    tree = LexborHTMLParser(_first_start_tags(page.decode("utf-8", "replace")))
    results: list[SearchResult] = []
    for block in tree.css("div.result"):
        classes = (block.attributes.get("class") or "").split()
        if "result--ad" in classes or "result--no-result" in classes:
            continue
        link = block.css_first("a.result__a")
        if link is None:
            continue
        url = unwrap(link.attributes.get("href") or "")
        if url is None:
            continue
        snippet = block.css_first(".result__snippet")
        results.append(
            SearchResult(
                title=_text(link.text()),
                url=url,
                description=_text(snippet.text()) if snippet is not None else "",
                site_name=hostname_of(url),
            )
        )
    return results


def _first_start_tags(text: str) -> str:
    """``text`` cut before its start tag number :data:`MAX_START_TAGS` + 1 (whole if it has no
    more): the nesting the parser sees is bounded by construction, whatever the page holds."""
    for index, tag in enumerate(_START_TAG.finditer(text)):
        if index == MAX_START_TAGS:
            return text[: tag.start()]
    return text


def unwrap(href: str) -> str | None:
    """The target of a result link: ``/l/?uddg=`` redirects (relative, protocol-relative or
    absolute) are unwrapped; other DuckDuckGo links (``y.js`` ads) and non-web schemes give
    ``None``."""
    href = href.strip()
    if href.startswith("//"):
        href = "https:" + href
    elif href.startswith("/"):
        href = "https://duckduckgo.com" + href
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path != "/l/":
            return None
        targets = parse_qs(parts.query).get("uddg")
        if not targets or not targets[0].strip():
            return None
        href = targets[0].strip()
        try:
            parts = urlsplit(href)
        except ValueError:
            return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return href


def _text(value: str | None) -> str:
    return " ".join((value or "").split())
