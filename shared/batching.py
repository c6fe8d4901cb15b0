"""Coalescing of many small awaits into batched calls (database round-trips, gateway requests)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

Handler = Callable[[list[Item]], Awaitable[Sequence[Result]]]


class Coalescer(Generic[Item, Result]):
    """Runs ``handler`` on batches, one at a time: items submitted while a batch runs join the
    next one.

    A lone caller is served at once (no timer, no added latency); under load, the callers that
    arrive during one round-trip share the next, so a hundred concurrent cache lookups cost a
    few queries instead of a hundred transactions. ``handler`` returns one result per item, in
    order; if it raises, every caller of that batch gets the exception.
    """

    def __init__(self, handler: Handler[Item, Result], *, max_batch: int = 500) -> None:
        self._handler = handler
        self._max_batch = max_batch
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        self._schedule()
        # shielded: a caller that goes away does not cancel the batch the others wait on
        return await asyncio.shield(future)

    async def drain(self) -> None:
        """Wait until every submitted item has been handled (at shutdown)."""
        while self._worker is not None:
            await asyncio.shield(self._worker)

    def _schedule(self) -> None:
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain())

    def _take(self) -> list[tuple[Item, asyncio.Future[Result]]]:
        batch = self._queue[: self._max_batch]
        del self._queue[: self._max_batch]
        return batch

    async def _drain(self) -> None:
        try:
            while self._queue:
                await self._run(self._take())
        finally:
            self._worker = None

    async def _run(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._handler([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"batch handler gave {len(results)} results for {len(batch)}")
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)


class TickBatcher(Coalescer[Item, Result]):
    """Sends what was submitted during one event-loop tick as one batch, at the end of the tick;
    batches run side by side, so a slow batch never holds up the next.

    For calls whose latency is the remote's (model requests): ``asyncio.gather`` over fifty
    requests becomes one HTTP request instead of fifty, and nothing waits for a timer.
    """

    def __init__(self, handler: Handler[Item, Result], *, max_batch: int = 500) -> None:
        super().__init__(handler, max_batch=max_batch)
        self._flush_scheduled = False
        self._running: set[asyncio.Task[None]] = set()

    async def drain(self) -> None:
        while self._running or self._queue:
            if self._running:
                await asyncio.wait(set(self._running))
            else:
                await asyncio.sleep(0)

    def _schedule(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        while self._queue:
            task = asyncio.create_task(self._run(self._take()))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
