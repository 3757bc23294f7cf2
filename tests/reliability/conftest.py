"""Fixtures for the reliability tests: the fault server process and a fetch wired to it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import trustme

from runvil.web._fetch.policy import FetchPolicy
from runvil.web._fetch.tool import WebFetch
from tests.fixtures.faults import FaultServer
from tests.fixtures.internet import FakeInternet

#: A short policy so stalls and trickles end in well under two seconds.
FAULT_POLICY = FetchPolicy(timeout=1.5, connect_timeout=0.5)


@pytest.fixture(scope="session")
def fault_server(test_ca: trustme.CA) -> Iterator[FaultServer]:
    """One fault server process for the whole session (starting one costs a Python start-up)."""
    server = FaultServer()
    server.start(test_ca)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def fault_fetch(
    internet: FakeInternet, fault_server: FaultServer
) -> AsyncIterator[WebFetch]:
    """A ``WebFetch`` under :data:`FAULT_POLICY` whose fake internet reaches the fault server."""
    fault_server.install(internet)
    async with WebFetch(policy=FAULT_POLICY, network=internet.network()) as fetch:
        yield fetch
