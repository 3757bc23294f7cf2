"""URL admission: the five checks, redirect hops and display forms, exactly as seeds 000/001 say."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil.web._fetch.admission import (
    RedirectRefused,
    TargetUrl,
    UrlRefused,
    admit_redirect,
    admit_url,
    display_url,
)


def refusal(raw: str) -> UrlRefused:
    with pytest.raises(UrlRefused) as caught:
        admit_url(raw)
    return caught.value


def hop_refusal(current: str, location: str, hops: int = 0, cap: int = 5) -> str:
    with pytest.raises(RedirectRefused) as caught:
        admit_redirect(admit_url(current), location, hops, cap)
    return caught.value.text


# --- admitted URLs -------------------------------------------------------------------------


def test_plain_https_url_is_admitted_in_every_form() -> None:
    assert admit_url("https://example.com/") == TargetUrl(
        href="https://example.com/",
        scheme="https",
        host="example.com",
        port=443,
        path_and_query="/",
        host_header="example.com",
        display="https://example.com/",
    )


def test_fragment_dropped_and_query_sent_unchanged() -> None:
    target = admit_url("https://example.com/path?q=1#frag")
    assert target.href == "https://example.com/path?q=1"
    assert target.path_and_query == "/path?q=1"
    assert target.display == "https://example.com/path"


def test_empty_query_and_empty_fragment_follow_the_whatwg_href() -> None:
    target = admit_url("https://example.com/p?#")
    assert target.href == "https://example.com/p?"
    assert target.path_and_query == "/p?"


def test_port_80_passes_the_port_check_and_shows_in_host_header() -> None:
    target = admit_url("https://example.com:80/")
    assert target.port == 80
    assert target.host_header == "example.com:80"
    assert target.href == "https://example.com:80/"
    assert target.display == "https://example.com:80/"


def test_written_default_port_is_normalised_away() -> None:
    target = admit_url("https://example.com:443/a")
    assert (target.port, target.host_header, target.href) == (
        443,
        "example.com",
        "https://example.com/a",
    )


def test_empty_userinfo_is_no_userinfo_once_parsed() -> None:
    assert admit_url("https://@example.com/").href == "https://example.com/"
    assert admit_url("https://:@example.com/").href == "https://example.com/"


def test_host_is_whatwg_ascii_host() -> None:
    target = admit_url("HTTPS://Bücher.EXAMPLE./x y")
    assert target.host == "xn--bcher-kva.example."
    assert target.host_header == "xn--bcher-kva.example."
    assert target.href == "https://xn--bcher-kva.example./x%20y"
    assert target.path_and_query == "/x%20y"


def test_whatwg_repairs_are_what_is_requested() -> None:
    # Leading/trailing spaces and embedded tabs/newlines are stripped by the WHATWG parser.
    target = admit_url("  https://exa\tmple.com/a\nb  ")
    assert target.href == "https://example.com/ab"


# --- the five checks, in order ------------------------------------------------------------


@pytest.mark.parametrize("raw", ["not a url", "", "https://", "https://a b/", "/relative/path",
                                 "https://example.com:65536/", "https://[::1", "https://1.2.3.4.5/"])
def test_parse_check(raw: str) -> None:
    refused = refusal(raw)
    assert (refused.message, refused.soft, str(refused)) == ("invalid url", False, "invalid url")


@pytest.mark.parametrize(
    ("raw", "scheme"),
    [
        ("http://example.com/", "http"),
        ("HTTP://example.com/", "http"),
        ("ftp://example.com/file", "ftp"),
        ("file:///etc/passwd", "file"),
        ("data:text/plain,hi", "data"),
        ("javascript:alert(1)", "javascript"),
        ("gopher://example.com/", "gopher"),
    ],
)
def test_scheme_check_is_soft(raw: str, scheme: str) -> None:
    refused = refusal(raw)
    assert (refused.message, refused.soft) == (f"scheme not allowed: {scheme}", True)


@pytest.mark.parametrize(
    "raw",
    [
        "https://user:pass@example.com/",
        "https://user@example.com/",
        "https://:pass@example.com/",
        "https://user:@example.com/",
        "https://user:pass@example.com:8080/",
        "https://user:pass@1.2.3.4/",
    ],
)
def test_userinfo_check(raw: str) -> None:
    refused = refusal(raw)
    assert (refused.message, refused.soft) == ("url must not contain userinfo", False)


@pytest.mark.parametrize(
    ("raw", "port"),
    [
        ("https://example.com:8080/", 8080),
        ("https://example.com:8443/", 8443),
        ("https://example.com:08080/", 8080),
        ("https://example.com:0/", 0),
        ("https://example.com:65535/", 65535),
        ("https://example.com:25/", 25),
        ("https://1.2.3.4:8080/", 8080),
    ],
)
def test_port_check(raw: str, port: int) -> None:
    refused = refusal(raw)
    assert (refused.message, refused.soft) == (f"port not allowed: {port}", False)


@pytest.mark.parametrize(
    ("raw", "address"),
    [
        ("https://1.2.3.4/", "1.2.3.4"),
        ("https://93.184.216.34/", "93.184.216.34"),
        ("https://127.0.0.1/", "127.0.0.1"),
        ("https://0177.0.0.1/", "127.0.0.1"),
        ("https://127.1/", "127.0.0.1"),
        ("https://2130706433/", "127.0.0.1"),
        ("https://0x7f.1/", "127.0.0.1"),
        ("https://0x7f000001/", "127.0.0.1"),
        ("https://017700000001/", "127.0.0.1"),
        ("https://2852039166/", "169.254.169.254"),
        ("https://169.254.169.254/", "169.254.169.254"),
        ("https://169.254.169.254./", "169.254.169.254"),
        ("https://134744072/", "8.8.8.8"),
        ("https://0/", "0.0.0.0"),
        ("https://0.0.0.0/", "0.0.0.0"),
        ("https://[::1]/", "::1"),
        ("https://[::]/", "::"),
        ("https://[::ffff:127.0.0.1]/", "::ffff:7f00:1"),
        ("https://[::ffff:7f00:1]/", "::ffff:7f00:1"),
        ("https://[::127.0.0.1]/", "::7f00:1"),
        ("https://[::ffff:169.254.169.254]/", "::ffff:a9fe:a9fe"),
        ("https://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"),
        ("https://[FD00:0:0:0:0:0:0:1]/", "fd00::1"),
        ("https://[2001:db8::1]:443/", "2001:db8::1"),
    ],
)
def test_ip_literal_check_names_the_parsed_address(raw: str, address: str) -> None:
    refused = refusal(raw)
    assert (refused.message, refused.soft) == (f"ip literal host not allowed: {address}", False)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("http://user:pass@example.com:8080/", "scheme not allowed: http"),
        ("http://127.0.0.1:8080/", "scheme not allowed: http"),
        ("https://user:pass@127.0.0.1:8080/", "url must not contain userinfo"),
        ("https://127.0.0.1:8080/", "port not allowed: 8080"),
        ("ftp://user@1.2.3.4:21/", "scheme not allowed: ftp"),
    ],
)
def test_only_the_first_broken_rule_is_reported(raw: str, message: str) -> None:
    assert refusal(raw).message == message


# --- display forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("href", "shown"),
    [
        ("https://user:pass@host.example:8443/a/b?x=secret#frag", "https://host.example:8443/a/b"),
        ("https://example.com/missing", "https://example.com/missing"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com:443/x?token=abc", "https://example.com/x"),
        ("https://[::1]:8080/p", "https://[::1]:8080/p"),
        ("data:text/plain,secret", "data:"),
        ("javascript:alert(document.cookie)", "javascript:"),
        ("mailto:someone@example.com", "mailto:"),
        ("file:///etc/passwd", "file:///etc/passwd"),
        ("not a url?x=1#y", "not a url"),
        ("::bad#x?y", "::bad"),
    ],
)
def test_display_url(href: str, shown: str) -> None:
    assert display_url(href) == shown


def test_display_of_admitted_url_never_shows_query_or_fragment() -> None:
    target = admit_url("https://example.com:80/a/b?x=secret#frag")
    assert target.display == "https://example.com:80/a/b"


# --- redirects -----------------------------------------------------------------------------


def test_redirect_to_same_site_is_followed() -> None:
    target = admit_redirect(admit_url("https://example.com/"), "https://example.com/next", 0, 5)
    assert target.href == "https://example.com/next"


@pytest.mark.parametrize(
    ("location", "href"),
    [
        ("/next?q=1#f", "https://example.com/next?q=1"),
        ("next", "https://example.com/dir/next"),
        ("../up", "https://example.com/up"),
        ("?only=query", "https://example.com/dir/page?only=query"),
        ("#fragment-only", "https://example.com/dir/page?a=1"),
        ("//b.example/x", "https://b.example/x"),
        ("https://c.example/", "https://c.example/"),
        ("HTTPS://B.EXAMPLE:443/x", "https://b.example/x"),
    ],
)
def test_redirect_resolves_relative_to_the_current_url(location: str, href: str) -> None:
    current = admit_url("https://example.com/dir/page?a=1#frag")
    assert admit_redirect(current, location, 0, 5).href == href


def test_redirect_chain_across_hosts() -> None:
    a = admit_url("https://a.example/")
    b = admit_redirect(a, "https://b.example/", 0, 5)
    c = admit_redirect(b, "https://c.example/", 1, 5)
    assert c.href == "https://c.example/"


def test_port_refusal_text_from_seed() -> None:
    assert hop_refusal("https://example.com/start", "https://example.com:8080/next") == (
        "redirect from https://example.com/start to https://example.com:8080/next refused: "
        "port not allowed: 8080"
    )


def test_five_hops_are_followed_and_the_sixth_is_refused() -> None:
    current = admit_url("https://example.com/0")
    for hop in range(5):
        current = admit_redirect(current, f"/{hop + 1}", hop, 5)
    assert current.href == "https://example.com/5"
    with pytest.raises(RedirectRefused) as caught:
        admit_redirect(current, "/6", 5, 5)
    assert caught.value.text == (
        "redirect from https://example.com/5 to https://example.com/6 refused: "
        "exceeded max redirects (5)"
    )


def test_cap_comes_before_every_other_rule() -> None:
    assert hop_refusal("https://example.com/a", "http://127.0.0.1/", hops=5) == (
        "redirect from https://example.com/a to http://127.0.0.1/ refused: "
        "exceeded max redirects (5)"
    )
    assert hop_refusal("https://example.com/a", "https://exa mple.com/?q#f", hops=3, cap=3) == (
        "redirect from https://example.com/a to https://exa mple.com/ refused: "
        "exceeded max redirects (3)"
    )


def test_zero_cap_refuses_the_first_redirect() -> None:
    assert hop_refusal("https://example.com/", "/next", hops=0, cap=0).endswith(
        "refused: exceeded max redirects (0)"
    )


def test_downgrade_comes_before_the_ip_literal() -> None:
    assert hop_refusal("https://example.com/", "http://127.0.0.1/") == (
        "redirect from https://example.com/ to http://127.0.0.1/ refused: "
        "refusing https to http downgrade"
    )


def test_downgrade_with_query_and_credentials_shows_display_forms() -> None:
    assert hop_refusal(
        "https://example.com/start?token=secret", "http://user:pw@example.com/x?y=1#z"
    ) == (
        "redirect from https://example.com/start to http://example.com/x refused: "
        "refusing https to http downgrade"
    )


@pytest.mark.parametrize(
    ("location", "to", "reason"),
    [
        ("ftp://example.com/f", "ftp://example.com/f", "scheme not allowed: ftp"),
        ("file:///etc/passwd", "file:///etc/passwd", "scheme not allowed: file"),
        ("gopher://example.com/", "gopher://example.com/", "scheme not allowed: gopher"),
        ("data:text/html,<script>", "data:", "scheme not allowed: data"),
        ("javascript:alert(1)", "javascript:", "scheme not allowed: javascript"),
        ("https://user:pass@example.com/x?s#f", "https://example.com/x",
         "url must not contain userinfo"),
        ("https://user@example.com/", "https://example.com/", "url must not contain userinfo"),
        ("https://example.com:8443/", "https://example.com:8443/", "port not allowed: 8443"),
    ],
)
def test_redirect_admission_reasons(location: str, to: str, reason: str) -> None:
    assert hop_refusal("https://example.com/start", location) == (
        f"redirect from https://example.com/start to {to} refused: {reason}"
    )


@pytest.mark.parametrize(
    ("location", "address", "to"),
    [
        ("https://127.0.0.1/", "127.0.0.1", "https://127.0.0.1/"),
        ("https://0177.0.0.1/", "127.0.0.1", "https://127.0.0.1/"),
        ("https://127.1/", "127.0.0.1", "https://127.0.0.1/"),
        ("https://2130706433/", "127.0.0.1", "https://127.0.0.1/"),
        ("https://0x7f.1/", "127.0.0.1", "https://127.0.0.1/"),
        ("https://[::1]/", "::1", "https://[::1]/"),
        ("https://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "https://[::ffff:7f00:1]/"),
        ("https://[::127.0.0.1]/", "::7f00:1", "https://[::7f00:1]/"),
        ("//169.254.169.254/latest/meta-data?x", "169.254.169.254",
         "https://169.254.169.254/latest/meta-data"),
    ],
)
def test_redirect_to_ip_literal_names_the_parsed_address(
    location: str, address: str, to: str
) -> None:
    assert hop_refusal("https://example.com/", location) == (
        f"redirect from https://example.com/ to {to} refused: "
        f"ip literal host not allowed: {address}"
    )


def test_unparsable_location_is_cut_before_query_or_fragment() -> None:
    assert hop_refusal("https://example.com/a?secret=1", "https://exa mple.com/p?q=secret") == (
        "redirect from https://example.com/a to https://exa mple.com/p refused: invalid url"
    )
    assert hop_refusal("https://example.com/", "https://[::1#x?y") == (
        "redirect from https://example.com/ to https://[::1 refused: invalid url"
    )


def test_redirect_refusal_str_is_its_text() -> None:
    with pytest.raises(RedirectRefused) as caught:
        admit_redirect(admit_url("https://example.com/"), "http://example.com/", 0, 5)
    assert str(caught.value) == caught.value.text


def test_port_80_hop_is_not_a_downgrade() -> None:
    hop = admit_redirect(admit_url("https://example.com/"), "https://example.com:80/", 0, 5)
    assert hop.port == 80


# --- arbitrary input -----------------------------------------------------------------------

ADMISSION_MESSAGES = ("invalid url", "scheme not allowed: ", "url must not contain userinfo",
                      "port not allowed: ", "ip literal host not allowed: ")


def _check_any(raw: str) -> None:
    try:
        target = admit_url(raw)
    except UrlRefused as refused:
        assert refused.message.startswith(ADMISSION_MESSAGES)
        assert refused.soft == refused.message.startswith("scheme not allowed: ")
    else:
        assert target.scheme == "https"
        assert target.port in (80, 443)
        assert "#" not in target.href
        assert target.href == f"https://{target.host_header}{target.path_and_query}"


url_like = st.builds(
    lambda scheme, user, host, port, rest: f"{scheme}{user}{host}{port}{rest}",
    st.sampled_from(["https://", "http://", "HTTPS:", "ftp://", "https:/\\", "", "data:"]),
    st.sampled_from(["", "u@", ":p@", "u:p@", "@"]),
    st.one_of(
        st.sampled_from(["example.com", "127.1", "0x7f.1", "[::1]", "[::ffff:1.2.3.4]",
                         "xn--", "ex%41mple.com", "bücher.de", "1.2.3.4.5", "[", "]"]),
        st.text(max_size=20),
    ),
    st.sampled_from(["", ":80", ":443", ":8080", ":", ":99999", ":0x1"]),
    st.text(max_size=30),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), url_like, st.text(alphabet=st.characters(codec=None), max_size=50)))
def test_any_string_ends_in_a_specified_message(raw: str) -> None:
    _check_any(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "https://example.com/\ud800",
        "\udfff",
        "https://exa\x00mple.com/",
        "https://example.com/\x00\x01\x7f",
        "\x00",
        "https://" + "a" * 1_000_000 + ".com/",
        "https://example.com/" + "x" * 1_000_000,
        "h" * 1_000_000,
        "https://example.com/" + "\u202e" * 1000,
    ],
)
def test_hostile_strings(raw: str) -> None:
    _check_any(raw)


def test_lone_surrogate_is_invalid_url() -> None:
    assert refusal("https://example.com/\ud800").message == "invalid url"


def test_non_string_is_invalid_url() -> None:
    assert refusal(b"https://example.com/").message == "invalid url"  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.integers(min_value=0, max_value=7))
def test_any_location_is_followed_or_refused_with_hop_text(location: str, hops: int) -> None:
    current = admit_url("https://example.com/start?secret=1")
    try:
        target = admit_redirect(current, location, hops, 5)
    except RedirectRefused as refused:
        assert refused.text.startswith("redirect from https://example.com/start to ")
        assert " refused: " in refused.text
        assert "secret" not in refused.text.split(" to ", 1)[0]
    else:
        assert hops < 5
        assert target.scheme == "https"
