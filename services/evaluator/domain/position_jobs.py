"""Runs position-bias jobs: one at a time per evaluator process, each whole, under a lease that
is renewed while it runs. A job whose worker stopped is taken over when its lease runs out and
run again from the start: the gateway's response cache answers what was answered before."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from steadfast.services.evaluator.adapters.position_jobs import PositionJobRow, PositionJobStore
from steadfast.services.evaluator.domain.position import PositionUpstream, evaluate_position_bias
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.metrics import POSITION_JOBS_FINISHED
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.position import PositionBiasEvaluation

logger = logging.getLogger(__name__)

#: how a finished job's outcome is stored again after a database failure
FINISH_BACKOFF = Backoff(attempts=3, base_delay_s=0.5)
#: how long a stopping worker waits for a claim under way, to release what it claimed
CLAIM_SETTLE_S = 5.0


@dataclass(frozen=True)
class PositionJobSettings:
    """How a process runs position-bias jobs: its owner name, polling, takeovers allowed
    before a job fails, and the retry policy."""

    owner: str
    poll_s: float = 0.5
    #: a job taken over more often than this (its worker stopped each time) is failed
    max_attempts: int = 3
    retry: Backoff = field(default_factory=Backoff)


class PositionJobRunner:
    """Claims position-bias jobs one at a time and runs each whole under a renewed lease."""

    def __init__(
        self, store: PositionJobStore, upstream: PositionUpstream, settings: PositionJobSettings
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.settings = settings
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())
        self._task.add_done_callback(_log_unexpected_end)

    def wake(self) -> None:
        self._wake.set()

    async def stop(self, grace_s: float = 3.0) -> None:
        """Let a job that is storing its outcome finish for ``grace_s``, then cancel the runner:
        a job still running is released for the next claim (a claim under way is waited for,
        up to ``CLAIM_SETTLE_S`` more, to release what it took)."""
        if self._task is None:
            return
        self._stopping = True
        self._wake.set()
        _, pending = await asyncio.wait({self._task}, timeout=grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _loop(self) -> None:
        while not self._stopping:
            self._wake.clear()  # before claiming: a job created meanwhile wakes the wait below
            try:
                job = await self._claim()
                if job is not None and self._stopping:  # claimed as the stop came: not begun
                    await self.store.release(job.id, self.settings.owner)
                elif job is not None:
                    await self.run(job)
                    continue
            except Exception:
                logger.exception("position-bias job runner: claiming a job failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.poll_s)

    async def _claim(self) -> PositionJobRow | None:
        """The next job, leased to this worker. A stop that cancels the claim after the database
        committed it still releases the job, which would otherwise wait for its lease to run out."""
        claiming = asyncio.ensure_future(self.store.claim(self.settings.owner))
        try:
            return await asyncio.shield(claiming)
        except asyncio.CancelledError:
            try:
                job = await asyncio.wait_for(claiming, CLAIM_SETTLE_S)
                if job is not None:
                    await self.store.release(job.id, self.settings.owner)
            except Exception:
                logger.warning(
                    "position-bias job runner: a claim cut short by a stop was not released; "
                    "its job waits for its lease to run out",
                    exc_info=True,
                )
            raise

    async def run(self, job: PositionJobRow) -> None:
        """Run a claimed job and store its outcome (unless its lease was lost meanwhile)."""
        if job.request is None:
            await self._finish(job.id, None, f"the stored request is unreadable: {job.unreadable}")
            return
        if job.attempts > self.settings.max_attempts:
            stopped = f"its worker stopped {job.attempts - 1} times before it finished"
            await self._finish(job.id, None, stopped)
            return
        evaluation = asyncio.ensure_future(
            evaluate_position_bias(job.request, self.upstream, self.settings.retry)
        )
        lease = _Lease()
        keeping = asyncio.create_task(self._keep_lease(job.id, evaluation, lease))
        try:
            result: PositionBiasEvaluation | None = await evaluation
            error = None
        except asyncio.CancelledError:
            if _being_cancelled():  # this worker is stopping: the next claim takes the job
                with contextlib.suppress(Exception):
                    await self.store.release(job.id, self.settings.owner)
                raise
            if lease.lost:
                logger.warning(
                    "position-bias job %s: lease lost (cancelled, or taken over)", job.id
                )
                return
            result, error = None, "the evaluation was cancelled"
        except UpstreamError as failure:
            result, error = None, failure.reason
        except Exception as failure:  # recorded, not lost: the caller sees the reason
            logger.exception("position-bias job %s failed", job.id)
            # the type only: the message may hold a SQL statement and its values (it is logged)
            result, error = None, f"internal error: {type(failure).__name__} (see the log)"
        finally:
            keeping.cancel()
        await self._finish(job.id, result, error)

    async def _finish(
        self, job_id: str, result: PositionBiasEvaluation | None, error: str | None
    ) -> None:
        """Store the outcome, asking the database again after a failure: a finished job's
        result is worth a few seconds (else the job runs again when its lease runs out)."""
        for attempt in range(1, FINISH_BACKOFF.attempts + 1):
            try:
                stored = await self.store.finish(
                    job_id, self.settings.owner, result=result, error=error
                )
            except Exception:
                if FINISH_BACKOFF.gives_up(attempt, retryable=True):
                    logger.exception(
                        "position-bias job %s: its outcome could not be stored; the job runs "
                        "again when its lease runs out",
                        job_id,
                    )
                    return
                logger.warning("position-bias job %s: storing the outcome failed", job_id)
                await asyncio.sleep(FINISH_BACKOFF.delay(attempt))
                continue
            if stored:
                status = "failed" if result is None else "succeeded"
                POSITION_JOBS_FINISHED.labels(status=status).inc()
            else:
                logger.warning("position-bias job %s: outcome not stored, lease lost", job_id)
            return

    async def _keep_lease(
        self, job_id: str, evaluation: asyncio.Future[Any], lease: _Lease
    ) -> None:
        """Renew the lease at a third of its length; cancel the run if it was lost. A renewal
        that fails (a database blip) is tried again at the next tick, until the lease has run
        out since the last one that succeeded: another worker may run the job by then."""
        renewed_at = time.monotonic()
        while True:
            await asyncio.sleep(self.store.lease_s / 3)
            try:
                renewed = await self.store.renew(job_id, self.settings.owner)
            except Exception:
                logger.warning("position-bias job %s: lease renewal failed", job_id, exc_info=True)
                # still ours as far as anyone can tell, until the lease would have run out
                renewed = time.monotonic() - renewed_at < self.store.lease_s
            else:
                if renewed:
                    renewed_at = time.monotonic()
            if not renewed:
                lease.lost = True
                evaluation.cancel()
                return


@dataclass
class _Lease:
    lost: bool = False


def _being_cancelled() -> bool:
    """Whether the running task was asked to stop (not just an awaited future cancelled)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _log_unexpected_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("position-bias job runner ended", exc_info=task.exception())
