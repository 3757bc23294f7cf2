"""A short run of every fuzz target, so CI notices when a parser stops holding its invariants.

The long runs (a million inputs each) live in ``bench/fuzz`` and are recorded in
``docs/reliability.md``; this is the same check code on a few hundred structured examples.
"""

from __future__ import annotations

import pytest
from bench.fuzz.targets import TARGETS, Target
from hypothesis import HealthCheck, given, settings

SMOKE = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_holds_on_structured_examples(name: str) -> None:
    target: Target = TARGETS[name]

    @SMOKE
    @given(target.strategy)
    def run(value: object) -> None:
        target.check(value)

    run()


@pytest.mark.parametrize("name", sorted(TARGETS))
@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", b"\xff" * 64, bytes(range(256)), b"https://example.com/" * 20],
    ids=["empty", "nul", "ff", "all-bytes", "urls"],
)
def test_fuzz_target_holds_on_raw_fuzzer_bytes(name: str, data: bytes) -> None:
    target = TARGETS[name]
    target.check(target.from_bytes(data))
