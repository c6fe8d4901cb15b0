"""Per-route limits: a concurrency semaphore and a requests-per-minute limiter.

Callers beyond a limit wait, never longer than the time they have left.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiolimiter import AsyncLimiter


class SlotWaitExceeded(TimeoutError):
    """No slot became free within the caller's remaining time."""


class RouteLimiter:
    """One route's limits: calls in flight at once and, when set, requests per minute."""

    def __init__(self, max_concurrency: int, requests_per_minute: int | None) -> None:
        self._slots = asyncio.Semaphore(max_concurrency)
        # one request per interval (no burst), so upstream sees an even rate
        self._rate = AsyncLimiter(1, 60.0 / requests_per_minute) if requests_per_minute else None

    @asynccontextmanager
    async def slot(self, timeout_s: float) -> AsyncIterator[float]:
        """Hold one slot; yields the seconds spent waiting for it."""
        started = time.perf_counter()
        if self._rate is None and not self._slots.locked():
            await self._slots.acquire()  # fast path: free slot, nothing to wait for
        else:
            await self._acquire(timeout_s)
        try:
            yield time.perf_counter() - started
        finally:
            self._slots.release()

    async def _acquire(self, timeout_s: float) -> None:
        try:
            async with asyncio.timeout(timeout_s):
                if self._rate is not None:
                    await self._rate.acquire()
                await self._slots.acquire()
        except TimeoutError as exc:
            raise SlotWaitExceeded(f"no free slot within {timeout_s:.3g} s") from exc
