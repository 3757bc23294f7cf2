"""The offset-slicing URL record reads exactly what ``ada_url.parse_url`` reads."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runvil.web._fetch import urlrecord
from runvil.web._fetch.urlrecord import UrlRecord, parse_record

# Every shape of URL the record has to slice: credentials, ports (default and not), IP literals
# in each notation, empty and present queries and fragments, IDNA, percent-encoding, relative
# references against a base, and strings that are not URLs at all.
SAMPLES = [
    "https://example.com/",
    "https://example.com",
    "HTTPS://EXAMPLE.COM:443/A?b#c",
    "http://example.com:8080/path/../x?q=1&r=%41#frag",
    "https://user:pass@example.com:8443/a#b",
    "https://user@example.com/",
    "https://:pass@example.com/",
    "https://@example.com/",
    "https://example.com./a?",
    "https://example.com/?#",
    "https://example.com/#",
    "https://0177.0.0.1/",
    "https://127.1/",
    "https://2130706433/",
    "https://[::1]:8443/x",
    "https://[0:0:0:0:0:ffff:7f00:1]/",
    "https://bücher.example/straße?ä=ö#ü",
    "https://xn--bcher-kva.example/",
    "https://example.com/a b/\t\n",
    "  https://example.com/lead-and-trail  ",
    "http://example.com\\back\\slash",
    "ftp://example.com/file",
    "ws://example.com:80/",
    "data:text/plain,hello",
    "javascript:alert(1)",
    "mailto:someone@example.com",
    "file:///etc/passwd",
    "not a url",
    "",
    "https://",
    "https://a b/",
    "/relative/path",
    "https://example.com:99999/",
]


def _both(raw: str, base: str | None = None) -> tuple[UrlRecord | None, UrlRecord | None]:
    return parse_record(raw, base), urlrecord._parse_slow(raw, base)


def test_the_fast_path_is_the_one_in_use() -> None:
    assert urlrecord._FAST


@pytest.mark.parametrize("raw", SAMPLES)
def test_each_sample_reads_the_same_both_ways(raw: str) -> None:
    fast, slow = _both(raw)
    assert fast == slow


@pytest.mark.parametrize("location", ["/next", "../up?q", "//other.example/x", "?only=query",
                                      "#frag", "https://user:pw@x.example:8443/", "", "  "])
def test_relative_references_read_the_same_both_ways(location: str) -> None:
    fast, slow = _both(location, "https://example.com/a/b?c=d#e")
    assert fast == slow


def test_the_record_of_a_typical_url() -> None:
    assert parse_record("https://user:pw@Example.COM:8443/a/./b?q=1#f") == UrlRecord(
        href="https://user:pw@example.com:8443/a/b?q=1#f",
        has_credentials=True,
        port="8443",
        hostname="example.com",
        pathname="/a/b",
        host_type=0,
    )
    assert parse_record("https://[::1]/") == UrlRecord(
        href="https://[::1]/", has_credentials=False, port="", hostname="[::1]",
        pathname="/", host_type=2,
    )  # fmt: skip


def test_unencodable_strings_are_not_urls() -> None:
    assert parse_record("https://example.com/\ud800") is None
    assert parse_record("/x", "https://example.com/\udfff") is None


_URLISH = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda scheme, auth, host, port, path, tail: f"{scheme}://{auth}{host}{port}{path}{tail}",
        st.sampled_from(["http", "https", "HTTPS", "ftp", "ws", "foo", "file"]),
        st.sampled_from(["", "u@", "u:p@", ":p@", "@", "a%40b:c@"]),
        st.one_of(
            st.sampled_from(["example.com", "127.1", "0x7f.1", "[::1]", "bücher.de", "a..b",
                             "EXAMPLE.com.", "%41.com", "1.2.3.4.5", ""]),
            st.text(max_size=12),
        ),
        st.sampled_from(["", ":", ":443", ":80", ":8080", ":0", ":65536", ":x"]),
        st.text(max_size=20),
        st.sampled_from(["", "?", "?a=b", "#", "#x", "?q#f", "?#"]),
    ),
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_URLISH, relative=st.booleans())
def test_any_string_reads_the_same_both_ways(raw: str, relative: bool) -> None:
    base = "https://example.com/dir/page?x#y" if relative else None
    fast, slow = _both(raw, base)
    assert fast == slow
