"""``web/search``: check the arguments, ask the provider, check and render its rows.

:class:`WebSearch` owns everything the spec fixes for every provider: the eight-field schema, the
argument messages and their order, the empty-url rejection, the output shape, the
``web_search:`` prefix on every error, and the memo that answers an identical request from
memory instead of spending the vendor's quota again.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from runvil._errors import ToolError, ToolErrorKind
from runvil._tools import Tool
from runvil.web._search.arguments import parse_arguments
from runvil.web._search.provider import (
    ProviderError,
    SearchProvider,
    SearchRequest,
    SearchResult,
    parse_endpoint,
)
from runvil.web._search.render import RenderError, check_urls, render
from runvil.web._search.rows import DomainLists, shown_rows
from runvil.web._search.schema import DESCRIPTION, PARAMETERS, TOOL_ID

log = logging.getLogger("runvil.web.search")

#: How many distinct searches one WebSearch remembers (least recently used go first).
MEMO_SIZE = 256
#: How many characters of result text the memo holds in all. A result is as large as its
#: provider's answer (up to the 1 MiB body cap), and 256 of those would be a quarter of a
#: gigabyte spent on a model asking 256 different questions; typical results are 2-20 KB, so
#: this lets the count bind first. A result larger than the whole budget is not remembered.
MEMO_CHARS = 4 * 1024 * 1024


class _Abandoned(Exception):
    """The call running a shared search was cancelled; a waiting call runs the search itself."""


class WebSearch:
    """The search tool over one :class:`SearchProvider`.

    ``await search.call(arguments)`` returns the compact JSON text or raises :class:`ToolError`.
    Identical requests within one instance are answered from memory (and concurrent identical
    requests share one provider call), so a model that repeats itself does not burn quota;
    failures are never remembered.
    """

    def __init__(
        self,
        provider: SearchProvider,
        *,
        memo_size: int = MEMO_SIZE,
        memo_chars: int = MEMO_CHARS,
        allowed_domains: Iterable[str] = (),
        blocked_domains: Iterable[str] = (),
    ) -> None:
        for endpoint in provider.endpoints:
            parse_endpoint(endpoint)
        self.provider = provider
        #: The operator's domain lists (the fetch policy's, off by default): rows whose host they
        #: refuse are not shown (:mod:`runvil.web._search.rows`).
        self.domains = DomainLists(allowed_domains, blocked_domains)
        self._memo_size = memo_size
        self._memo_chars = memo_chars
        self._memo_held = 0
        self._memo: OrderedDict[SearchRequest, str] = OrderedDict()
        self._inflight: dict[SearchRequest, asyncio.Future[str]] = {}
        self.tool = Tool(id=TOOL_ID, description=DESCRIPTION, parameters=copy.deepcopy(PARAMETERS))

    async def call(self, arguments: Any) -> str:
        """Run one search call: ``arguments`` is the call's JSON object (a mapping or JSON
        text). No provider is called unless every argument check passes."""
        request = parse_arguments(arguments)
        while True:
            text = self._memo.get(request)
            if text is not None:
                self._memo.move_to_end(request)
                return text
            pending = self._inflight.get(request)
            if pending is None:
                break
            try:
                return await asyncio.shield(pending)
            except _Abandoned:
                continue
        return await self._lead(request)

    async def _lead(self, request: SearchRequest) -> str:
        shared: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._inflight[request] = shared
        try:
            text = await self._search(request)
        except asyncio.CancelledError:
            _fail(shared, _Abandoned())
            raise
        except BaseException as exc:
            _fail(shared, exc)
            raise
        finally:
            del self._inflight[request]
        shared.set_result(text)
        self._remember(request, text)
        return text

    async def _search(self, request: SearchRequest) -> str:
        try:
            results: Sequence[SearchResult] = await self.provider.search(request)
        except ProviderError as exc:
            raise ToolError(
                exc.kind, f"web_search: {exc.message}", untrusted=exc.untrusted
            ) from exc
        except ToolError:
            raise
        except Exception as exc:
            # A provider broke its contract; the caller still gets a clear, specified message.
            log.exception("search provider %s failed unexpectedly", self.provider.name)
            raise ToolError(ToolErrorKind.Transport, "web_search: request failed") from exc
        try:
            check_urls(results)
            return render(request.query, shown_rows(results, self.domains))
        except RenderError as exc:
            log.warning("provider %s returned unrenderable rows: %s", self.provider.name, exc)
            raise ToolError(
                ToolErrorKind.Other, "web_search: the results could not be rendered"
            ) from exc

    def _remember(self, request: SearchRequest, text: str) -> None:
        if self._memo_size <= 0 or len(text) > self._memo_chars:
            return
        old = self._memo.pop(request, None)
        if old is not None:
            self._memo_held -= len(old)
        self._memo[request] = text
        self._memo_held += len(text)
        while len(self._memo) > self._memo_size or self._memo_held > self._memo_chars:
            _, dropped = self._memo.popitem(last=False)
            self._memo_held -= len(dropped)


def _fail(shared: asyncio.Future[str], exc: BaseException) -> None:
    shared.set_exception(exc)
    shared.exception()  # mark retrieved: with no waiter, asyncio would log it as lost
