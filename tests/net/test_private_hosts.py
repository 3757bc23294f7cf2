"""The named private hosts list and the address rows a listed host may use."""

from __future__ import annotations

import logging

import pytest

from runvil._net import NAMED_PRIVATE, PUBLIC_WEB, EndpointLocked
from runvil._net.addresses import BLOCKED_RANGES, PRIVATE_HOST_RANGES, private_host_may_use
from runvil._net.hostnames import NO_PRIVATE_HOSTS, PrivateHosts, has_empty_label, host_key

LIST = PrivateHosts.parse(
    ["wiki.corp.example", "*.dev.corp.example", "localhost:8080", "Bücher.Example.", "*.lan:8888"]
)


@pytest.mark.parametrize(
    ("host", "port", "listed"),
    [
        ("wiki.corp.example", 443, True),
        ("wiki.corp.example", 80, True),
        ("wiki.corp.example.", 443, True),
        ("wiki.corp.example", 8443, False),
        ("corp.example", 443, False),
        ("x.wiki.corp.example", 443, False),
        ("build.dev.corp.example", 443, True),
        ("a.b.dev.corp.example", 80, True),
        ("dev.corp.example", 443, False),
        ("evildev.corp.example", 443, False),
        ("localhost", 8080, True),
        ("localhost", 443, False),
        ("localhost", 80, False),
        ("xn--bcher-kva.example", 443, True),
        ("searx.lan", 8888, True),
        ("searx.lan", 443, False),
        ("lan", 8888, False),
        ("wiki.corp.example..", 443, False),
        ("x..dev.corp.example", 443, False),
        (".dev.corp.example", 443, False),
        ("searx..lan", 8888, False),
    ],
)
def test_which_targets_are_listed(host: str, port: int, listed: bool) -> None:
    assert LIST.match(host, port) is listed


def test_entries_are_kept_in_their_normal_form() -> None:
    assert LIST.entries == (
        "wiki.corp.example",
        "*.dev.corp.example",
        "localhost:8080",
        "xn--bcher-kva.example",
        "*.lan:8888",
    )
    assert PrivateHosts.parse(["a.example", "A.example."]).entries == ("a.example",)


def test_one_name_on_several_ports() -> None:
    hosts = PrivateHosts.parse(["svc.lan:8080", "svc.lan"])
    assert [hosts.match("svc.lan", port) for port in (80, 443, 8080, 9090)] == [
        True, True, True, False,
    ]


def test_the_empty_list_lists_nothing() -> None:
    assert not NO_PRIVATE_HOSTS
    assert NO_PRIVATE_HOSTS.match("localhost", 443) is False
    assert not PrivateHosts.parse([])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("10.0.0.5", "private_hosts entry '10.0.0.5' is an IP address, not a host name"),
        ("2130706433", "private_hosts entry '2130706433' is an IP address, not a host name"),
        ("[::1]", "private_hosts entry '[::1]' must read NAME, *.NAME, NAME:PORT or *.NAME:PORT"),
        ("*", "private_hosts entry '*' must read NAME, *.NAME, NAME:PORT or *.NAME:PORT"),
        ("a.*.example", "private_hosts entry 'a.*.example' must read NAME, *.NAME, NAME:PORT or "
         "*.NAME:PORT"),
        ("https://wiki/", "private_hosts entry 'https://wiki/' must read NAME, *.NAME, "
         "NAME:PORT or *.NAME:PORT"),
        ("user@wiki", "private_hosts entry 'user@wiki' must read NAME, *.NAME, NAME:PORT or "
         "*.NAME:PORT"),
        ("wiki:0", "private_hosts entry 'wiki:0' has a port out of range"),
        ("wiki:65536", "private_hosts entry 'wiki:65536' has a port out of range"),
        ("a..b", "private_hosts entry 'a..b' is not a valid host name"),
    ],
)
def test_bad_entries_are_refused(entry: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        PrivateHosts.parse([entry])
    assert str(caught.value) == message


def test_a_single_string_is_not_a_list() -> None:
    with pytest.raises(ValueError) as caught:
        PrivateHosts.parse("wiki.corp.example")
    assert str(caught.value) == "private_hosts must be a list of host names, not one string"


# --- the address rows ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ip",
    ["10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.255", "127.0.0.1", "172.16.0.1",
     "172.31.255.255", "192.168.0.1", "::1", "fc00::1", "fdff:ffff::1", "93.184.216.34",
     "2606:4700::1111"],
)
def test_a_listed_host_may_use(ip: str) -> None:
    assert private_host_may_use(ip) is True


