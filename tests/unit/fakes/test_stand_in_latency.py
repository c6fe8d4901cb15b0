"""The stand-in's latency: fixed, or spread around the same mean (the pipeline bench's upstream)."""

from __future__ import annotations

import statistics

import pytest

from tests.fakes.openai_server import FakeOpenAIServer


def test_a_fixed_latency_is_the_same_for_every_answer() -> None:
    server = FakeOpenAIServer(latency_s=0.05)
    assert {server._latency() for _ in range(100)} == {0.05}


def test_a_spread_latency_varies_within_its_bounds_around_the_same_mean() -> None:
    server = FakeOpenAIServer(latency_s=0.05, latency_spread=0.5)
    delays = [server._latency() for _ in range(4000)]
    assert min(delays) >= 0.025 and max(delays) <= 0.075
    assert statistics.pstdev(delays) > 0.01  # uniform over ±50%: ~0.0144
    assert statistics.mean(delays) == pytest.approx(0.05, abs=0.001)
    again = FakeOpenAIServer(latency_s=0.05, latency_spread=0.5)
    assert [again._latency() for _ in range(4000)] == delays  # seeded: runs are comparable
