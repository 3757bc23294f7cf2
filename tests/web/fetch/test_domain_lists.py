"""``allowed_domains`` and ``blocked_domains``: checked on every hop, before any lookup."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from runvil import ToolError, ToolErrorKind
from runvil.web import FetchPolicy, WebFetch
from tests.fixtures.internet import FakeInternet
from tests.web.fetch.conftest import FetchFactory, SiteFactory, expect_page


async def page(request: web.Request) -> web.Response:
    return web.Response(text=f"page {request.path}", content_type="text/plain")


def to(location: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location})

    return handler


async def refusal(make_fetch: FetchFactory, policy: FetchPolicy, url: str) -> tuple[str, str]:
    with pytest.raises(ToolError) as caught:
        await make_fetch(policy).call({"url": url})
    return caught.value.kind.value, str(caught.value)


ONLY_EXAMPLE = FetchPolicy(allowed_domains=("example.com",))


async def test_an_allowed_domain_and_its_subdomains_are_fetched(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": page}, hosts=("example.com", "docs.example.com", "a.b.example.com"))
    fetch = make_fetch(ONLY_EXAMPLE)
    for host in ("example.com", "docs.example.com", "a.b.example.com", "EXAMPLE.com"):
        assert await fetch.call({"url": f"https://{host}/"}) == expect_page(
            f"https://{host.lower()}/", "page /"
        )


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://example.org/", "example.org"),
        ("https://notexample.com/", "notexample.com"),
        ("https://example.com.evil.test/x?q=1", "example.com.evil.test"),
        ("https://example.org./", "example.org."),
    ],
)
async def test_a_host_outside_allowed_domains_is_refused_before_any_lookup(
    make_fetch: FetchFactory, internet: FakeInternet, url: str, host: str
) -> None:
    assert await refusal(make_fetch, ONLY_EXAMPLE, url) == (
        ToolErrorKind.InvalidArguments.value,
        f"domain not allowed: {host}",
    )
    assert internet.lookups == []


async def test_a_blocked_domain_is_refused_even_when_allowed(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    policy = FetchPolicy(allowed_domains=("example.com",), blocked_domains=("ads.example.com",))
    for url, host in (
        ("https://ads.example.com/", "ads.example.com"),
        ("https://x.ads.example.com/p", "x.ads.example.com"),
    ):
        assert await refusal(make_fetch, policy, url) == (
            "InvalidArguments",
            f"domain not allowed: {host}",
        )
    assert internet.lookups == []


async def test_blocked_domains_alone_leave_every_other_host_open(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/": page}, hosts=("example.com", "badexample.com"))
    policy = FetchPolicy(blocked_domains=("bad.example.com", "example.org"))
    fetch = make_fetch(policy)
    for host in ("example.com", "badexample.com"):
        assert await fetch.call({"url": f"https://{host}/"}) == expect_page(
            f"https://{host}/", "page /"
        )
    assert await refusal(make_fetch, policy, "https://www.example.org/") == (
        "InvalidArguments",
        "domain not allowed: www.example.org",
    )


async def test_names_compare_after_the_host_parse(
    make_fetch: FetchFactory, internet: FakeInternet
) -> None:
    policy = FetchPolicy(blocked_domains=("Bücher.Example.",))
    assert await refusal(make_fetch, policy, "https://www.BÜCHER.example/") == (
        "InvalidArguments",
        "domain not allowed: www.xn--bcher-kva.example",
    )
    assert internet.lookups == []


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://1.2.3.4/", "ip literal host not allowed: 1.2.3.4"),
        ("https://example.org:8080/", "port not allowed: 8080"),
        ("https://u:p@example.org/", "url must not contain userinfo"),
        ("nope", "invalid url"),
    ],
)
async def test_the_five_admission_checks_come_first(
    make_fetch: FetchFactory, url: str, message: str
) -> None:
    assert await refusal(make_fetch, ONLY_EXAMPLE, url) == ("InvalidArguments", message)


async def test_an_http_url_is_still_the_soft_scheme_refusal(make_fetch: FetchFactory) -> None:
    assert await make_fetch(ONLY_EXAMPLE).call({"url": "http://example.org/"}) == (
        "scheme not allowed: http"
    )


async def test_a_redirect_hop_outside_the_lists_is_a_soft_refusal(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    served = await site({"/start": to("https://example.org/next?token=1")})
    assert await make_fetch(ONLY_EXAMPLE).call({"url": "https://example.com/start"}) == (
        "redirect from https://example.com/start to https://example.org/next refused: "
        "domain not allowed: example.org"
    )
    assert internet.lookups == ["example.com"]
    assert served.request_lines == ["GET /start"]


async def test_a_redirect_into_a_blocked_domain_is_refused(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/start": to("https://tracker.example.com/t")})
    policy = FetchPolicy(blocked_domains=("tracker.example.com",))
    assert await make_fetch(policy).call({"url": "https://example.com/start"}) == (
        "redirect from https://example.com/start to https://tracker.example.com/t refused: "
        "domain not allowed: tracker.example.com"
    )
    assert internet.lookups == ["example.com"]


async def test_the_redirect_rules_before_the_lists_are_reported_first(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/a": to("http://example.org/"), "/b": to("https://example.org:8080/")})
    fetch = make_fetch(ONLY_EXAMPLE)
    assert await fetch.call({"url": "https://example.com/a"}) == (
        "redirect from https://example.com/a to http://example.org/ refused: "
        "refusing https to http downgrade"
    )
    assert await fetch.call({"url": "https://example.com/b"}) == (
        "redirect from https://example.com/b to https://example.org:8080/ refused: "
        "port not allowed: 8080"
    )


async def test_a_redirect_inside_the_allowed_domains_is_followed(
    make_fetch: FetchFactory, site: SiteFactory
) -> None:
    await site({"/start": to("https://docs.example.com/next"), "/next": page},
               hosts=("example.com", "docs.example.com"))
    assert await make_fetch(ONLY_EXAMPLE).call({"url": "https://example.com/start"}) == (
        expect_page("https://docs.example.com/next", "page /next")
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("allowed_domains", "example.com", "allowed_domains must be a list of host names, "
         "not 'example.com'"),
        ("blocked_domains", ["*.example.com"], "blocked_domains entry '*.example.com': write "
         "the domain itself (example.com); it covers every subdomain"),
        ("allowed_domains", ["1.2.3.4"], "allowed_domains entry '1.2.3.4' is an IP address, "
         "not a host name"),
        ("blocked_domains", ["a b"], "blocked_domains entry 'a b' is not a valid host name"),
        ("allowed_domains", [3], "allowed_domains entry 3 is not a string"),
    ],
)
def test_bad_entries_are_refused_when_the_policy_is_made(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        FetchPolicy(**{field: value})  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_list_is_kept_as_a_tuple() -> None:
    policy = FetchPolicy(allowed_domains=["example.com"])  # type: ignore[arg-type]
    assert policy.allowed_domains == ("example.com",)
    assert hash(policy) == hash(FetchPolicy(allowed_domains=("example.com",)))


# --- names with an empty label: one spelling for every check (issue 22, item 6) -------------

SECRET = FetchPolicy(blocked_domains=("secret.example.com", "bücher.example"))


async def serve_empty_label_names(site: SiteFactory, internet: FakeInternet) -> None:
    """What the outside harness had: a resolver that answers for the spellings with empty
    labels too, so only admission stands between them and the page."""
    await site(
        {"/": page, "/start": to("https://secret.example.com../x?token=1"), "/x": page},
        hosts=("example.com", "secret.example.com", "xn--bcher-kva.example", "docs.example.com"),
    )
    for name in (
        "secret.example.com..", "secret.example.com...", "a..secret.example.com",
        ".secret.example.com", "xn--bcher-kva.example..", "docs.example.com..",
    ):
        internet.dns[name] = ["93.184.216.34"]


@pytest.mark.parametrize(
    "url",
    [
        "https://secret.example.com../",
        "https://SECRET.EXAMPLE.COM../",
        "https://secret.example.com.%2e/",
        "https://secret.example.com\u3002\u3002/",
        "https://secret.example.com.../",
        "https://a..secret.example.com/",
        "https://.secret.example.com/",
        "https://xn--bcher-kva.example..",
        "https://Bücher.example../",
    ],
)
async def test_a_host_with_an_empty_label_is_refused_before_any_lookup(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet, url: str
) -> None:
    await serve_empty_label_names(site, internet)
    assert await refusal(make_fetch, SECRET, url) == ("InvalidArguments", "invalid url")
    assert internet.lookups == []


async def test_allowed_domains_refuse_a_host_with_an_empty_label_too(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await serve_empty_label_names(site, internet)
    assert await refusal(make_fetch, ONLY_EXAMPLE, "https://docs.example.com../") == (
        "InvalidArguments",
        "invalid url",
    )
    assert internet.lookups == []


async def test_a_redirect_to_a_host_with_an_empty_label_is_refused_the_same_way(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await serve_empty_label_names(site, internet)
    served = await make_fetch(SECRET).call({"url": "https://example.com/start"})
    assert served == (
        "redirect from https://example.com/start to https://secret.example.com../x refused: "
        "invalid url"
    )
    assert internet.lookups == ["example.com"]


async def test_one_trailing_dot_is_still_the_same_name(
    make_fetch: FetchFactory, site: SiteFactory, internet: FakeInternet
) -> None:
    await site({"/": page}, hosts=("example.com.", "secret.example.com."))
    fetch = make_fetch(SECRET)
    assert await fetch.call({"url": "https://example.com./"}) == expect_page(
        "https://example.com./", "page /"
    )
    assert await refusal(make_fetch, SECRET, "https://secret.example.com./") == (
        "InvalidArguments",
        "domain not allowed: secret.example.com.",
    )
    assert internet.lookups == ["example.com."]


async def test_without_host_rules_such_a_name_goes_to_the_resolver_as_before(
    fetch: WebFetch, internet: FakeInternet
) -> None:
    assert await fetch.call({"url": "https://secret.example.com../"}) == (
        "dns resolution failed for secret.example.com.."
    )
    assert internet.lookups == ["secret.example.com.."]
