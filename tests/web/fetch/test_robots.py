"""robots.txt on request (``FetchPolicy(robots=True)``): fetched through the same guarded hop loop
as a page, kept per run and site, read with RFC 9309's semantics."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from runvil import ToolError
from runvil._errors import ToolErrorKind
from runvil._tools import RunScope, current_run
from runvil.web import FetchPolicy
from runvil.web._fetch.robots import (
    ALLOW_ALL,
    DISALLOW_ALL,
    ROBOTS_MAX_AGE,
    KeptRobots,
    parse_rules,
    product_token,
)
from runvil.web._fetch.robots import ROBOTS as KEPT_RULES
from runvil.web._fetch.robotsgroup import MAX_WILDCARD_RULES, select_group
from runvil.web._fetch.runstore import RunStore
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import (
    FetchFactory,
    RawSiteFactory,
    SiteFactory,
    expect_page,
    head,
)

ROBOTS = FetchPolicy(robots=True)
PAGE = "https://example.com/docs/page"


def disallowed(url: str) -> str:
    return f"{url} is disallowed by the site's robots.txt"


def robots_site(
    status: int = 200,
    body: str | bytes = "",
    content_type: str = "text/plain",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    async def robots(request: web.Request) -> web.Response:
        data = body.encode("utf-8") if isinstance(body, str) else body
        return web.Response(status=status, body=data, headers={"Content-Type": content_type})

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=f"page {request.path}", content_type="text/plain")

    return {"/robots.txt": robots, "/{tail:.*}": page, **(extra or {})}


async def test_an_allowed_page_is_fetched(make_fetch: FetchFactory, site: SiteFactory) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /private/\n"))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert served.request_lines == ["GET /robots.txt", "GET /docs/page"]
    assert served.headers[0]["User-Agent"] == "harness-webfetch/0.0"


async def test_a_disallowed_page_is_a_soft_failure_and_is_never_requested(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /docs/\n"))
    text = await make_fetch(ROBOTS).call({"url": PAGE + "?token=secret#frag"})
    assert text == disallowed("https://example.com/docs/page")
    assert served.request_lines == ["GET /robots.txt"]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 429, 499])
async def test_a_4xx_robots_txt_allows_everything(
    make_fetch: FetchFactory, site: SiteFactory, status: int
) -> None:
    await site(robots_site(status=status, body="User-agent: *\nDisallow: /\n"))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599, 304, 300])
async def test_a_5xx_or_other_status_disallows_everything(
    make_fetch: FetchFactory, site: SiteFactory, status: int
) -> None:
    served = await site(robots_site(status=status, body="User-agent: *\nAllow: /\n"))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)
    assert served.request_lines == ["GET /robots.txt"]


async def test_an_unreachable_robots_txt_disallows_everything(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()  # the connection breaks before any answer

    raw = await raw_site(handler)
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)
    assert all(request.startswith(b"GET /robots.txt ") for request in raw.requests)


async def test_a_robots_txt_that_never_answers_ends_within_the_calls_time(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    await raw_site(handler)
    fetch = make_fetch(FetchPolicy(robots=True, timeout=1.0, connect_timeout=0.5))
    text = await asyncio.wait_for(fetch.call({"url": PAGE}), 10)
    assert text == f"request to {PAGE} timed out; try again or use a different URL"


async def test_redirects_of_robots_txt_are_followed(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/meta/robots-file")

    async def rules(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /docs\n", content_type="text/plain")

    served = await site(robots_site(extra={"/robots.txt": moved, "/meta/robots-file": rules}))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)
    assert served.request_lines == ["GET /robots.txt", "GET /meta/robots-file"]


async def test_robots_txt_behind_too_many_redirects_is_unavailable(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/robots.txt")

    served = await site(robots_site(extra={"/robots.txt": loop}))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert served.request_lines == ["GET /robots.txt"] * 6 + ["GET /docs/page"]


@pytest.mark.parametrize(
    "location", ["http://example.com/robots.txt", "https://10.0.0.1/robots.txt"]
)
async def test_robots_txt_redirected_where_the_fetch_will_not_go_is_unavailable(
    make_fetch: FetchFactory, site: SiteFactory, location: str
) -> None:
    async def away(request: web.Request) -> web.Response:
        raise web.HTTPFound(location)

    await site(robots_site(extra={"/robots.txt": away}))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")


async def test_robots_txt_redirected_to_a_blocked_address_is_not_followed(
    internet: FakeInternet, make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def away(request: web.Request) -> web.Response:
        raise web.HTTPFound("https://intranet.example/robots.txt")

    internet.dns["intranet.example"] = ["10.1.2.3"]
    await site(robots_site(extra={"/robots.txt": away}))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert ("10.1.2.3", 443) not in internet.dials


async def test_robots_txt_is_read_once_per_run_and_site(
    internet: FakeInternet, make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /private\n"))
    fetch = make_fetch(ROBOTS)
    await fetch.call({"url": "https://example.com/a"})
    await fetch.call({"url": "https://example.com/b"})
    assert await fetch.call({"url": "https://example.com/private/c"}) == disallowed(
        "https://example.com/private/c"
    )
    assert served.request_lines == ["GET /robots.txt", "GET /a", "GET /b"]
    other_run = make_fetch(ROBOTS)
    await other_run.call({"url": "https://example.com/a"})
    assert served.request_lines[3:] == ["GET /robots.txt", "GET /a"]


async def test_a_host_spelled_with_its_final_dot_shares_the_sites_robots_txt(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site(
        robots_site(body="User-agent: *\nDisallow: /private\n"),
        hosts=("example.com", "example.com."),
    )
    fetch = make_fetch(ROBOTS)
    await fetch.call({"url": "https://example.com/a"})
    assert await fetch.call({"url": "https://example.com./private/c"}) == disallowed(
        "https://example.com./private/c"
    )
    assert await fetch.call({"url": "https://example.com./b"}) == expect_page(
        "https://example.com./b", "page /b"
    )
    assert served.request_lines == ["GET /robots.txt", "GET /a", "GET /b"]


async def test_a_redirect_target_on_another_site_is_checked_against_its_robots_txt(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    async def away(request: web.Request) -> web.Response:
        raise web.HTTPFound("https://other.example/kept/out")

    first = await site(robots_site(extra={"/docs/page": away}))
    second = await site(
        robots_site(body="User-agent: *\nDisallow: /kept\n"), hosts=("other.example",),
        ip="93.184.216.35",
    )
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(
        "https://other.example/kept/out"
    )
    assert first.request_lines == ["GET /robots.txt", "GET /docs/page"]
    assert second.request_lines == ["GET /robots.txt"]


async def test_only_the_first_512_kib_of_robots_txt_count(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    padding = "# " + "x" * 1000 + "\n"
    body = "User-agent: *\nDisallow: /early\n" + padding * 600 + "Disallow: /docs\n"
    assert len(body) > 512 * 1024
    await site(robots_site(body=body))
    fetch = make_fetch(ROBOTS)
    assert await fetch.call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert await fetch.call({"url": "https://example.com/early"}) == disallowed(
        "https://example.com/early"
    )


async def test_an_html_robots_txt_over_the_cap_cannot_be_read(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site(robots_site(body="<p>" + "x" * (600 * 1024), content_type="text/html"))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)


async def test_an_html_soft_404_has_no_rules(make_fetch: FetchFactory, site: SiteFactory) -> None:
    await site(robots_site(body="<html><body>Not here</body></html>", content_type="text/html"))
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")


async def test_the_group_of_the_product_token_applies(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    body = (
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: HARNESS-WebFetch\nDisallow: /docs/private\n"
    )
    await site(robots_site(body=body))
    fetch = make_fetch(ROBOTS)
    assert await fetch.call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert await fetch.call({"url": "https://example.com/docs/private/x"}) == disallowed(
        "https://example.com/docs/private/x"
    )


async def test_the_user_agent_setting_chooses_the_group(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site(robots_site(body="User-agent: mybot\nDisallow: /docs\n"))
    fetch = make_fetch(FetchPolicy(robots=True, user_agent="MyBot/2.1 (+https://e.com/bot)"))
    assert await fetch.call({"url": PAGE}) == disallowed(PAGE)


async def test_robots_is_off_by_default(make_fetch: FetchFactory, site: SiteFactory) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /\n"))
    assert await make_fetch().call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert served.request_lines == ["GET /docs/page"]


async def test_a_host_that_does_not_resolve_keeps_its_own_text(make_fetch: FetchFactory) -> None:
    assert await make_fetch(ROBOTS).call({"url": "https://nowhere.example/"}) == (
        "dns resolution failed for nowhere.example"
    )


async def test_a_host_with_no_allowed_address_keeps_its_own_error(
    internet: FakeInternet, make_fetch: FetchFactory
) -> None:
    internet.dns["inside.example"] = ["192.168.1.1"]
    with pytest.raises(ToolError) as caught:
        await make_fetch(ROBOTS).call({"url": "https://inside.example/"})
    assert caught.value.message == "host inside.example has no allowed address"


async def test_a_raw_server_error_page_for_robots_txt(
    make_fetch: FetchFactory, raw_site: RawSiteFactory
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(head("503 Service Unavailable", "Content-Type: text/plain", length=0))
        await writer.drain()

    await raw_site(handler)
    assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)


# -- the rules: RFC 9309's edge cases this module relies on ---------------------------------------


def allows(text: str, path: str, token: str | None = "harness-webfetch") -> bool:
    return parse_rules(text, token).allows("https://example.com" + path)


def test_the_longest_match_wins() -> None:
    rules = "User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\n"
    assert not allows(rules, "/a/x")
    assert allows(rules, "/a/b/x")
    assert not allows(rules, "/a/b/c/x")
    assert allows(rules, "/other")


def test_allow_wins_a_tie() -> None:
    assert allows("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page")
    assert allows("User-agent: *\nAllow: /page\nDisallow: /page\n", "/page")


def test_wildcards_and_the_end_anchor() -> None:
    rules = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp*/x\n"
    assert not allows(rules, "/files/report.pdf")
    assert allows(rules, "/files/report.pdf?download=1")
    assert not allows(rules, "/tmp123/x")
    assert allows(rules, "/tmp123/y")


def test_percent_encoding_compares_normalised() -> None:
    rules = "User-agent: *\nDisallow: /caf%C3%A9\n"
    assert not allows(rules, "/caf%c3%a9/menu")
    assert not allows(rules, "/caf\u00e9/menu")


def test_the_product_token_matches_case_insensitively_and_exactly() -> None:
    rules = (
        "User-agent: *\nDisallow: /star\n\n"
        "user-agent: Harness\nDisallow: /prefix\n\n"
        "USER-AGENT: harness-webfetch\nDisallow: /mine\n"
    )
    assert not allows(rules, "/mine")
    assert allows(rules, "/star")  # the token's own group replaces *
    assert allows(rules, "/prefix")  # a group for a leading part of the token does not apply
    only_prefix = "User-agent: *\nDisallow: /star\n\nUser-agent: harness\nDisallow: /prefix\n"
    assert allows(only_prefix, "/prefix")
    assert not allows(only_prefix, "/star")


def test_groups_for_one_agent_are_merged() -> None:
    rules = (
        "User-agent: harness-webfetch\nDisallow: /one\n\n"
        "User-agent: other\nDisallow: /two\n\n"
        "User-agent: harness-webfetch\nDisallow: /three\n"
    )
    assert not allows(rules, "/one") and not allows(rules, "/three")
    assert allows(rules, "/two")


def test_a_group_line_may_name_several_agents() -> None:
    rules = "User-agent: other\nUser-agent: harness-webfetch\nDisallow: /both\n"
    assert not allows(rules, "/both")


def test_robots_txt_itself_is_always_allowed() -> None:
    assert allows("User-agent: *\nDisallow: /\n", "/robots.txt")


def test_no_rules_and_no_group_allow_everything() -> None:
    assert allows("", "/x")
    assert allows("User-agent: other\nDisallow: /\n", "/x")
    assert allows("garbage\n\x00\xff<html>", "/x")


def test_a_token_that_is_none_reads_only_the_star_group() -> None:
    assert not allows("User-agent: *\nDisallow: /x\n", "/x", token=None)


def test_product_tokens() -> None:
    assert product_token("harness-webfetch/0.0") == "harness-webfetch"
    assert product_token("My_Bot-2/1.0") == "My_Bot-"
    assert product_token("/nothing") is None


def test_the_fixed_verdicts() -> None:
    assert ALLOW_ALL.allows("https://example.com/x")
    assert not DISALLOW_ALL.allows("https://example.com/x")


# -- a caller's cost is small and its own ----------------------------------------------------------


def whole_file_protego(text: str, token: str) -> Any:
    """What the rules were before the group was selected first: Protego on the whole file,
    asked with the token when some group names it exactly, else ``*``."""
    from protego import Protego

    from runvil.web._fetch.robots import _AGENT_LINE

    named = any(
        match.group(1).strip().lower() == token.lower() for match in _AGENT_LINE.finditer(text)
    )
    parser = Protego.parse(text)
    return lambda url: parser.can_fetch(url, token if named else "*")


LINES = st.sampled_from([
    "User-agent: *", "user-agent: harness-webfetch", "User-Agent: other", "useragent: *",
    "user agent harness-webfetch", "User-agent: harness-webfetch*", "User-agent: *harness",
    "User-agent:", "Disallow: /a", "disallow /b", "Dissallow: /c", "Allow: /a/b", "allow /b/x",
    "Disallow: /*.pdf$", "Disallow: /d$", "Allow: /a/index.html", "Disallow:", "Allow:",
    "Sitemap: https://example.com/s.xml", "Host: example.com", "Crawl-delay: 5",
    "Unknown: field", "garbage line", "# comment", "", "Disallow: /e # trailing comment",
    "  Disallow :  /f  ", "Disallow: /caf%C3%A9", "Disallow: /g:h", "foo:bar", "Allow: /",
])
PATHS = ["/a", "/a/b", "/b", "/b/x", "/c", "/d", "/d/e", "/e", "/f", "/file.pdf",
         "/caf%C3%A9", "/g:h", "/", "/robots.txt", "/a/"]


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=14))
def test_the_selected_group_reads_as_protego_reads_the_whole_file(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    token = "harness-webfetch"
    before = whole_file_protego(text, token)
    rules = parse_rules(text, token)
    assert [rules.allows("https://example.com" + path) for path in PATHS] == [
        before("https://example.com" + path) for path in PATHS
    ]


def test_many_agents_over_many_rules_keep_one_copy_of_the_rules() -> None:
    """The shape that grew with agents x rules: only the rules of the group that applies reach
    Protego, once each, however many agents the group names."""
    agents = "".join(f"User-agent: bot{i}\n" for i in range(2000))
    rules = "".join(f"Disallow: /p{i}\n" for i in range(2000))
    group = select_group("User-agent: *\n" + agents + rules, "*")
    assert group.rules == 2000
    assert group.text == "user-agent: *\n" + rules.replace("Disallow", "disallow")
    assert select_group(agents + rules, "*").rules == 0
    assert not allows("User-agent: *\n" + agents + rules, "/p1999")
    assert allows(agents + rules, "/p1999")


def test_a_group_with_too_many_wildcard_rules_is_not_evaluated() -> None:
    at_cap = "User-agent: *\n" + "".join(f"Disallow: /*x{i}\n" for i in range(MAX_WILDCARD_RULES))
    assert not allows(at_cap, "/a/x7")
    assert allows(at_cap, "/a/y")
    over = at_cap + "Disallow: /*last\n"
    assert parse_rules(over, "harness-webfetch") is DISALLOW_ALL
    # Rules without a wildcard, and other groups' wildcards, do not count.
    assert allows(at_cap + "Disallow: /plain\n" * 100, "/a/y")
    assert allows("User-agent: other\n" + over[len("User-agent: *\n"):], "/a/y")


async def test_big_files_are_parsed_for_the_run_of_the_call(
    monkeypatch: pytest.MonkeyPatch, make_fetch: FetchFactory, site: SiteFactory
) -> None:
    """A file over 16 KiB is parsed on the fair pool, queued under the run the call belongs to
    (so the pool can keep one run's files from queueing another's)."""
    from runvil._tools import RunScope, current_run
    from runvil.web._fetch import robots as robots_module

    seen: list[tuple[RunScope, float]] = []
    pool = robots_module._parse_pool

    class Recording:
        def submit(self, run: RunScope, call: Any, size: float = 0.0) -> Any:
            seen.append((run, size))
            return pool.submit(run, call, size)

    monkeypatch.setattr(robots_module, "_parse_pool", Recording())
    body = "User-agent: *\nDisallow: /docs/\n" + "# padding\n" * 2000
    await site(robots_site(body=body))
    run = RunScope()
    token = current_run.set(run)
    try:
        assert await make_fetch(ROBOTS).call({"url": PAGE}) == disallowed(PAGE)
    finally:
        current_run.reset(token)
    assert seen == [(run, len(body))]


async def test_replicas_sharing_a_store_read_a_runs_robots_txt_once(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /private/\n"))
    shared: RunStore[KeptRobots] = RunStore(budget=1 << 20, max_entries=16, max_age=600)
    policy = FetchPolicy(robots=True, robots_store=shared)
    one, other = make_fetch(policy), make_fetch(policy)  # two replicas
    run = RunScope()
    token = current_run.set(run)
    try:
        page = await one.call({"url": PAGE})
        KEPT_RULES.end_run(run)  # the other replica has no copy of its own
        refused = await other.call({"url": "https://example.com/private/x"})
        KEPT_RULES.end_run(run)
        key = ("https", "example.com", 443)
        aged = KeptRobots(True, "", time.time() - ROBOTS_MAX_AGE)
        shared.put(run, key, aged, 256)
        again = await other.call({"url": "https://example.com/private/y"})
    finally:
        current_run.reset(token)
        KEPT_RULES.end_run(run)
    assert page == expect_page(PAGE, "page /docs/page")
    assert refused == disallowed("https://example.com/private/x")
    assert again == disallowed("https://example.com/private/y")
    assert served.request_lines == [
        "GET /robots.txt", "GET /docs/page", "GET /robots.txt",
    ], "read once from the shared copy; a copy past its age is read again"
    kept = shared.get(run, key)
    assert kept is not None, "the rules read again were kept for the other replicas"
    assert (kept.verdict, kept.source) == (None, "user-agent: *\ndisallow: /private/\n")


class UnreachableStore:
    """A shared store whose Redis does not answer."""

    def get(self, scope: RunScope, key: Any) -> None:
        raise ToolError(ToolErrorKind.Other, "the shared state is unreachable")

    def put(
        self, scope: RunScope, key: Any, value: Any, size: int, fingerprint: Any = None
    ) -> bool:
        return False

    def fingerprint(self, scope: RunScope, key: Any) -> None:
        return None

    def end_run(self, scope: RunScope) -> None:
        return None


async def test_a_shared_store_that_does_not_answer_is_a_miss(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    served = await site(robots_site(body="User-agent: *\nDisallow: /private/\n"))
    fetch = make_fetch(FetchPolicy(robots=True, robots_store=UnreachableStore()))
    assert await fetch.call({"url": PAGE}) == expect_page(PAGE, "page /docs/page")
    assert served.request_lines == ["GET /robots.txt", "GET /docs/page"]
