"""The job runner: one per evaluator process, it polls for active jobs, runs each through the
:class:`~steadfast.services.evaluator.domain.engine.JobEngine` in a task, and fails a job whose
runs keep failing."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging

from steadfast.services.evaluator.domain.engine import JobEngine
from steadfast.shared.db import is_connection_loss

logger = logging.getLogger(__name__)


#: runs of one job that may fail in a row without progress, in one process, before the job is
#: failed: an error that is not a model call's (those are retried and recorded per call) is a
#: bug or bad data, and left to retry forever the job would hold its place in the queue; a run
#: that stored work before failing starts the count again. A run ended by the loss of the
#: database connection (a restart, a failover, a terminated backend) is no failure of the job:
#: it is not counted, and tried again for as long as the database takes to come back
MAX_RUN_FAILURES = 5


class JobRunner:
    """Polls for active jobs and runs each in a task; one per evaluator process."""

    def __init__(self, engine: JobEngine) -> None:
        self.engine = engine
        self._running: dict[str, asyncio.Task[None]] = {}
        self._failures: collections.Counter[str] = collections.Counter()
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop())

    def wake(self) -> None:
        self._wake.set()

    async def stop(self, grace_s: float = 3.0) -> None:
        """Let the lanes finish their current calls for ``grace_s``, then cancel them."""
        self.engine.stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
        tasks = [t for t in (self._loop_task, *self._running.values()) if t is not None]
        if not tasks:  # an API-only process (jobs run elsewhere)
            return
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _work_done(self, job_id: str) -> int | None:
        """Items and answers of the job that are finished; None when it cannot be read."""
        try:
            counts = await self.engine.store.progress_counts(job_id)
        except Exception:
            return None
        items = counts["items"].get("done", 0)
        answers = sum(n for status, n in counts["answers"].items() if status != "pending")
        return items + answers

    async def _loop(self) -> None:
        while True:
            try:
                await self._start_jobs()
            except Exception:
                logger.exception("job runner poll failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.engine.settings.poll_s)

    async def _start_jobs(self) -> None:
        for job_id in await self.engine.store.active(self.engine.settings.max_jobs):
            if job_id not in self._running:
                task = asyncio.create_task(self._run(job_id))
                self._running[job_id] = task

    async def _run(self, job_id: str) -> None:
        done_before = await self._work_done(job_id)
        try:
            await self.engine.run(job_id)
            self._failures.pop(job_id, None)
        except Exception as error:
            if is_connection_loss(error):
                logger.warning(
                    "evaluation %s: database connection lost, tried again", job_id, exc_info=True
                )
                await asyncio.sleep(self.engine.settings.poll_s)
                return
            if done_before is not None and (await self._work_done(job_id) or 0) > done_before:
                self._failures[job_id] = 0
            self._failures[job_id] += 1
            failures = self._failures[job_id]
            if failures < MAX_RUN_FAILURES:
                logger.exception(
                    "evaluation %s: worker error (run %d of %d, tried again)",
                    job_id,
                    failures,
                    MAX_RUN_FAILURES,
                )
                await asyncio.sleep(self.engine.settings.poll_s * failures)
                return
            logger.exception("evaluation %s: failed %d runs in a row, given up", job_id, failures)
            reason = f"internal error, after {failures} tries: {type(error).__name__}"
            try:
                given_up = await self.engine.give_up(job_id, reason)
            except Exception:
                logger.warning("evaluation %s: failing it failed", job_id, exc_info=True)
                given_up = False
            if given_up:
                self._failures.pop(job_id, None)
            else:  # another worker holds it, or the database is down: no busy loop
                await asyncio.sleep(self.engine.settings.poll_s * MAX_RUN_FAILURES)
        finally:
            self._running.pop(job_id, None)
