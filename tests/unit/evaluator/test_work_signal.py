"""Idle answer lanes wake one per piece of new work, not all at once."""

from __future__ import annotations

import asyncio
import time

from steadfast.services.evaluator.domain.job_context import WorkSignal


async def test_notify_wakes_exactly_one_waiting_lane() -> None:
    signal = WorkSignal()
    lanes = [asyncio.create_task(signal.wait(5.0)) for _ in range(4)]
    await asyncio.sleep(0)
    signal.notify()
    done, pending = await asyncio.wait(lanes, timeout=1.0)  # a lane waits 5 s unwoken
    assert (len(done), len(pending)) == (1, 3)
    for _ in pending:
        signal.notify()
    await asyncio.wait_for(asyncio.gather(*pending), 2.5)


async def test_a_notification_with_no_lane_waiting_is_kept_for_the_next_wait() -> None:
    signal = WorkSignal()
    signal.notify()
    started = time.monotonic()
    await signal.wait(5.0)
    assert time.monotonic() - started < 2.5  # not the 5 s timeout


async def test_wait_returns_after_the_timeout_without_a_notification() -> None:
    signal = WorkSignal()
    started = time.monotonic()
    await signal.wait(0.05)
    assert time.monotonic() - started >= 0.05
    signal.notify()  # the timed-out lane is no longer waiting: the next wait takes it
    await asyncio.wait_for(signal.wait(5.0), 2.5)


async def test_notify_all_wakes_every_waiting_lane() -> None:
    signal = WorkSignal()
    lanes = [asyncio.create_task(signal.wait(5.0)) for _ in range(3)]
    await asyncio.sleep(0)
    signal.notify_all()
    await asyncio.wait_for(asyncio.gather(*lanes), 2.5)
