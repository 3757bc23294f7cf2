"""Pages that JavaScript builds, rendered in the real headless browser through the guard."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from aiohttp import web

from runvil import ToolError
from runvil._errors import ToolErrorKind
from tests.fixtures.internet import FakeInternet
from tests.web.browser.conftest import FetchFactory, SiteFactory, html, to, typed
from tests.web.browser.pages import (
    APP_JS,
    FETCHING_SHELL,
    STATIC_ARTICLE,
    STORY,
    STORY_TEXT,
    inline_shell,
    shell_with,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

RENDERED = "url: https://example.com/\ntruncated: false\nextraction: readability\nrendered: browser"


async def test_an_app_shell_built_from_inline_data_comes_back_as_the_article(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site({"/": html(inline_shell())})
    fetch = make_fetch(browser="auto")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    assert served.request_lines == ["GET /"]  # the document once, by runvil, never by the browser


async def test_an_app_shell_that_fetches_its_data_from_the_same_site(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site({
        "/": html(FETCHING_SHELL),
        "/static/app.js": typed(APP_JS, "application/javascript"),
        "/api/story.json": typed(json.dumps(STORY), "application/json"),
    })
    fetch = make_fetch(browser="auto")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    assert served.request_lines == ["GET /", "GET /static/app.js", "GET /api/story.json"]
    # Every request went out as runvil's own, with the policy's User-Agent.
    assert {h["User-Agent"] for h in served.headers} == {"harness-webfetch/0.0"}


async def test_auto_leaves_a_page_the_static_path_renders_well_alone(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(STATIC_ARTICLE)})
    static = await make_fetch().call({"url": "https://example.com/"})
    fetch = make_fetch(browser="auto")
    assert await fetch.call({"url": "https://example.com/"}) == static
    assert static == (
        "url: https://example.com/\ntruncated: false\nextraction: readability\n\n" + STORY_TEXT
    )
    assert fetch._browser is not None and fetch._browser.last_counts is None  # no browser


async def test_always_renders_every_html_page_in_the_browser(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(STATIC_ARTICLE), "/plain.txt": typed("just text", "text/plain")})
    fetch = make_fetch(browser="always")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    # Only HTML goes to the browser.
    assert await fetch.call({"url": "https://example.com/plain.txt"}) == (
        "url: https://example.com/plain.txt\ntruncated: false\nextraction: plain\n\njust text"
    )


async def test_the_default_policy_never_renders_in_a_browser(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(inline_shell())})
    fetch = make_fetch()
    text = await fetch.call({"url": "https://example.com/"})
    assert "rendered:" not in text and "river delta" not in text
    assert fetch._browser is None


@pytest.mark.asyncio(loop_scope="module")
async def test_the_default_policy_imports_no_browser_code() -> None:
    code = (
        "import sys\n"
        "from runvil.web import WebFetch, FetchPolicy\n"
        "WebFetch(); WebFetch(FetchPolicy(continuation=True, pdf=True))\n"
        "print(sorted(m for m in sys.modules if 'playwright' in m or 'browser' in m))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


async def test_redirects_follow_the_fetch_rules_before_the_browser_sees_the_page(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    routes = {f"/r{i}": to(f"/r{i + 1}") for i in range(7)}
    routes["/r5"] = html(inline_shell())
    served = await site(routes)
    fetch = make_fetch(browser="always")
    text = await fetch.call({"url": "https://example.com/r0"})
    assert text == (
        "url: https://example.com/r5\ntruncated: false\nextraction: readability\n"
        f"rendered: browser\n\n{STORY_TEXT}"
    )
    assert served.request_lines == [f"GET /r{i}" for i in range(6)]

    routes = {f"/s{i}": to(f"/s{i + 1}") for i in range(7)}
    await site(routes, hosts=("loop.example",), ip="93.184.216.36")
    assert await fetch.call({"url": "https://loop.example/s0"}) == (
        "redirect from https://loop.example/s5 to https://loop.example/s6 refused: "
        "exceeded max redirects (5)"
    )

    await site({"/down": to("http://example.com/")}, hosts=("down.example",), ip="93.184.216.37")
    assert await fetch.call({"url": "https://down.example/down"}) == (
        "redirect from https://down.example/down to http://example.com/ refused: "
        "refusing https to http downgrade"
    )

    await site({"/": to("https://intranet.example/admin")}, hosts=("hop.example",),
               ip="93.184.216.38")
    internet.dns["intranet.example"] = ["10.0.0.1"]
    with pytest.raises(ToolError) as caught:
        await fetch.call({"url": "https://hop.example/"})
    assert (caught.value.kind, str(caught.value)) == (
        ToolErrorKind.InvalidArguments, "host intranet.example has no allowed address"
    )


async def test_continuation_reads_on_through_a_rendered_page(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(inline_shell())})
    fetch = make_fetch(browser="always", continuation=True)
    first = await fetch.call({"url": "https://example.com/", "max_chars": 100})
    assert first == (
        "url: https://example.com/\ntruncated: true\nnext_start_index: 100\n"
        f"extraction: readability\nrendered: browser\n\n{STORY_TEXT[:100]}"
    )
    rest = await fetch.call({"url": "https://example.com/", "start_index": 100})
    assert rest == (
        "url: https://example.com/\ntruncated: false\nextraction: readability\n"
        f"rendered: browser\n\n{STORY_TEXT[100:]}"
    )


async def test_each_fetch_gets_a_fresh_context(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    script = (
        "const seen = localStorage.getItem('seen') || document.cookie || 'first visit';"
        "localStorage.setItem('seen', 'seen before'); document.cookie = 'seen=cookie';"
        "document.getElementById('t').textContent = 'visit: ' + seen;"
    )
    await site({"/": html(shell_with(script, "<p id='t'></p>"))})
    fetch = make_fetch(browser="always")
    for _ in range(2):
        text = await fetch.call({"url": "https://example.com/", "raw": True})
        assert text.startswith("url: https://example.com/\ntruncated: false\nextraction: raw-html")
        assert "visit: first visit" in text
        assert "seen before" not in text and "cookie" not in text


async def test_a_page_that_never_settles_gets_the_deadline_text_and_the_next_page_renders(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(inline_shell()), "/spin": html(shell_with("while (true) {}"))})
    fetch = make_fetch(browser="always", browser_timeout=2.0)
    assert await fetch.call({"url": "https://example.com/spin"}) == (
        "request to https://example.com/spin timed out; try again or use a different URL"
    )
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"


async def test_a_browser_that_went_away_is_started_again(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": html(inline_shell())})
    fetch = make_fetch(browser="always")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    reader = fetch._browser
    assert reader is not None and reader._process is not None
    process = reader._process
    launches = process.launches
    await (await process.browser()).close()  # as if it had crashed
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    assert process.launches == launches + 1


async def test_a_page_gets_at_most_256_requests(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def item(request: web.Request) -> web.Response:
        return web.json_response({"n": request.query["n"]})

    script = "for (let n = 0; n < 300; n++) fetch('/api/item?n=' + n).catch(() => {});"
    served = await site({"/": html(shell_with(script)), "/api/item": item})
    fetch = make_fetch(browser="always")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
    assert len([line for line in served.request_lines if line.startswith("GET /api/")]) == 256
    assert fetch._browser is not None and fetch._browser.last_counts is not None
    assert (fetch._browser.last_counts.fetched, fetch._browser.last_counts.refused) == (256, 44)


async def test_a_snapshot_over_its_cap_is_cut_and_says_so(
    make_fetch: FetchFactory, site: SiteFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runvil.web._fetch.browser as browser

    monkeypatch.setattr(browser, "MAX_SNAPSHOT_BYTES", 400)
    await site({"/": html(inline_shell())})
    fetch = make_fetch(browser="always")
    text = await fetch.call({"url": "https://example.com/", "raw": True})
    assert text.startswith(
        "url: https://example.com/\ntruncated: true\nextraction: raw-html\nrendered: browser\n\n"
    )


async def test_a_router_that_changes_the_address_keeps_the_page(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    """``history.replaceState`` / ``pushState`` (an app's router) keep the document."""
    script = "history.replaceState({}, '', '/home'); history.pushState({}, '', '/story/42');"
    await site({"/": html(shell_with(script))})
    fetch = make_fetch(browser="always")
    assert await fetch.call({"url": "https://example.com/"}) == f"{RENDERED}\n\n{STORY_TEXT}"
