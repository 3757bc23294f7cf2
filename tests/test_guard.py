"""The suite's own guards work: real DNS and off-loopback connects fail loudly."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import RealNetworkUsed
from tests.fixtures.internet import FakeInternet


def test_real_dns_lookup_is_refused() -> None:
    with pytest.raises(RealNetworkUsed):
        socket.getaddrinfo("example.com", 443)


def test_connect_off_loopback_is_refused() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RealNetworkUsed):
            sock.connect(("93.184.216.34", 443))
    finally:
        sock.close()


def test_loopback_lookup_is_allowed() -> None:
    assert socket.getaddrinfo("127.0.0.1", 80)


async def test_unmapped_route_goes_to_canary(internet: FakeInternet) -> None:
    assert internet.route("1.1.1.1", 443) == ("127.0.0.1", internet.canary.port)
    # The route was computed, nothing connected: the canary stays silent.
    assert internet.canary.hits == []
