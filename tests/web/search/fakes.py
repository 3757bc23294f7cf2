"""In-process providers for the tool's own tests (no network at all)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from runvil.web._search import ProviderError, SearchRequest, SearchResult


@dataclass
class FakeProvider:
    """Returns ``results`` (or raises ``error``) and records every request it was given."""

    results: Sequence[SearchResult] = ()
    error: BaseException | None = None
    delay: float = 0.0
    name: str = "fake"
    endpoints: Sequence[str] = ("search.example:443",)
    requests: list[SearchRequest] = field(default_factory=list)
    gate: asyncio.Event | None = None

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        self.requests.append(request)
        if self.gate is not None:
            await self.gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.results


def one_result() -> FakeProvider:
    return FakeProvider(results=[SearchResult(title="T", url="https://e.com", description="D")])


__all__ = ["FakeProvider", "ProviderError", "one_result"]
