"""Fixtures for the adapter tests: the sample site behind the fake internet, a Host over it with
a scripted search provider, and a loopback server that plays a scripted model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from aiohttp import web

from runvil.host import Host
from runvil.web.fetch.policy import FetchPolicy
from runvil.web.search.provider import SearchRequest, SearchResult
from tests.faces_helpers import site_app
from tests.fixtures.internet import FakeInternet

Turn = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedProvider:
    """A search provider that always finds one result."""

    name = "scripted"
    endpoints: Sequence[str] = ()

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        return [SearchResult(title="T", url="https://e.com", description="D")]


class ScriptedModel:
    """A loopback HTTP server answering each model request with the next scripted turn.

    A turn is a response body, or a function of the request body returning one (so a turn can
    echo what the client sent back). Every request body is kept in ``requests``.
    """

    def __init__(self, path: str, turns: list[Turn]) -> None:
        self.path = path
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []
        self.base_url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        async def answer(request: web.Request) -> web.Response:
            body = await request.json()
            self.requests.append(body)
            turn = self.turns.pop(0)
            reply = turn(body) if callable(turn) else turn
            return web.Response(text=json.dumps(reply), content_type="application/json")

        app = web.Application()
        app.router.add_post(self.path, answer)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


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
