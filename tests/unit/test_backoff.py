"""The back-off every retrying caller uses."""

from __future__ import annotations

import random

import pytest

from steadfast.shared.backoff import Backoff


def test_delay_doubles_up_to_the_cap() -> None:
    backoff = Backoff(attempts=6, base_delay_s=0.5, max_delay_s=3.0)
    assert [backoff.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_gives_up_after_the_last_attempt_or_a_final_error() -> None:
    backoff = Backoff(attempts=3)
    assert not backoff.gives_up(2, retryable=True)
    assert backoff.gives_up(3, retryable=True)
    assert backoff.gives_up(1, retryable=False)


def test_jitter_spreads_between_half_and_full_delay() -> None:
    rng = random.Random(7)
    backoff = Backoff(attempts=8, base_delay_s=0.5, max_delay_s=4.0)
    for attempt in range(1, 8):
        values = [backoff.jittered_delay(attempt, rng) for _ in range(200)]
        ceiling = min(4.0, 0.5 * 2 ** (attempt - 1))
        assert min(values) >= ceiling / 2
        assert max(values) <= ceiling
        assert len(set(values)) > 100  # jittered, not a constant


def test_jitter_never_undercuts_the_servers_retry_after() -> None:
    rng = random.Random(1)
    backoff = Backoff(base_delay_s=0.1, max_delay_s=1.0)
    assert backoff.jittered_delay(1, rng, retry_after_s=7.5) == 7.5
    assert backoff.jittered_delay(1, rng, retry_after_s=0.0) <= 0.1


def test_a_backoff_lasting_a_while_has_the_attempts_whose_waits_cover_it() -> None:
    policy = Backoff.lasting(300.0, base_delay_s=1.0, max_delay_s=30.0)
    waits = [policy.delay(attempt) for attempt in range(1, policy.attempts)]
    assert sum(waits) >= 300.0 and sum(waits[:-1]) < 300.0
    assert Backoff.lasting(0.0, base_delay_s=1.0).attempts == 1
    # waits of 0 s never add up: refused, not an endless loop
    with pytest.raises(ValueError, match="positive"):
        Backoff.lasting(300.0, base_delay_s=0.0)


async def test_run_asks_again_only_after_failures_worth_it() -> None:
    calls: list[int] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("refused")
        return "answered"

    fast = Backoff(attempts=3, base_delay_s=0.0)
    assert await fast.run(flaky, retryable=lambda e: isinstance(e, ConnectionError)) == "answered"
    calls.clear()
    with pytest.raises(ConnectionError):
        await fast.run(flaky, retryable=lambda e: False)
    assert len(calls) == 1


async def test_run_waits_a_jittered_back_off_between_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("steadfast.shared.backoff.asyncio.sleep", no_wait)

    async def failing() -> None:
        raise ConnectionError("refused")

    backoff = Backoff(attempts=4, base_delay_s=1.0, max_delay_s=30.0)
    for _ in range(20):
        with pytest.raises(ConnectionError):
            await backoff.run(failing, retryable=lambda e: True)
    assert len(waits) == 20 * 3
    for attempt, delay in enumerate((1.0, 2.0, 4.0)):
        spread = waits[attempt::3]
        assert all(delay / 2 <= wait <= delay for wait in spread)
        assert len(set(spread)) > 10  # callers failing together spread out
