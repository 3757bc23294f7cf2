"""The dial permit's routed addresses, and what computing them costs Python's collector."""

from __future__ import annotations

import gc

from runvil._net.permit import DialPermit


def route(ip: str, port: int) -> tuple[str, int]:
    return ("127.0.0.1", 8443) if ip == "93.184.216.34" else ("0:0::1", port)


def test_routed_addresses_keep_answer_order_in_canonical_form() -> None:
    permit = DialPermit("example.com", 443, ("93.184.216.34", "2606:2800::1"), route)
    assert permit.routed() == (("127.0.0.1", 8443), ("::1", 443))
    assert permit.allows("::1", 443) and not permit.allows("127.0.0.1", 443)


def test_the_pool_check_answers_as_the_routes_do_without_keeping_them() -> None:
    # A request served from the pool leaves no routes on its permit; the answer and the errors
    # are those of ``endpoint in permit.routed()``.
    import pytest

    permit = DialPermit("example.com", 443, ("93.184.216.34", "2606:2800::1"), route)
    assert permit.reaches(("127.0.0.1", 8443)) and permit.reaches(("::1", 443))
    assert not permit.reaches(("127.0.0.1", 443)) and not permit.reaches(("93.184.216.34", 443))
    assert permit._routed is None
    assert permit.routed() == (("127.0.0.1", 8443), ("::1", 443))
    assert permit.reaches(("::1", 443)) and not permit.reaches(("::1", 8443))

    def names_a_host(ip: str, port: int) -> tuple[str, int]:
        return ("127.0.0.1", 8443) if ip == "93.184.216.34" else ("localhost", port)

    named = DialPermit("example.com", 443, ("93.184.216.34", "2606:2800::1"), names_a_host)
    with pytest.raises(ValueError):
        named.reaches(("127.0.0.1", 8443))  # a match first does not hide the later name


def test_routing_a_permit_gives_back_every_allocation_the_collector_counted() -> None:
    # A permit is made and routed on every fetch hop. Python's collector runs a young-generation
    # collection once its allocation count passes a threshold (700); building the routes with
    # tuple(generator) left one allocation per permit counted and never given back, so a busy
    # fetch ran ten times the collections (and full ones in turn) of a plain client.
    threshold = gc.get_threshold()
    gc.set_threshold(10**9)
    try:
        for _ in range(100):
            DialPermit("example.com", 443, ("93.184.216.34",), route).routed()
        before = gc.get_count()[0]
        for _ in range(2000):
            DialPermit("example.com", 443, ("93.184.216.34",), route).routed()
        assert gc.get_count()[0] - before < 100
    finally:
        gc.set_threshold(*threshold)


async def test_the_connector_compares_a_request_with_its_permit_in_the_one_spelling() -> None:
    import pytest

    from runvil._net.connector import _GuardedConnector
    from runvil._net.permit import DialRefused, permitted

    connector = _GuardedConnector()
    try:
        permit = DialPermit("example.com.", 443, ("93.184.216.34",), route)
        with permitted(permit):
            for host in ("example.com", "Example.COM."):
                answers = await connector._resolve_host(host, 443)
                assert [(a["host"], a["port"]) for a in answers] == [("127.0.0.1", 8443)]
            for host in ("example.com..", "example..com", "example.com", "example.com."):
                port = 443 if "." * 2 in host else 8443
                with pytest.raises(DialRefused) as caught:
                    await connector._resolve_host(host, port)
                assert str(caught.value) == (
                    f"request for {host}:{port} under a permit for another target"
                )
    finally:
        await connector.close()


def test_a_remembered_answer_is_handed_back_as_the_tuple_the_memo_holds() -> None:
    from runvil._net.rules import PublicWeb

    rule = PublicWeb()
    first = rule.allowed("example.com", ["93.184.216.34"])
    assert first == ("93.184.216.34",)
    assert rule.allowed("example.com", ["93.184.216.34"]) is first
    assert rule.allowed("example.com", ("93.184.216.34", "10.0.0.1")) == ("93.184.216.34",)
