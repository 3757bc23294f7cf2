"""Stand-ins for the two web tools, so Host behaviour is tested on its own terms (no tests).

They publish the real catalog descriptions and record every call; ``gate`` lets a test hold a
call in flight, and ``closed`` records that a cancelled call unwound (the way a real fetch
releases its connection).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from runvil._errors import ToolError, ToolErrorKind
from runvil._tools import Tool
from runvil.web import _pack as web_pack

FETCH_DESCRIPTION = "Fetch a web page and return its main content as markdown."
SEARCH_DESCRIPTION = "Search the web and return a list of results (title, url, description)."

FETCH_SCHEMA = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The URL to fetch."},
        "max_chars": {"type": "integer", "minimum": 1, "maximum": 40000},
        "raw": {"type": "boolean"},
    },
    "required": ["url"],
    "additionalProperties": False,
}
SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 400}},
    "required": ["query"],
}


class FakeTool:
    """Answers ``text`` (or raises ``error``) and records each call's arguments."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.calls: list[Any] = []
        self.text = "ok"
        self.error: BaseException | None = None
        self.gate: asyncio.Event | None = None
        self.started = asyncio.Event()
        self.unwound = 0
        self.closed = False

    async def call(self, args: dict[str, Any]) -> str:
        self.calls.append(args)
        self.started.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        finally:
            self.unwound += 1
        if self.error is not None:
            raise self.error
        return self.text

    async def aclose(self) -> None:
        self.closed = True


class FakeFetch(FakeTool):
    def __init__(self) -> None:
        super().__init__(Tool("web/fetch", FETCH_DESCRIPTION, FETCH_SCHEMA))

    async def call(self, args: dict[str, Any]) -> str:
        if not isinstance(args.get("url"), str):
            self.calls.append(args)
            raise ToolError(ToolErrorKind.InvalidArguments, "web_fetch: missing url argument")
        self.text = f"url: {args['url']}\ntruncated: false\nextraction: plain\n\n{self.body}"
        return await super().call(args)

    body = "hello"


class FakeSearch(FakeTool):
    def __init__(self) -> None:
        super().__init__(Tool("web/search", SEARCH_DESCRIPTION, SEARCH_SCHEMA))
        self.text = '{"query":"q","results":[]}'


class Fakes:
    """The fake tools the next Host built in this test will get."""

    def __init__(self) -> None:
        self.fetch = FakeFetch()
        self.search = FakeSearch()
        self.builds: list[tuple[Any, Any, Any]] = []


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Fakes:
    made = Fakes()

    def build(provider: Any, network: Any, policy: Any) -> web_pack.WebTools:
        made.builds.append((provider, network, policy))
        return web_pack.WebTools(made.fetch, made.search)

    monkeypatch.setattr(web_pack, "build_web_tools", build)
    return made
