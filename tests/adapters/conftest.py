"""Fixtures for the adapter tests: the sample site behind the fake internet, a Host over it with
a scripted search provider, and a loopback server that plays a scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from runvil import Host
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._search.provider import SearchRequest, SearchResult
from tests.faces_helpers import ScriptedModel, Turn, site_app
from tests.fixtures.internet import FakeInternet


class ScriptedProvider:
    """A search provider that always finds one result."""

    name = "scripted"
    endpoints: Sequence[str] = ()

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        return [SearchResult(title="T", url="https://e.com", description="D")]


@pytest.fixture
async def host(internet: FakeInternet) -> AsyncIterator[Host]:
    await internet.serve(site_app())
    async with Host(
        plugins=("runvil/web",),
        search_provider=ScriptedProvider(),
        network=internet.network(),
        fetch_policy=FetchPolicy(timeout=2.0, connect_timeout=0.5),
    ) as h:
        yield h


@pytest.fixture
async def scripted() -> AsyncIterator[Callable[[str, list[Turn]], Any]]:
    started: list[ScriptedModel] = []

    async def start(path: str, turns: list[Turn]) -> ScriptedModel:
        model = ScriptedModel(path, turns)
        await model.start()
        started.append(model)
        return model

    yield start
    for model in started:
        await model.stop()
