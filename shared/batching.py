"""Coalescing of many small awaits into one batched call (database round-trips under load)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class Coalescer(Generic[Item, Result]):
    """Runs ``handler`` on batches: items submitted while a batch runs join the next one.

    A lone caller is served at once (no timer, no added latency); under load, the callers that
    arrive during one round-trip share the next, so a hundred concurrent cache lookups cost a
    few queries instead of a hundred transactions. ``handler`` returns one result per item, in
    order; if it raises, every caller of that batch gets the exception.
    """

    def __init__(
        self,
        handler: Callable[[list[Item]], Awaitable[Sequence[Result]]],
        *,
        max_batch: int = 500,
    ) -> None:
        self._handler = handler
        self._max_batch = max_batch
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain())
        # shielded: a caller that goes away does not cancel the batch the others wait on
        return await asyncio.shield(future)

    async def drain(self) -> None:
        """Wait until every submitted item has been handled (at shutdown)."""
        while self._worker is not None:
            await asyncio.shield(self._worker)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch = self._queue[: self._max_batch]
                del self._queue[: self._max_batch]
                await self._run(batch)
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