@pytest.mark.parametrize(
    "ip",
    ["169.254.169.254", "169.254.0.1", "fe80::1", "febf::1", "0.0.0.0", "0.1.2.3", "::",
     "224.0.0.1", "239.255.255.255", "ff02::1", "255.255.255.255", "240.0.0.1",
     "192.0.0.8", "192.0.2.1", "198.18.0.1", "192.88.99.1", "fec0::1",
     "::ffff:169.254.169.254", "::169.254.169.254", "::ffff:0:a9fe:a9fe",
     "64:ff9b::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe", "2002:a9fe:a9fe::1",
     "2001::a9fe:a9fe", "::ffff:10.0.0.1", "::ffff:0:a00:1", "::ffff:127.0.0.1",
     "64:ff9b::7f00:1", "2002:7f00:1::1", "2001:db8::1", "not-an-ip", "", "010.0.0.1"],
)
def test_a_listed_host_never_uses(ip: str) -> None:
    assert private_host_may_use(ip) is False


def test_the_private_rows_are_rows_of_the_blocked_table() -> None:
    assert set(PRIVATE_HOST_RANGES) <= set(BLOCKED_RANGES)


def test_the_named_private_rule_logs_what_it_drops(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="runvil.web.fetch"):
        allowed = NAMED_PRIVATE.allowed("wiki", ["169.254.169.254", "10.0.0.5", "1.1.1.1"])
    assert allowed == ("10.0.0.5", "1.1.1.1")
    assert caplog.messages == [
        "host wiki resolved to blocked address 169.254.169.254 in range 169.254.0.0/16"
    ]
    assert PUBLIC_WEB.allowed("wiki", ["10.0.0.5", "1.1.1.1"]) == ("1.1.1.1",)


def test_an_endpoint_lock_with_a_private_endpoint() -> None:
    log = logging.getLogger("test")
    rule = EndpointLocked(
        [("searx.lan", 8888), ("api.example", 443)], private=[("searx.lan", 8888)], logger=log
    )
    assert rule.admits("http", "searx.lan", 8888)
    assert rule.admits("https", "searx.lan", 8888)
    assert not rule.admits("http", "api.example", 443)
    assert not rule.admits("http", "searx.lan", 80)
    assert rule.allowed("searx.lan", ["192.168.1.2", "169.254.169.254"]) == ("192.168.1.2",)
    assert rule.allowed("api.example", ["192.168.1.2", "1.1.1.1"]) == ("1.1.1.1",)


def test_a_private_entry_for_an_undeclared_endpoint_is_ignored() -> None:
    rule = EndpointLocked(
        [("api.example", 443)], private=[("other.lan", 80)], logger=logging.getLogger("t")
    )
    assert rule.private == frozenset()
    assert not rule.admits("http", "other.lan", 80)


# --- one spelling for every comparison of names (issue 22, item 6) --------------------------


@pytest.mark.parametrize(
    ("host", "key", "empty_label"),
    [
        ("example.com", "example.com", False),
        ("Example.COM.", "example.com", False),
        ("example.com..", "example.com.", True),
        ("example.com...", "example.com..", True),
        ("a..example.com", "a..example.com", True),
        (".example.com", ".example.com", True),
        (".", "", True),
        ("", "", True),
        ("localhost", "localhost", False),
    ],
)
def test_the_one_key_drops_one_trailing_dot_and_nothing_else(
    host: str, key: str, empty_label: bool
) -> None:
    assert host_key(host) == key
    assert has_empty_label(host) is empty_label


def test_endpoint_locks_read_names_in_the_one_spelling() -> None:
    rule = EndpointLocked([("API.example.", 443)], logger=logging.getLogger("t"))
    assert rule.endpoints == frozenset({("api.example", 443)})
    assert rule.admits("https", "api.example", 443)
    assert rule.admits("https", "Api.Example.", 443)
    assert not rule.admits("https", "api.example..", 443)
    assert not rule.admits("https", "api..example", 443)


def test_no_proxy_reads_names_in_the_one_spelling() -> None:
    from runvil._net.network import Network
    from runvil._net.proxy import Proxies

    proxies = Proxies(
        "env",
        Network(),
        {"HTTPS_PROXY": "http://proxy.lan:3128", "NO_PROXY": "Intra.Example.,*.corp.example"},
    )
    direct = [
        host
        for host in ("intra.example", "intra.example.", "a.intra.example", "x.corp.example.",
                     "intra.example..", "a..intra.example.x", "example")
        if proxies.proxy_for("https", host) is None
    ]
    assert direct == ["intra.example", "intra.example.", "a.intra.example", "x.corp.example."]
