"""Per-route limits."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from steadfast.services.gateway.domain.limits import RouteLimiter, SlotWaitExceeded


async def test_concurrency_limit_is_never_exceeded_and_callers_wait() -> None:
    limiter = RouteLimiter(max_concurrency=3, requests_per_minute=None)
    active = peak = 0

    async def work() -> float:
        nonlocal active, peak
        async with limiter.slot(timeout_s=5) as waited:
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.02)
            active -= 1
            return waited

    waits = sorted(await asyncio.gather(*(work() for _ in range(12))))
    assert peak == 3
    # Every caller starts before any slot is released, so however the machine stalls,
    # the third round queued behind at least one whole hold and the fourth behind two.
    # (The second round may wait next to nothing if the start itself stalled.)
    assert all(wait >= 0.019 for wait in waits[-6:])
    assert all(wait >= 0.039 for wait in waits[-3:])


async def test_waiting_is_bounded() -> None:
    limiter = RouteLimiter(max_concurrency=1, requests_per_minute=None)
    async with limiter.slot(timeout_s=1):
        started = time.perf_counter()
        with pytest.raises(SlotWaitExceeded):
            async with limiter.slot(timeout_s=0.1):
                pass
        assert 0.09 <= time.perf_counter() - started < 3  # gave up, not held for ever
    async with limiter.slot(timeout_s=0.1) as waited:  # released: free again
        assert waited < 0.5


async def test_requests_per_minute_spaces_requests() -> None:
    limiter = RouteLimiter(max_concurrency=10, requests_per_minute=1200)  # one per 50 ms
    started = time.perf_counter()
    for _ in range(5):
        async with limiter.slot(timeout_s=5):
            pass
    assert time.perf_counter() - started >= 0.18


def test_retry_after_forms() -> None:
    from email.utils import formatdate

    from steadfast.services.gateway.adapters.backends.http_errors import (
        error_for_status,
        retry_after_s,
    )

    assert retry_after_s({"Retry-After": "3"}) == 3.0
    assert retry_after_s({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    in_a_minute = retry_after_s({"Retry-After": formatdate(time.time() + 60, usegmt=True)})
    assert in_a_minute is not None and 55 <= in_a_minute <= 61
    assert retry_after_s({"Retry-After": "soon"}) is None
    assert retry_after_s({"Retry-After": "inf"}) is None
    assert retry_after_s({"Retry-After": "nan"}) is None
    assert retry_after_s({"retry-after-ms": "inf", "Retry-After": "9"}) == 9.0
    # Gemini's wait is in its error body
    from steadfast.services.gateway.adapters.backends.gemini import _retry_delay_s

    assert _retry_delay_s({"error": {"details": [{"retryDelay": "34s"}]}}) == 34.0
    assert _retry_delay_s({"error": {"details": [{"retryDelay": "infs"}]}}) is None
    assert retry_after_s({}) is None
    limited = error_for_status(429, "slow down", {"Retry-After": "2"})
    assert (limited.outcome, limited.retry_after_s, limited.retryable) == (
        "rate_limited",
        2.0,
        True,
    )
    assert error_for_status(503, "", {}).retryable
    # a broken address is no passing failure
    from steadfast.services.gateway.adapters.backends.http_errors import error_for_transport

    assert not error_for_transport(aiohttp.InvalidURL("http://exa mple")).retryable
    assert error_for_transport(aiohttp.ServerDisconnectedError()).retryable
    assert not error_for_status(400, "bad", {}).retryable
    assert error_for_status(400, '{"code": "content_policy_violation"}', {}).outcome == "refused"
    assert error_for_status(401, "no key", {}).outcome == "unavailable"
