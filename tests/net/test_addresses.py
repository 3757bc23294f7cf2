"""The blocked address table: every row at both ends, its neighbours, and the debug log."""

from __future__ import annotations

import ipaddress
import logging

import pytest

from runvil._net.addresses import BLOCKED_RANGES, allowed_addresses, blocked_range

DESIGN_TABLE = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
    "::/128", "::1/128", "::ffff:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
    "100:0:0:1::/64", "2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20", "5f00::/16",
    "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
]


def test_table_is_exactly_the_design_table_in_order() -> None:
    assert [str(net) for net in BLOCKED_RANGES] == DESIGN_TABLE
    assert sum(net.version == 4 for net in BLOCKED_RANGES) == 16


# First and last address of every row, with the row each one is reported under: the first
# matching row in table order wins, so ::1 names "::1/128" (before "::/96") and 255.255.255.255
# names "240.0.0.0/4" (which comes before its own row).
ROW_ENDS = [
    ("0.0.0.0", "0.0.0.0/8"), ("0.255.255.255", "0.0.0.0/8"),
    ("10.0.0.0", "10.0.0.0/8"), ("10.255.255.255", "10.0.0.0/8"),
    ("100.64.0.0", "100.64.0.0/10"), ("100.127.255.255", "100.64.0.0/10"),
    ("127.0.0.0", "127.0.0.0/8"), ("127.255.255.255", "127.0.0.0/8"),
    ("169.254.0.0", "169.254.0.0/16"), ("169.254.255.255", "169.254.0.0/16"),
    ("172.16.0.0", "172.16.0.0/12"), ("172.31.255.255", "172.16.0.0/12"),
    ("192.0.0.0", "192.0.0.0/24"), ("192.0.0.255", "192.0.0.0/24"),
    ("192.0.2.0", "192.0.2.0/24"), ("192.0.2.255", "192.0.2.0/24"),
    ("192.88.99.0", "192.88.99.0/24"), ("192.88.99.255", "192.88.99.0/24"),
    ("192.168.0.0", "192.168.0.0/16"), ("192.168.255.255", "192.168.0.0/16"),
    ("198.18.0.0", "198.18.0.0/15"), ("198.19.255.255", "198.18.0.0/15"),
    ("198.51.100.0", "198.51.100.0/24"), ("198.51.100.255", "198.51.100.0/24"),
    ("203.0.113.0", "203.0.113.0/24"), ("203.0.113.255", "203.0.113.0/24"),
    ("224.0.0.0", "224.0.0.0/4"), ("239.255.255.255", "224.0.0.0/4"),
    ("240.0.0.0", "240.0.0.0/4"), ("255.255.255.254", "240.0.0.0/4"),
    ("255.255.255.255", "240.0.0.0/4"),
    ("::", "::/128"),
    ("::1", "::1/128"),
    ("::ffff:0:0", "::ffff:0:0/96"), ("::ffff:ffff:ffff", "::ffff:0:0/96"),
    ("::2", "::/96"), ("::ffff:ffff", "::/96"),
    ("64:ff9b::", "64:ff9b::/96"), ("64:ff9b::ffff:ffff", "64:ff9b::/96"),
    ("64:ff9b:1::", "64:ff9b:1::/48"), ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::/48"),
    ("100::", "100::/64"), ("100::ffff:ffff:ffff:ffff", "100::/64"),
    ("100:0:0:1::", "100:0:0:1::/64"), ("100:0:0:1:ffff:ffff:ffff:ffff", "100:0:0:1::/64"),
    ("2001::", "2001::/23"), ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"),
    ("2001:db8::", "2001:db8::/32"), ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32"),
    ("2002::", "2002::/16"), ("2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2002::/16"),
    ("3fff::", "3fff::/20"), ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20"),
    ("5f00::", "5f00::/16"), ("5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16"),
    ("fc00::", "fc00::/7"), ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7"),
    ("fe80::", "fe80::/10"), ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe80::/10"),
    ("fec0::", "fec0::/10"), ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::/10"),
    ("ff00::", "ff00::/8"), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ff00::/8"),
]


@pytest.mark.parametrize(("ip", "cidr"), ROW_ENDS)
def test_every_row_blocks_its_first_and_last_address(ip: str, cidr: str) -> None:
    assert blocked_range(ip) == cidr


def test_row_ends_cover_every_row() -> None:
    assert {cidr for _, cidr in ROW_ENDS} | {"255.255.255.255/32"} == set(DESIGN_TABLE)
    for net in BLOCKED_RANGES:
        assert ipaddress.ip_address(str(net.network_address)) in net
        assert blocked_range(str(net.network_address)) is not None
        assert blocked_range(str(net.broadcast_address)) is not None


