"""Where and when big pages render: under the process's memory budget, each by its deadline, and
never held back by other callers' pages."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from runvil.web import FetchPolicy, WebFetch
from runvil.web._fetch import extract, rendering, tool
from runvil.web._fetch.arguments import FetchRequest
from runvil.web._fetch.extract._text import render_text
from runvil.web._fetch.http import Page
from runvil.web._fetch.outcome import FetchOutcome
from runvil.web._fetch.rendering import RenderGate, reservation
from tests.web.fetch.conftest import ARTICLE_HTML, FetchFactory, SiteFactory, expect_page
from tests.web.fetch.test_fetch_pages import serving

BIG = "<html><body>" + "<p>Some paragraph text here.</p>" * 1_000  # over the inline limit
BIG_TEXT = "Some paragraph text here.\n\nSome paragrap"  # its first 40 characters
PROSE = "<p>The committee met on Tuesday, reviewed the budget, and agreed on the plan.</p>"
# The first 80 characters of its whole-page rendering (raw, so the page-kind decision, which is
# not what these tests are about, plays no part).
ARTICLE_START = (
    "[Home](https://example.com/a) [About](https://example.com/b)\n\n# Example Domain\n\n"
)


def article(paragraphs: int) -> str:
    """The article page, made big with more of the article's prose."""
    return ARTICLE_HTML.replace("</article>", PROSE * paragraphs + "</article>")


# --- the gate ----------------------------------------------------------------------------------


def later(seconds: float) -> float:
    return time.monotonic() + seconds


async def test_the_gate_admits_what_fits_and_no_more_than_its_slots() -> None:
    gate = RenderGate(memory=100, slots=2)
    assert await gate.acquire(60, later(1))
    assert await gate.acquire(40, later(1))
    assert not await gate.acquire(1, later(0.05))  # full
    gate.release(40)
    assert await gate.acquire(10, later(1))
    assert not await gate.acquire(10, later(0.05))  # room for it, but both slots are taken


async def test_room_given_back_from_a_thread_wakes_a_waiter() -> None:
    gate = RenderGate(memory=100, slots=4)
    assert await gate.acquire(100, later(1))
    waiting = asyncio.create_task(gate.acquire(50, later(5)))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    threading.Thread(target=gate.release, args=(100,)).start()
    assert await waiting


async def test_a_small_rendering_goes_ahead_of_a_big_one_that_does_not_fit() -> None:
    gate = RenderGate(memory=100, slots=4)
    assert await gate.acquire(70, later(1))
    big = asyncio.create_task(gate.acquire(60, later(5)))
    await asyncio.sleep(0.05)
    assert await gate.acquire(30, later(0.05))  # fits now: no need to queue behind the big one
    assert not big.done()
    gate.release(70)
    assert await big


async def test_a_waiter_past_its_deadline_gives_up_and_leaves_the_queue() -> None:
    gate = RenderGate(memory=100, slots=4)
    assert await gate.acquire(100, later(1))
    assert not await gate.acquire(50, later(0.05))
    gate.release(100)
    assert await gate.acquire(100, later(0.05))  # nobody else took the room


async def test_a_cancelled_waiter_leaves_the_queue() -> None:
    gate = RenderGate(memory=100, slots=4)
    assert await gate.acquire(100, later(1))
    waiting = asyncio.create_task(gate.acquire(50, later(5)))
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    gate.release(100)
    assert await gate.acquire(100, later(0.05))


def test_a_reservation_grows_with_the_page_up_to_the_per_render_cap() -> None:
    assert reservation(100_000) < reservation(200_000) < rendering.PER_RENDER_MEMORY
    assert reservation(8 * 1024 * 1024) == rendering.PER_RENDER_MEMORY
    assert 2 * rendering.PER_RENDER_MEMORY + reservation(100_000) <= rendering.RENDER_MEMORY


# --- fetches -----------------------------------------------------------------------------------


@pytest.fixture
def small_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[RenderGate]:
    """A gate with room for two renderings of ``BIG`` and a little more."""
    gate = RenderGate(memory=2 * reservation(len(BIG)) + 1_000)
    monkeypatch.setattr(rendering, "gate", gate)
    yield gate


