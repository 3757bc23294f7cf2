"""Fixtures for prompt runs: a Host wired to the fake internet, a scripted search provider, the
seeds' pages on a loopback TLS server, and scripted fake model servers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from runvil import Host
from runvil._errors import ToolErrorKind
from runvil.web._fetch.policy import FetchPolicy
from runvil.web._search.provider import ProviderError, SearchRequest, SearchResult
from tests.fixtures.internet import FakeInternet, Served
from tests.prompts.fake_models import FakeModel, Turn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NONCE = "0123456789abcdef"
#: A short policy so the "slow" page times out in a second, not twenty.
TEST_POLICY = FetchPolicy(timeout=1.0, connect_timeout=0.5)

ARTICLE = (
    "<html><head><title>Example</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
    "<article><h1>Example Domain</h1>"
    "<p>This domain is for use in illustrative examples in documents. You may use this domain "
    "in literature without prior coordination or asking for permission.</p>"
    "<p>The second paragraph explains that the page exists so tests have an article with "
    "enough text to be extracted as the main content of the page.</p></article>"
    "<footer>Footer links</footer></body></html>"
)
LONG_ARTICLE = (
    "<html><body><article><h1>A long article</h1>"
    + "".join(
        f"<p>Paragraph {i}: " + "lorem ipsum dolor sit amet " * 20 + "end.</p>" for i in range(60)
    )
    + "</article></body></html>"
)
PRICES = (
    "<html><body><h1>Prices</h1><table><tr><th>Item</th><th>Price</th></tr>"
    "<tr><td>Apple</td><td>1.00</td></tr><tr><td>Pear</td><td>2.00</td></tr></table></body></html>"
)
DATA = '{"key":"value","numbers":[1,2,3],"nested":{"ok":true}}'


@dataclass
class Provider:
    """A search provider that answers one fixed row, or fails, and records every request."""

    rows: Sequence[SearchResult] = (SearchResult(title="T", url="https://e.com", description="D"),)
    error: ProviderError | None = None
    requests: list[SearchRequest] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def endpoints(self) -> Sequence[str]:
        return ()

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return list(self.rows)


@pytest.fixture
def provider() -> Provider:
    return Provider()


@pytest.fixture
async def host(internet: FakeInternet, provider: Provider) -> AsyncIterator[Host]:
    h = Host(search_provider=provider, network=internet.network(), fetch_policy=TEST_POLICY)
    try:
        yield h
    finally:
        await h.aclose()


def site_app(big_json: bool = False, release: asyncio.Event | None = None) -> web.Application:
    """The pages the seeds fetch from https://example.com."""

    async def page(body: str, content_type: str = "text/html") -> web.Response:
        return web.Response(body=body.encode(), content_type=content_type, charset="utf-8")

    async def root(request: web.Request) -> web.Response:
        return await page(ARTICLE)

    async def long_article(request: web.Request) -> web.Response:
        return await page(LONG_ARTICLE)

    async def prices(request: web.Request) -> web.Response:
        return await page(PRICES)

    async def data(request: web.Request) -> web.Response:
        if big_json:
            blob = '{"pad":"' + "x" * (8 * 1024 * 1024) + '"}'
            return web.Response(body=blob.encode(), content_type="application/json")
        return web.Response(body=DATA.encode(), content_type="application/json")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="not here")

    async def slow(request: web.Request) -> web.Response:
        # past the 1-second test timeout; released at teardown so cleanup does not wait
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for((release or asyncio.Event()).wait(), timeout=2.5)
        return web.Response(text="late")

    async def start(request: web.Request) -> web.Response:
        raise web.HTTPFound("https://example.com:8080/next")

    async def path(request: web.Request) -> web.Response:
        return await page(ARTICLE)

    app = web.Application()
    app.router.add_get("/", root)
    app.router.add_get("/long-article", long_article)
    app.router.add_get("/prices", prices)
    app.router.add_get("/data.json", data)
    app.router.add_get("/missing", missing)
    app.router.add_get("/slow", slow)
    app.router.add_get("/start", start)
    app.router.add_get("/path", path)
    return app


@pytest.fixture
async def site(internet: FakeInternet) -> AsyncIterator[Served]:
    release = asyncio.Event()
    yield await internet.serve(site_app(release=release))
    release.set()


ModelFactory = Callable[[str, list[Turn]], Awaitable[FakeModel]]


@pytest.fixture
async def fake_model() -> AsyncIterator[ModelFactory]:
    started: list[FakeModel] = []

    async def make(api: str, script: list[Turn]) -> FakeModel:
        model = FakeModel(api, list(script))  # type: ignore[arg-type]
        await model.start()
        started.append(model)
        return model

    yield make
    for model in started:
        await model.stop()


def transport_error(message: str = "request failed") -> ProviderError:
    return ProviderError(ToolErrorKind.Transport, message)


def example(name: str) -> Path:
    return EXAMPLES / f"{name}.md"


def anything(*_: Any) -> None:
    return None