@pytest.mark.parametrize(
    ("ip", "cidr"),
    [
        ("::ffff:127.0.0.1", "::ffff:0:0/96"),
        ("::ffff:1.1.1.1", "::ffff:0:0/96"),
        ("::ffff:8.8.8.8", "::ffff:0:0/96"),
        ("::ffff:169.254.169.254", "::ffff:0:0/96"),
        ("::169.254.169.254", "::/96"),
        ("::127.0.0.1", "::/96"),
        ("169.254.169.254", "169.254.0.0/16"),
        ("64:ff9b::7f00:1", "64:ff9b::/96"),
        ("64:ff9b::a9fe:a9fe", "64:ff9b::/96"),
        ("64:ff9b:1::169.254.169.254", "64:ff9b:1::/48"),
        ("2002:a9fe:a9fe::", "2002::/16"),
        ("2001::5601:5601", "2001::/23"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/23"),
        ("100.100.100.200", "100.64.0.0/10"),
        ("192.0.0.192", "192.0.0.0/24"),
        ("fd00:ec2::254", "fc00::/7"),
        ("FE80::1", "fe80::/10"),
        ("fe80::1%eth0", "fe80::/10"),
        ("10.0.0.5", "10.0.0.0/8"),
        ("172.16.0.1", "172.16.0.0/12"),
    ],
)
def test_embedded_and_transition_forms_are_blocked(ip: str, cidr: str) -> None:
    assert blocked_range(ip) == cidr


@pytest.mark.parametrize(
    "ip",
    [
        "11.0.0.0", "9.255.255.255", "172.32.0.0", "172.15.255.255", "223.255.255.255",
        "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0", "169.253.255.255",
        "169.255.0.0", "192.0.1.0", "192.0.3.0", "192.88.98.255", "192.88.100.0",
        "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "198.51.99.255",
        "198.51.101.0", "203.0.112.255", "203.0.114.0", "1.0.0.0",
        "1.1.1.1", "8.8.8.8", "93.184.216.34", "168.63.129.16",
        "2001:db9::1", "2001:200::", "3fff:1000::1", "2003::", "5f01::", "fbff::", "fe7f::",
        "2606:4700:4700::1111", "2001:4860:4860::8888", "64:ff9b::1:0:0", "64:ff9b:2::",
        "100:0:0:2::",
    ],
)
def test_neighbours_and_public_addresses_are_allowed(ip: str) -> None:
    assert blocked_range(ip) is None


@pytest.mark.parametrize("junk", ["", "localhost", "example.com", "127.1", "0177.0.0.1",
                                  "2130706433", "010.0.0.1", "1.2.3.4 ", "::1::", "[::1]"])
def test_anything_but_an_ip_address_is_blocked_as_invalid(junk: str) -> None:
    assert blocked_range(junk) == "invalid"


def test_allowed_addresses_keeps_allowed_answers_in_order() -> None:
    answers = ["127.0.0.1", "93.184.216.34", "10.0.0.5", "2606:4700:4700::1111", "1.1.1.1"]
    assert allowed_addresses("example.com", answers) == [
        "93.184.216.34",
        "2606:4700:4700::1111",
        "1.1.1.1",
    ]


def test_allowed_addresses_all_blocked_or_empty() -> None:
    assert allowed_addresses("internal.example", ["10.0.0.5", "127.0.0.1"]) == []
    assert allowed_addresses("empty.example", []) == []


def test_each_dropped_address_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="runvil.web.fetch")
    allowed_addresses("internal.example", ["10.0.0.5", "93.184.216.34", "::1", "nonsense"])
    records = [r for r in caplog.records if r.name == "runvil.web.fetch"]
    assert [r.levelno for r in records] == [logging.DEBUG] * 3
    assert [r.getMessage() for r in records] == [
        "host internal.example resolved to blocked address 10.0.0.5 in range 10.0.0.0/8",
        "host internal.example resolved to blocked address ::1 in range ::1/128",
        "host internal.example resolved to blocked address nonsense in range invalid",
    ]


def test_allowed_answers_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="runvil.web.fetch")
    allowed_addresses("example.com", ["93.184.216.34"])
    assert [r for r in caplog.records if r.name == "runvil.web.fetch"] == []


# IPv4-translated addresses (::ffff:0:0:0/96, RFC 2765's SIIT form) sit in no row of the table:
# they are judged by the IPv4 address in their low 32 bits, against the IPv4 rows.
@pytest.mark.parametrize(
    ("ip", "cidr"),
    [
        ("::ffff:0:7f00:1", "127.0.0.0/8"),
        ("::ffff:0:127.0.0.1", "127.0.0.0/8"),
        ("::ffff:0:a00:1", "10.0.0.0/8"),
        ("::ffff:0:a9fe:a9fe", "169.254.0.0/16"),
        ("::ffff:0:c0a8:101", "192.168.0.0/16"),
        ("::ffff:0:0:0", "0.0.0.0/8"),
        ("::ffff:0:ffff:ffff", "240.0.0.0/4"),
        ("0:0:0:0:ffff:0:6440:1", "100.64.0.0/10"),
    ],
)
def test_ipv4_translated_addresses_are_judged_by_the_embedded_address(ip: str, cidr: str) -> None:
    assert blocked_range(ip) == cidr


@pytest.mark.parametrize("ip", ["::ffff:0:5db8:d822", "::ffff:0:808:808", "::ffff:0:101:101"])
def test_an_ipv4_translated_public_address_is_allowed(ip: str) -> None:
    assert blocked_range(ip) is None


def test_an_ipv4_translated_answer_is_logged_with_the_embedded_range(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="runvil.web.fetch")
    assert allowed_addresses("siit.example", ["::ffff:0:7f00:1", "::ffff:0:a00:1"]) == []
    assert caplog.messages == [
        "host siit.example resolved to blocked address ::ffff:0:7f00:1 in range 127.0.0.0/8",
        "host siit.example resolved to blocked address ::ffff:0:a00:1 in range 10.0.0.0/8",
    ]
