"""A periodic sweep that deletes stored rows older than a retention period.

Each service names its kinds of rows and how to delete those older than a cutoff (the evaluator:
finished evaluations, unused paraphrase sets, finished position jobs; the gateway: cached
responses); the sweep runs them in that order and counts what they deleted."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

from prometheus_client import Counter

logger = logging.getLogger(__name__)

#: the first sweep runs this long after start-up (or after ``every_s``, when shorter)
FIRST_SWEEP_AFTER_S = 60.0

#: deletes what finished (or was stored) before a cutoff, in epoch seconds; returns the count
Purge = Callable[[float], Awaitable[int]]


class RetentionSweeper:
    """Deletes a service's stored rows older than the retention period, every ``every_s``."""

    def __init__(
        self,
        purges: Mapping[str, Purge],
        retention_s: float,
        every_s: float,
        deleted: Counter,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.purges = purges
        #: a counter labelled by ``kind``
        self.deleted = deleted
        self.retention_s = retention_s
        self.every_s = every_s
        self.clock = clock
        self._task: asyncio.Task[None] | None = None

    async def sweep(self) -> dict[str, int]:
        """One pass in order; a kind that fails is logged and left for the next pass."""
        cutoff = self.clock() - self.retention_s
        purged: dict[str, int] = {}
        for kind, purge in self.purges.items():
            try:
                purged[kind] = await purge(cutoff)
            except Exception:
                logger.exception("retention sweep: deleting old %s rows failed", kind)
                continue
            self.deleted.labels(kind).inc(max(0, purged[kind]))
        if any(purged.values()):
            logger.info("retention sweep deleted %s", purged)
        return purged

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        # not at once: a service starting is busy enough (and may be restarting in a loop)
        await asyncio.sleep(min(self.every_s, FIRST_SWEEP_AFTER_S))
        while True:
            try:
                await self.sweep()
            except Exception:  # the sweep must outlive any one failure
                logger.exception("retention sweep failed")
            await asyncio.sleep(self.every_s)
