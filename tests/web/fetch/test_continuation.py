"""Continuation (``FetchPolicy(continuation=True)``): ``start_index``, ``next_start_index`` and
the page each run keeps, so reading on reads the same text without a new fetch."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from aiohttp import web

from runvil import Host, ToolError, ToolErrorKind
from runvil._tools import RunScope
from runvil.web import FetchPolicy, WebFetch
from runvil.web._fetch import continuation, reading
from runvil.web._fetch.extract import render_html
from runvil.web._fetch.runstore import RunStore
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import FetchFactory, SiteFactory, expect_page

ON = FetchPolicy(continuation=True)
START_INDEX_DESCRIPTION = (
    "Character position to start from: pass the next_start_index of a truncated result to read "
    "the page on from where that result stopped."
)
BAD_START = "web_fetch: start_index must be a non-negative integer"

#: 100,000 characters that tell every position apart, with characters outside the BMP, so a
#: slice off by one character (or counted in UTF-16 units or bytes) is seen at once.
LONG_TEXT = "".join(f"{i:05d}\U0001f600{chr(0x3b1 + i % 20)}\n" for i in range(12_500))


def split(text: str) -> tuple[list[str], str]:
    header, _, body = text.partition("\n\n")
    return header.split("\n"), body


class NoSearch:
    """A search provider the tests never call (the web Pack needs one to be available)."""

    name = "none-used"
    endpoints: tuple[str, ...] = ()

    async def search(self, request: Any) -> list[Any]:
        raise AssertionError("no search in these tests")


class Counter:
    """A page handler that counts its requests and can change what it serves."""

    def __init__(self, body: str, content_type: str = "text/plain; charset=utf-8") -> None:
        self.body = body
        self.content_type = content_type
        self.requests = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        return web.Response(
            body=self.body.encode("utf-8"), headers={"Content-Type": self.content_type}
        )


async def test_three_slices_read_a_long_page_whole_with_one_fetch(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    assert len(LONG_TEXT) == 100_000
    page = Counter(LONG_TEXT)
    await site({"/long.txt": page.handle})
    fetch = make_fetch(ON)
    url = "https://example.com/long.txt"

    first = await fetch.call({"url": url})
    assert first == (
        f"url: {url}\ntruncated: true\nnext_start_index: 40000\nextraction: plain\n\n"
        + LONG_TEXT[:40_000]
    )
    second = await fetch.call({"url": url, "start_index": 40_000})
    assert second == (
        f"url: {url}\ntruncated: true\nnext_start_index: 80000\nextraction: plain\n\n"
        + LONG_TEXT[40_000:80_000]
    )
    third = await fetch.call({"url": url, "start_index": 80_000, "max_chars": 40_000})
    assert third == expect_page(url, LONG_TEXT[80_000:])  # no fourth line: nothing remains
    assert page.requests == 1


async def test_next_start_index_counts_characters_from_start_index(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/long.txt": Counter(LONG_TEXT).handle})
    fetch = make_fetch(ON)
    text = await fetch.call(
        {"url": "https://example.com/long.txt", "start_index": 7, "max_chars": 13}
    )
    header, body = split(text)
    assert header[1:3] == ["truncated: true", "next_start_index: 20"]
    assert body == LONG_TEXT[7:20]
    assert len(body) == 13


async def test_exactly_to_the_end_is_not_truncated(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/t": Counter("0123456789").handle})
    fetch = make_fetch(ON)
    url = "https://example.com/t"
    assert await fetch.call({"url": url, "start_index": 4, "max_chars": 6}) == expect_page(
        url, "456789"
    )
    assert await fetch.call({"url": url, "start_index": 3, "max_chars": 6}) == (
        f"url: {url}\ntruncated: true\nnext_start_index: 9\nextraction: plain\n\n345678"
    )


@pytest.mark.parametrize("start", [10, 11, 10**30])
async def test_a_start_at_or_past_the_end_returns_no_text(
    make_fetch: FetchFactory, site: SiteFactory, start: int
) -> None:
    await site({"/t": Counter("0123456789").handle})
    fetch = make_fetch(ON)
    url = "https://example.com/t"
    assert await fetch.call({"url": url, "start_index": start}) == expect_page(url, "")


async def test_without_the_run_cache_each_run_reads_its_own_fetch(
    internet: FakeInternet, site: SiteFactory
) -> None:
    """A changing page: one run reads on in the version it started with; another run, which
    keeps nothing of the first, fetches again and reads the new version."""
    page = Counter("A" * 50 + "B" * 50)
    await site({"/news": page.handle})
    url = "https://example.com/news"
    async with WebFetch(policy=ON, network=internet.network()) as first_run:
        head = await first_run.call({"url": url, "max_chars": 60})
        page.body = "C" * 100
        rest = await first_run.call({"url": url, "start_index": 60})
        async with WebFetch(policy=ON, network=internet.network()) as second_run:
            other = await second_run.call({"url": url, "start_index": 60})
    assert split(head)[1] + split(rest)[1] == "A" * 50 + "B" * 50
    assert split(other)[1] == "C" * 40
    assert page.requests == 2


async def test_a_page_no_longer_kept_is_fetched_again(
    make_fetch: FetchFactory, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = Counter("x" * 100)
    await site({"/p": page.handle})
    fetch = make_fetch(ON)
    # A store of this test's own, on a clock of its own: nothing another test (or a render
    # thread it left behind) put can stand in the way, and the time is exact.
    now = [1000.0]
    store: RunStore[continuation.Held] = RunStore(
        budget=continuation.PAGE_BUDGET, max_entries=continuation.PAGE_ENTRIES,
        max_age=continuation.PAGE_MAX_AGE, clock=lambda: now[0],
    )
    monkeypatch.setattr(reading, "PAGES", store)
    url = "https://example.com/p"
    await fetch.call({"url": url, "max_chars": 10})
    await fetch.call({"url": url, "start_index": 10, "max_chars": 10})
    assert page.requests == 1
    now[0] += continuation.PAGE_MAX_AGE  # ten minutes later: no longer served
    await fetch.call({"url": url, "start_index": 20, "max_chars": 10})
    assert page.requests == 2


Clocked = tuple[RunStore[continuation.Held], list[float]]


@pytest.fixture
def clocked_store(monkeypatch: pytest.MonkeyPatch) -> Clocked:
    """The page store of this test alone, on a clock the test moves (no sleeps)."""
    now = [1000.0]
    store: RunStore[continuation.Held] = RunStore(
        budget=continuation.PAGE_BUDGET, max_entries=continuation.PAGE_ENTRIES,
        max_age=continuation.PAGE_MAX_AGE, clock=lambda: now[0],
    )
    monkeypatch.setattr(reading, "PAGES", store)
    return store, now


async def test_reading_on_in_a_page_that_changed_is_refused_not_spliced(
    make_fetch: FetchFactory, site: SiteFactory,
    clocked_store: Clocked,
) -> None:
    """The page expires from the store, changes, and the model reads on: the second half of
    the new version would follow the first half of the old one, so the call says so instead."""
    store, now = clocked_store
    page = Counter("A" * 50 + "B" * 50)
    await site({"/news": page.handle})
    fetch = make_fetch(ON)
    url = "https://example.com/news"
    head = await fetch.call({"url": url, "max_chars": 60})
    assert split(head)[0][1:3] == ["truncated: true", "next_start_index: 60"]
    now[0] += continuation.PAGE_MAX_AGE  # no longer kept; what the run saw is still known
    page.body = "C" * 100
    refused = await fetch.call({"url": url, "start_index": 60})
    assert refused == (
        "the page at https://example.com/news has changed since it was first read; its text "
        "from start_index 60 would not continue what was read before; fetch it again without "
        "start_index to read the current version from its start"
    )
    assert refused == reading.page_changed("https://example.com/news", 60)
    assert len(store) == 0  # the new version is not kept by a refused call
    again = await fetch.call({"url": url, "max_chars": 60})  # read from the start: kept
    rest = await fetch.call({"url": url, "start_index": 60})
    assert split(again)[1] + split(rest)[1] == "C" * 100
    assert page.requests == 3


async def test_reading_on_in_an_unchanged_page_fetched_again_is_exact(
    make_fetch: FetchFactory, site: SiteFactory,
    clocked_store: Clocked,
) -> None:
    store, now = clocked_store
    page = Counter(LONG_TEXT)
    await site({"/long.txt": page.handle})
    fetch = make_fetch(ON)
    url = "https://example.com/long.txt"
    await fetch.call({"url": url})
    now[0] += continuation.PAGE_MAX_AGE
    second = await fetch.call({"url": url, "start_index": 40_000})
    assert second == (
        f"url: {url}\ntruncated: true\nnext_start_index: 80000\nextraction: plain\n\n"
        + LONG_TEXT[40_000:80_000]
    )
    assert page.requests == 2 and len(store) == 1


async def test_a_start_index_in_a_page_never_read_in_the_run_is_served(
    make_fetch: FetchFactory, site: SiteFactory,
    clocked_store: Clocked,
) -> None:
    """Nothing to compare with (a sessionless request, another run's next_start_index): the
    slice is served as before."""
    await site({"/t": Counter("0123456789").handle})
    fetch = make_fetch(ON)
    url = "https://example.com/t"
    assert await fetch.call({"url": url, "start_index": 4}) == expect_page(url, "456789")


async def test_a_page_evicted_from_one_run_by_another_is_impossible_within_its_share(
    internet: FakeInternet, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run A reads page after page through a small store; run B's one page stays kept."""
    pages = {f"/p{i}": Counter(f"{i:02d}" * 400) for i in range(12)}
    await site({path: page.handle for path, page in pages.items()})
    store: RunStore[continuation.Held] = RunStore(budget=12_000, max_entries=64, max_age=600)
    monkeypatch.setattr(reading, "PAGES", store)
    host = Host(network=internet.network(), fetch_policy=ON, search_provider=NoSearch())
    async with host, host.run() as a, host.run() as b:
        await b.call("web/fetch", {"url": "https://example.com/p0", "max_chars": 10},
                     envelope=False)
        for i in range(1, 12):
            await a.call("web/fetch", {"url": f"https://example.com/p{i}"}, envelope=False)
            assert store.size <= store.budget
        assert store.run_size(b.scope) > 0
        await b.call("web/fetch", {"url": "https://example.com/p0", "start_index": 10},
                     envelope=False)
        assert pages["/p0"].requests == 1  # read on from the page B kept
        assert store.run_size(a.scope) <= store.budget // 2
        await a.aclose()
        assert store.run_size(a.scope) == 0
        await b.aclose()
        assert (store.size, len(store), store.prints) == (0, 0, 0)


async def test_raw_and_the_article_are_kept_apart(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    rows = "".join(f"<tr><td>row {i}</td><td>cell {i}</td></tr>" for i in range(5000))
    html = f"<html><body><h1>Table</h1><table>{rows}</table></body></html>"
    page = Counter(html, "text/html; charset=utf-8")
    await site({"/table": page.handle})
    fetch = make_fetch(ON)
    url = "https://example.com/table"
    whole, label = render_html(html, url, True)
    assert label == "raw-html" and len(whole) > 40_000
    slices = []
    start: int | None = 0
    while start is not None:
        header, body = split(await fetch.call({"url": url, "raw": True, "start_index": start}))
        slices.append(body)
        start = int(header[2].split(": ")[1]) if header[1] == "truncated: true" else None
    assert "".join(slices) == whole
    assert len(slices) == 1 + len(whole) // 40_000
    await fetch.call({"url": url, "raw": False})  # not kept yet under raw=false
    assert page.requests == 2


async def test_the_first_slice_is_exactly_what_a_fetch_without_continuation_returns(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    rows = "".join(f"<li><a href='/item/{i}'>item {i}</a> and some words</li>" for i in range(4000))
    html = f"<html><body><ul>{rows}</ul></body></html>"
    await site({"/list": Counter(html, "text/html").handle})
    url = "https://example.com/list"
    seed = await make_fetch().call({"url": url})
    extended = await make_fetch(ON).call({"url": url})
    seed_header, seed_body = split(seed)
    header, body = split(extended)
    assert body == seed_body
    assert seed_header == ["url: " + url, "truncated: true", "extraction: raw-html"]
    assert header == ["url: " + url, "truncated: true", "next_start_index: 40000",
                      "extraction: raw-html"]


async def test_a_page_cut_at_the_byte_cap_says_so_to_its_end(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/big.txt": Counter("abcdefghij" * 30).handle})  # 300 bytes, the cap is 250
    fetch = make_fetch(FetchPolicy(continuation=True, max_bytes=250, max_chars=100))
    url = "https://example.com/big.txt"
    last = await fetch.call({"url": url, "start_index": 200})
    assert last == (
        f"url: {url}\ntruncated: true\nnext_start_index: 250\nextraction: plain\n\n"
        + ("abcdefghij" * 5)
    )
    assert await fetch.call({"url": url, "start_index": 250}) == expect_page(url, "")


async def test_the_final_url_is_what_is_kept(make_fetch: FetchFactory, site: SiteFactory) -> None:
    page = Counter("y" * 100)

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/new")

    await site({"/old": moved, "/new": page.handle})
    fetch = make_fetch(ON)
    first = await fetch.call({"url": "https://example.com/old", "max_chars": 10})
    assert split(first)[0][0] == "url: https://example.com/new"
    await fetch.call({"url": "https://example.com/new", "start_index": 10})
    assert page.requests == 1
    await fetch.call({"url": "https://example.com/old", "start_index": 10})  # fetched again
    assert page.requests == 2


# -- arguments ---------------------------------------------------------------------------------


def test_the_schema_gains_start_index_and_keeps_the_rest() -> None:
    seed = WebFetch().tool.parameters
    extended = WebFetch(policy=ON).tool.parameters
    assert "start_index" not in seed["properties"]
    assert list(extended["properties"]) == ["url", "max_chars", "raw", "start_index"]
    assert extended["properties"]["start_index"] == {
        "type": "integer",
        "minimum": 0,
        "description": START_INDEX_DESCRIPTION,
    }
    assert {k: v for k, v in extended["properties"].items() if k != "start_index"} == seed[
        "properties"
    ]
    assert extended["required"] == seed["required"] == ["url"]
    assert WebFetch(policy=ON).tool.description == WebFetch().tool.description


async def hard(fetch: WebFetch, arguments: Any) -> str:
    with pytest.raises(ToolError) as caught:
        await fetch.call(arguments)
    assert caught.value.kind is ToolErrorKind.InvalidArguments
    return caught.value.message


@pytest.mark.parametrize("value", [-1, 1.5, 0.0, True, False, "3", [3], {"n": 3}])
async def test_start_index_must_be_a_non_negative_integer(value: Any) -> None:
    fetch = WebFetch(policy=ON)
    assert await hard(fetch, {"url": "https://example.com/", "start_index": value}) == BAD_START


async def test_start_index_is_checked_after_url_max_chars_and_raw() -> None:
    fetch = WebFetch(policy=ON)
    bad = {"start_index": -1}
    assert await hard(fetch, {**bad}) == "web_fetch: missing url argument"
    assert await hard(fetch, {"url": "x", "max_chars": 0, **bad}) == (
        "web_fetch: max_chars must be a positive integer"
    )
    assert await hard(fetch, {"url": "x", "raw": "yes", **bad}) == (
        "web_fetch: raw must be a boolean"
    )
    # ...and before the URL itself: a bad start_index on a bad URL names start_index.
    assert await hard(fetch, {"url": "https://user@example.com/", **bad}) == BAD_START


async def test_null_start_index_means_zero(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site({"/t": Counter("0123456789").handle})
    fetch = make_fetch(ON)
    url = "https://example.com/t"
    assert await fetch.call({"url": url, "start_index": None}) == expect_page(url, "0123456789")


async def test_without_continuation_start_index_is_an_unknown_key(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    page = Counter("0123456789" * 10)
    await site({"/t": page.handle})
    fetch = make_fetch()
    url = "https://example.com/t"
    plain = await fetch.call({"url": url, "max_chars": 5})
    assert plain == expect_page(url, "01234", truncated=True)
    assert await fetch.call({"url": url, "max_chars": 5, "start_index": 50}) == plain
    assert await fetch.call({"url": url, "max_chars": 5, "start_index": -1}) == plain
    assert page.requests == 3  # nothing is kept


# -- runs --------------------------------------------------------------------------------------


async def test_a_host_keeps_pages_per_run(internet: FakeInternet, site: SiteFactory) -> None:
    page = Counter("z" * 100)
    await site({"/p": page.handle})
    url = "https://example.com/p"
    host = Host(network=internet.network(), fetch_policy=ON, search_provider=NoSearch())
    async with host:
        async with host.run() as run:
            await run.call("web/fetch", {"url": url, "max_chars": 10}, envelope=False)
            await run.call("web/fetch", {"url": url, "start_index": 10}, envelope=False)
        assert page.requests == 1
        async with host.run() as other:
            text = await other.call("web/fetch", {"url": url, "start_index": 90}, envelope=False)
        assert page.requests == 2
    assert text == expect_page(url, "z" * 10)


async def test_a_run_that_ends_leaves_nothing_kept(
    internet: FakeInternet, site: SiteFactory
) -> None:
    await site({"/p": Counter("q" * 1000).handle})
    host = Host(network=internet.network(), fetch_policy=ON, search_provider=NoSearch())
    async with host:
        gc.collect()
        continuation.PAGES.get(RunScope(), "tidy")  # drop what earlier tests' runs left
        before = continuation.PAGES.size
        run = host.run()
        await run.call("web/fetch", {"url": "https://example.com/p"})
        assert continuation.PAGES.size > before
        await run.aclose()
        assert continuation.PAGES.size == before  # at once, without another operation


# -- the store's bounds --------------------------------------------------------------------------


class Value:
    """A value the test can see being freed."""


def test_the_store_is_bounded_by_bytes_least_recently_used_out() -> None:
    store: RunStore[str] = RunStore(budget=100, max_entries=10, max_age=600)
    run = RunScope()
    assert store.put(run, "a", "A", 40)
    assert store.put(run, "b", "B", 40)
    assert store.get(run, "a") == "A"  # now "b" is the least recently used
    assert store.put(run, "c", "C", 40)
    assert store.get(run, "b") is None
    assert (store.get(run, "a"), store.get(run, "c")) == ("A", "C")
    assert store.size == 80
    assert not store.put(run, "huge", "H", 101)  # larger than the whole budget: not kept
    assert store.get(run, "huge") is None and store.size == 80


def test_the_store_is_bounded_by_entries() -> None:
    store: RunStore[int] = RunStore(budget=10**9, max_entries=3, max_age=600)
    run = RunScope()
    for i in range(10):
        store.put(run, i, i, 1)
    assert len(store) == 3
    assert [store.get(run, i) for i in range(10)] == [None] * 7 + [7, 8, 9]


def test_the_store_serves_nothing_older_than_its_age() -> None:
    now = [0.0]
    store: RunStore[str] = RunStore(budget=100, max_entries=10, max_age=600, clock=lambda: now[0])
    run = RunScope()
    store.put(run, "a", "A", 1)
    now[0] = 599.0
    assert store.get(run, "a") == "A"  # reading does not make it younger
    now[0] = 600.0
    assert store.get(run, "a") is None
    assert store.size == 0


def test_runs_never_see_each_others_entries() -> None:
    store: RunStore[str] = RunStore(budget=100, max_entries=10, max_age=600)
    one, two = RunScope(), RunScope()
    store.put(one, "k", "one's", 1)
    assert store.get(two, "k") is None
    store.put(two, "k", "two's", 1)
    assert (store.get(one, "k"), store.get(two, "k")) == ("one's", "two's")


def test_an_evicted_value_is_freed_at_once() -> None:
    import weakref

    store: RunStore[Value] = RunStore(budget=10, max_entries=10, max_age=600)
    run = RunScope()
    value = Value()
    freed = weakref.ref(value)
    store.put(run, "v", value, 10)
    del value
    store.put(run, "w", Value(), 10)  # evicts "v"
    gc.collect()
    assert freed() is None


def test_an_ended_runs_entries_go() -> None:
    store: RunStore[str] = RunStore(budget=100, max_entries=10, max_age=600)
    run, other = RunScope(), RunScope()
    store.put(run, "a", "A", 30)
    store.put(other, "b", "B", 30)
    run.end()
    assert store.get(other, "b") == "B"
    assert store.size == 30 and len(store) == 1
    assert store.get(run, "a") is None


def test_a_run_let_go_without_an_end_goes_with_its_scope() -> None:
    store: RunStore[str] = RunStore(budget=100, max_entries=10, max_age=600)
    run, other = RunScope(), RunScope()
    store.put(run, "a", "A", 30)
    store.put(other, "b", "B", 30)
    del run
    gc.collect()
    assert store.get(other, "b") == "B"
    assert store.size == 30 and len(store) == 1
