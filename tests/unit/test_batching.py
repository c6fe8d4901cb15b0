"""The coalescer behind the gateway's cache: batches under load, no wait when alone."""

from __future__ import annotations

import asyncio

import pytest

from steadfast.shared.batching import Coalescer, TickBatcher


class Recorder:
    def __init__(self, fail_on: str | None = None, delay_s: float = 0.01) -> None:
        self.batches: list[list[str]] = []
        self.fail_on = fail_on
        self.delay_s = delay_s

    async def __call__(self, items: list[str]) -> list[str]:
        self.batches.append(items)
        await asyncio.sleep(self.delay_s)
        if self.fail_on in items:
            raise ValueError(f"bad item {self.fail_on}")
        return [item.upper() for item in items]


async def test_a_lone_caller_is_served_in_a_batch_of_its_own() -> None:
    handler = Recorder()
    coalescer = Coalescer(handler)
    assert await coalescer.submit("a") == "A"
    assert handler.batches == [["a"]]


async def test_concurrent_callers_share_batches_and_each_gets_its_own_result() -> None:
    handler = Recorder()
    coalescer = Coalescer(handler, max_batch=40)
    items = [f"item{i}" for i in range(100)]
    results = await asyncio.gather(*(coalescer.submit(item) for item in items))
    assert results == [item.upper() for item in items]
    # submitted in one tick, they go in batches of at most 40
    assert [len(batch) for batch in handler.batches] == [40, 40, 20]
    assert sorted(item for batch in handler.batches for item in batch) == sorted(items)


async def test_a_failing_batch_fails_its_callers_only() -> None:
    handler = Recorder(fail_on="bad")
    coalescer = Coalescer(handler)
    first = asyncio.ensure_future(coalescer.submit("first"))
    await asyncio.sleep(0)  # "first" is running alone; the next two share a batch
    second = [asyncio.ensure_future(coalescer.submit(item)) for item in ("bad", "other")]
    assert await first == "FIRST"
    for future in second:
        with pytest.raises(ValueError, match="bad item bad"):
            await future
    assert await coalescer.submit("after") == "AFTER"


async def test_a_caller_going_away_does_not_cancel_the_batch() -> None:
    handler = Recorder(delay_s=0.05)
    coalescer = Coalescer(handler)
    leaving = asyncio.ensure_future(coalescer.submit("leaving"))
    staying = asyncio.ensure_future(coalescer.submit("staying"))
    await asyncio.sleep(0.01)
    leaving.cancel()
    assert await staying == "STAYING"
    assert handler.batches == [["leaving", "staying"]]


async def test_drain_waits_for_submitted_items() -> None:
    handler = Recorder(delay_s=0.02)
    coalescer = Coalescer(handler)
    pending = [asyncio.ensure_future(coalescer.submit(str(i))) for i in range(5)]
    await asyncio.sleep(0)
    await coalescer.drain()
    assert all(future.done() for future in pending)
    assert sum(len(batch) for batch in handler.batches) == 5


async def test_a_handler_giving_the_wrong_number_of_results_is_an_error() -> None:
    async def short(items: list[str]) -> list[str]:
        return items[:-1]

    coalescer = Coalescer(short)
    with pytest.raises(RuntimeError, match="1 results for 2"):
        await asyncio.gather(coalescer.submit("a"), coalescer.submit("b"))


async def test_tick_batcher_sends_one_ticks_submissions_together() -> None:
    handler = Recorder()
    batcher = TickBatcher(handler, max_batch=4)
    results = await asyncio.gather(*(batcher.submit(f"x{i}") for i in range(6)))
    assert results == [f"X{i}" for i in range(6)]
    assert handler.batches == [["x0", "x1", "x2", "x3"], ["x4", "x5"]]


async def test_tick_batcher_does_not_hold_a_batch_behind_a_slow_one() -> None:
    class SlowFirst:
        def __init__(self) -> None:
            self.started: list[list[str]] = []
            self.release = asyncio.Event()

        async def __call__(self, items: list[str]) -> list[str]:
            self.started.append(items)
            if items == ["slow"]:
                await self.release.wait()
            return items

    handler = SlowFirst()
    batcher = TickBatcher(handler)
    slow = asyncio.ensure_future(batcher.submit("slow"))
    await asyncio.sleep(0.01)
    assert await asyncio.wait_for(batcher.submit("fast"), 1.0) == "fast"
    assert not slow.done()
    handler.release.set()
    assert await slow == "slow"
    await batcher.drain()
