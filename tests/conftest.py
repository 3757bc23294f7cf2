"""Suite-wide guards: no real DNS, no connection off loopback, and a canary nothing may reach.

Every test runs with ``socket.getaddrinfo`` and ``socket.socket.connect`` wrapped: looking up any
name other than ``localhost`` or a numeric loopback address, or connecting anywhere but loopback
(or a Unix socket), raises and fails the test. This makes a routing mistake in a test loud instead
of sending traffic off the machine.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import trustme

from tests.fixtures.internet import Canary, FakeInternet

_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class RealNetworkUsed(AssertionError):
    """A test tried to use the real network."""


def _is_loopback_host(host: Any) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host)
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _is_loopback_host(host):
        raise RealNetworkUsed(f"real DNS lookup of {host!r} in a test")
    return _real_getaddrinfo(host, *args, **kwargs)


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback_host(host):
        raise RealNetworkUsed(f"connection to non-loopback address {address!r} in a test")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def no_real_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield


@pytest.fixture(scope="session")
def test_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
async def internet(test_ca: trustme.CA) -> AsyncIterator[FakeInternet]:
    """A fake internet whose canary fails the test if anything reaches it."""
    canary = Canary()
    await canary.start()
    net = FakeInternet(test_ca, canary)
    try:
        yield net
    finally:
        await net.close()
        await canary.stop()
    assert canary.hits == [], f"the canary listener was reached: {canary.hits}"