class Held:
    """Renderings that wait until the test lets them go (for up to ten seconds)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()
        real = tool.render_page

        def held(
            page: Page, request: FetchRequest, deadline: float | None = None
        ) -> FetchOutcome:
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                if "hold" in page.target.href:
                    self.release.wait(timeout=10)
                else:
                    time.sleep(0.05)
                return real(page, request, deadline)
            finally:
                with self.lock:
                    self.running -= 1

        monkeypatch.setattr(tool, "render_page", held)


async def test_big_pages_render_within_the_memory_budget(
    fetch: WebFetch, site: SiteFactory, small_gate: RenderGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = Held(monkeypatch)
    await site({"/": serving(BIG, "text/html")})
    results = await asyncio.gather(
        *(fetch.call({"url": f"https://example.com/?n={n}", "max_chars": 40}) for n in range(6))
    )
    assert held.most == 2
    assert results == [
        expect_page(
            f"https://example.com/?n={n}", BIG_TEXT, truncated=True, extraction="readability"
        )
        for n in range(6)
    ]


async def test_a_small_page_renders_while_big_ones_hold_the_budget(
    make_fetch: FetchFactory, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Room for two big renderings and the article: a third big one waits, the article does not.
    room = 2 * reservation(len(BIG)) + reservation(len(article(300)))
    monkeypatch.setattr(rendering, "gate", RenderGate(memory=room))
    held = Held(monkeypatch)
    await site({"/hold": serving(BIG, "text/html"), "/article": serving(article(300), "text/html")})
    hostile, other = make_fetch(), make_fetch()
    big = [
        asyncio.create_task(hostile.call({"url": f"https://example.com/hold?n={n}"}))
        for n in range(3)
    ]
    result = await asyncio.wait_for(
        other.call({"url": "https://example.com/article", "max_chars": 80, "raw": True}), 30
    )
    assert result == expect_page(
        "https://example.com/article", ARTICLE_START, truncated=True, extraction="raw-html"
    )
    assert not any(task.done() for task in big)  # they still hold the budget
    held.release.set()
    await asyncio.gather(*big)


async def test_a_page_that_waits_past_its_render_timeout_comes_back_as_text(
    make_fetch: FetchFactory,
    site: SiteFactory,
    small_gate: RenderGate,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = Held(monkeypatch)
    page = BIG + "<h2>Last *one*</h2>"
    await site({"/hold": serving(BIG, "text/html"), "/late": serving(page, "text/html")})
    hostile = make_fetch()
    holding = [
        asyncio.create_task(hostile.call({"url": f"https://example.com/hold?n={n}"}))
        for n in range(2)
    ]
    await asyncio.sleep(0.3)  # both renderings have their room
    late = make_fetch(FetchPolicy(render_timeout=0.3))
    result = await asyncio.wait_for(late.call({"url": "https://example.com/late"}), 30)
    text = render_text(page.encode())
    assert text.endswith("Some paragraph text here.\n\nLast \\*one\\*")
    assert result == expect_page("https://example.com/late", text, extraction="raw-html")
    held.release.set()
    await asyncio.gather(*holding)


async def test_a_rendering_that_runs_past_its_deadline_comes_back_as_text(
    make_fetch: FetchFactory, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_parse = extract.parse

    def slow_parse(markup: bytes, progress: object = None) -> object:
        time.sleep(0.4)
        return real_parse(markup)

    monkeypatch.setattr(extract, "parse", slow_parse)
    await site({"/": serving(BIG, "text/html")})
    result = await make_fetch(FetchPolicy(render_timeout=0.2)).call(
        {"url": "https://example.com/", "max_chars": 40}
    )
    assert result == expect_page(
        "https://example.com/", BIG_TEXT, truncated=True, extraction="raw-html"
    )


async def test_hostile_pages_do_not_hold_back_another_callers_article(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    # The attack: two pages lexbor took minutes over (80,000 attributes on one element, 40,000
    # options in one select) rendering while an unrelated article is fetched. Its result waited
    # 109 s for a render thread; every result now arrives as soon as its own work is done.
    attributes = "<div " + " ".join(f"a{n}=1" for n in range(80_000)) + ">x</div>"
    options = "<select>" + "<option>o" * 40_000 + "</select><p>after</p>"
    await site(
        {
            "/attributes": serving(attributes, "text/html"),
            "/options": serving(options, "text/html"),
            "/article": serving(article(1_300), "text/html"),  # about 100 KB
        }
    )
    hostile, other = make_fetch(), make_fetch()
    results = await asyncio.wait_for(
        asyncio.gather(
            hostile.call({"url": "https://example.com/attributes"}),
            hostile.call({"url": "https://example.com/options"}),
            other.call({"url": "https://example.com/article", "max_chars": 80, "raw": True}),
        ),
        60,
    )
    assert results == [
        expect_page("https://example.com/attributes", "x", extraction="raw-html"),
        expect_page("https://example.com/options", "after", extraction="raw-html"),
        expect_page(
            "https://example.com/article", ARTICLE_START, truncated=True, extraction="raw-html"
        ),
    ]


# --- text renderings, taken from callers in turn ------------------------------------------------


def test_a_callers_queued_jobs_never_go_ahead_of_another_callers_job() -> None:
    import concurrent.futures

    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    queue = rendering.FairQueue(executor)
    order: list[str] = []
    go = threading.Event()

    def job(name: str) -> str:
        if name == "a0":
            go.wait(10)
        order.append(name)
        return name

    flood = [queue.submit("a", lambda n=n: job(f"a{n}")) for n in range(5)]  # type: ignore[misc]
    other = queue.submit("b", lambda: job("b0"))
    go.set()
    assert [future.result(10) for future in flood] == ["a0", "a1", "a2", "a3", "a4"]
    assert other.result(10) == "b0"
    assert order == ["a0", "b0", "a1", "a2", "a3", "a4"]  # b waited for one of a's, not five
    executor.shutdown()


def test_a_job_cancelled_before_it_starts_never_runs() -> None:
    import concurrent.futures

    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    queue = rendering.FairQueue(executor)
    ran: list[str] = []
    go = threading.Event()
    first = queue.submit("a", lambda: go.wait(10) and ran.append("first"))
    dropped = queue.submit("a", lambda: ran.append("dropped"))
    last = queue.submit("a", lambda: ran.append("last"))
    assert dropped.cancel()
    go.set()
    first.result(10)
    last.result(10)
    assert ran == ["first", "last"]
    assert dropped.cancelled()
    executor.shutdown()


async def test_a_flood_of_text_renderings_never_holds_back_another_callers_rendering(
    make_fetch: FetchFactory, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Twelve renderings that all miss their deadline queue twelve text renderings; more than
    # every render thread there is. Another caller's page still renders at once.
    hostile_page = BIG + "<p>more</p>" * 100

    class Refusing(RenderGate):
        async def acquire(self, amount: int, deadline: float) -> bool:
            if amount > reservation(len(BIG)):
                return False  # a hostile page: no room before its deadline
            return await super().acquire(amount, deadline)

    monkeypatch.setattr(rendering, "gate", Refusing())
    release = threading.Event()
    real = tool.render_page

    def held(page: Page, request: FetchRequest, deadline: float | None = None) -> str:
        if deadline == 0.0:  # a text rendering: held until the test lets it go
            release.wait(timeout=20)
        return real(page, request, deadline)

    monkeypatch.setattr(tool, "render_page", held)
    await site({"/hostile": serving(hostile_page, "text/html"), "/page": serving(BIG, "text/html")})
    hostile, other = make_fetch(), make_fetch()
    flood = [
        asyncio.create_task(hostile.call({"url": f"https://example.com/hostile?n={n}"}))
        for n in range(12)
    ]
    await asyncio.sleep(0.2)
    result = await asyncio.wait_for(
        other.call({"url": "https://example.com/page", "max_chars": 40}), 15
    )
    assert result == expect_page(
        "https://example.com/page", BIG_TEXT, truncated=True, extraction="readability"
    )
    assert not any(task.done() for task in flood)
    release.set()
    texts = await asyncio.gather(*flood)
    assert all("extraction: raw-html" in text for text in texts)


def test_a_reservation_counts_the_markdown_a_rendering_may_return() -> None:
    # Every fetch without continuation (max_chars up to 40,000 by default) reserves for its
    # page alone, as before; a rendering kept for continuation (up to 8 MiB of characters) also
    # reserves for the markdown a small page can make of a ragged table.
    assert reservation(100_000, 40_000) == reservation(100_000)
    kept = reservation(40_000, 8 * 1024 * 1024)
    assert kept == reservation(40_000) + rendering.MEMORY_PER_CHAR * (8 * 1024 * 1024 - 256 * 1024)
    assert kept <= rendering.PER_RENDER_MEMORY
