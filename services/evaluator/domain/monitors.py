"""Monitors: an evaluation (or a positional-bias job) repeated every interval, so that a model's
reliability can be followed over time, and alerted on.

A consistency monitor's first run builds the paraphrase sets; every later run asks the models
the same variants again (``reuse_paraphrases_from``), with fresh answers (no stored answer, no
gateway cache): a change in its numbers is a change in the model. Runs are ordinary jobs; the
scheduler only starts them when due and reads their values when they end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args

import msgspec

from steadfast.services.evaluator.adapters.monitors import (
    Latest,
    MonitorNameTaken,
    MonitorRow,
    MonitorStore,
    RunRow,
    RunValues,
)
from steadfast.services.evaluator.domain.job_starter import JobStarter, require_protocol_request
from steadfast.services.evaluator.domain.pipeline import models_of
from steadfast.services.evaluator.errors import IdempotencyConflict, UpstreamError
from steadfast.services.evaluator.metrics import (
    MONITOR_CREATED,
    MONITOR_INTERVAL,
    MONITOR_LAST_SUCCESS,
    MONITOR_RUNS,
    MONITOR_VALUE,
)
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.contracts.evaluator import EvaluationCreate, ModelSummary
from steadfast.shared.contracts.monitors import (
    MAX_MONITOR_ITEMS,
    MAX_MONITORS,
    Monitor,
    MonitorCreate,
    MonitorMetric,
    MonitorPage,
    MonitorRun,
    MonitorRunAccepted,
    MonitorRunStatus,
    MonitorSeries,
    MonitorUpdate,
    MonitorValue,
    SeriesPoint,
)
from steadfast.shared.contracts.position import PositionBiasEvaluation
from steadfast.shared.contracts.scoring import MetricValue
from steadfast.shared.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    RequestRefused,
    nested_under,
    not_found,
)
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy

logger = logging.getLogger(__name__)

#: the evaluation metrics a consistency monitor follows, by their monitor name
CONSISTENCY_METRICS: dict[MonitorMetric, str] = {
    "a_orig": "A_orig",
    "a_expected": "A_expected",
    "a_any": "A_any",
    "a_strict": "A_strict",
    "flip_rate": "flip_rate",
    "conflict_rate": "conflict_rate",
}
POSITION_METRICS: dict[MonitorMetric, str] = {"pf": "PF", "pc": "PC"}
ALL_METRICS: tuple[MonitorMetric, ...] = get_args(MonitorMetric)
#: a run whose job was never recorded (its worker stopped while submitting it) is failed after
SUBMIT_GRACE_S = 300.0
UPDATE_ATTEMPTS = 5
RUN_STATUSES = ("succeeded", "failed")


@dataclass
class Monitors:
    """The monitors' use cases (create, read, change, run now) and their runs' lifecycle."""

    store: MonitorStore
    #: starts each run's job
    jobs: JobStarter
    clock: Callable[[], float] = time.time
    #: the monitors whose gauges this process set, by name (a deleted one's are removed)
    _exported: dict[str, MonitorRow] = field(default_factory=dict)

    # ---- the API -------------------------------------------------------------------------

    async def create(self, data: MonitorCreate, tenancy: Tenancy = UNRESTRICTED) -> Monitor:
        """The monitor, ``tenancy``'s tenant's (as its runs' jobs will be); a dataset it does
        not see is unknown. Names are unique over every tenant (they label the gauges)."""
        models = await self._require_runnable(data, tenancy)
        if await self.store.count() >= MAX_MONITORS:
            detail = f"at most {MAX_MONITORS} monitors (each adds series to the metrics)"
            raise Conflict(detail, field="name", title="Too many monitors")
        try:
            row = await self.store.create(data, models, self.clock(), tenancy.tenant)
        except MonitorNameTaken as taken:
            detail = f"a monitor named {data.name!r} exists"
            raise Conflict(detail, field="name") from taken
        return (await self._views([row]))[0]

    async def page(self, tenancy: Tenancy = UNRESTRICTED) -> MonitorPage:
        rows = await self.store.all(tenancy)
        return MonitorPage(monitors=await self._views(rows), total=len(rows))

    async def view(self, monitor_id: str, tenancy: Tenancy = UNRESTRICTED) -> Monitor:
        return (await self._views([await self.require(monitor_id, tenancy)]))[0]

    async def require(self, monitor_id: str, tenancy: Tenancy = UNRESTRICTED) -> MonitorRow:
        """The monitor, or a 404 (another tenant's too, answered alike)."""
        row = await self.store.get(monitor_id, tenancy)
        if row is None:
            raise not_found("monitor", monitor_id, "monitor_id")
        return row

    async def update(
        self, monitor_id: str, change: MonitorUpdate, tenancy: Tenancy = UNRESTRICTED
    ) -> Monitor:
        for _ in range(UPDATE_ATTEMPTS):  # a worker may take a due time meanwhile: read again
            row = await self.require(monitor_id, tenancy)
            values = self._changed_schedule(row, change)
            if await self.store.update_unless_taken(row.id, row.next_run_at, **values):
                return await self.view(row.id)
        raise Conflict("the monitor's schedule kept changing: try again")

    def _changed_schedule(self, row: MonitorRow, change: MonitorUpdate) -> dict[str, Any]:
        interval = change.interval_s or row.interval_s
        paused = row.paused if change.paused is None else change.paused
        values: dict[str, Any] = {"interval_s": interval, "paused": paused}
        now = self.clock()
        if paused:
            values["next_run_at"] = None
        elif row.paused:  # resumed: a run now, then every interval
            values["next_run_at"] = now
        elif row.next_run_at is not None and row.next_run_at > now:  # not one due now
            values["next_run_at"] = row.next_run_at - row.interval_s + interval
        return values

    async def delete(self, monitor_id: str, tenancy: Tenancy = UNRESTRICTED) -> None:
        row = await self.require(monitor_id, tenancy)
        await self.store.delete(row.id)
        forget_gauges(row)

    async def run_now(self, monitor_id: str, tenancy: Tenancy = UNRESTRICTED) -> MonitorRunAccepted:
        row = await self.require(monitor_id, tenancy)
        if row.paused:
            detail = f"monitor {row.name!r} is paused: resume it first"
            raise Conflict(detail, field="monitor_id", source="path", title="Monitor paused")
        now = self.clock()
        await self.store.update(row.id, next_run_at=now)
        return MonitorRunAccepted(monitor_id=row.id, due_at=iso(now) or "")

    async def series(
        self,
        monitor_id: str,
        model: str,
        metric: MonitorMetric,
        tenancy: Tenancy = UNRESTRICTED,
    ) -> MonitorSeries:
        row = await self.require(monitor_id, tenancy)
        if model not in row.models:
            detail = f"monitor {row.name!r} follows {', '.join(row.models)}, not {model!r}"
            raise NotFound(detail, field="model", source="query")
        points = [
            _point(run, value)
            for run in await self.store.runs(row.id, "succeeded")
            if (value := run.values.get(model, {}).get(metric)) is not None
        ]
        return MonitorSeries(monitor_id=row.id, model=model, metric=metric, points=points)

    async def _require_runnable(self, data: MonitorCreate, tenancy: Tenancy) -> list[str]:
        """The models the monitor follows; a 4xx naming the field when its runs could not run."""
        require_protocol_request(data.kind, data.evaluation, data.position_bias, "monitor")
        if data.evaluation is not None:
            with nested_under("evaluation"):
                return await self._require_evaluation(data.evaluation, tenancy)
        assert data.position_bias is not None
        with nested_under("position_bias"):
            request, _ = await self.jobs.checked_position(data.position_bias, tenancy)
            _require_few(len(request.items or []))
        return models_of(request)

    async def _require_evaluation(self, data: EvaluationCreate, tenancy: Tenancy) -> list[str]:
        checked = await self.jobs.evaluations.check(data, tenancy)
        _require_few(len(checked.items))
        return checked.models

    async def _views(self, rows: list[MonitorRow]) -> list[Monitor]:
        latest = await self.store.latest_runs(rows)
        return [monitor_view(row, latest[row.id]) for row in rows]

    # ---- runs ----------------------------------------------------------------------------

    async def start_due_runs(self) -> int:
        """Starts the run of every due monitor this worker is the first to take; how many."""
        started = 0
        for monitor in await self.store.due(self.clock()):
            run = await self.store.take_due_time(monitor, self.clock())
            if run is None:
                continue
            started += 1
            try:
                job_id = await self._submit(monitor, run)
            except (RequestRefused, UpstreamError, IdempotencyConflict) as error:
                await self._finish(monitor, run, "failed", error=f"not started: {error}")
                continue
            await self.store.set_job(run.id, job_id)
        return started

    async def finish_ended_runs(self) -> int:
        """Records the outcome of every run whose job has ended; how many."""
        finished = 0
        monitors = {row.id: row for row in await self.store.all()}
        for run in await self.store.running():
            monitor = monitors.get(run.monitor_id)
            if monitor is None:
                continue
            try:  # one run that cannot be read must not hold up the others
                outcome = await self._outcome(monitor, run)
                if outcome is not None:
                    finished += await self._finish(monitor, run, *outcome)
            except Exception:
                logger.exception("monitor %s: run %s could not be recorded", monitor.name, run.id)
        return finished

    async def export_gauges(self) -> None:
        """Sets the gauges from the database: every evaluator exports the same values, and a
        restarted one exports them again."""
        rows = await self.store.all()
        latest = await self.store.latest_runs(rows)
        for gone in set(self._exported) - {row.name for row in rows}:
            forget_gauges(self._exported.pop(gone))
        for row in rows:
            self._exported[row.name] = row
            _export_schedule(row)
            success = latest[row.id].last_success
            if success is not None:
                _export_values(row, success)

    async def _submit(self, monitor: MonitorRow, run: RunRow) -> str:
        """The run's job, the monitor's tenant's; what it refers to was checked as the monitor
        was made (by a key of its tenant, or an admin's)."""
        owner = Tenancy(monitor.tenant, sees_all=True)
        spec = monitor.spec
        if spec.evaluation is not None:
            data = msgspec.structs.replace(
                spec.evaluation,
                name=f"monitor {monitor.name}",
                fresh_answers=True,
                reuse_paraphrases_from=await self._frozen_sets(monitor),
            )
            return await self.jobs.start_evaluation(data, f"monitor-run-{run.id}", owner)
        assert spec.position_bias is not None
        fresh = msgspec.structs.replace(spec.position_bias, fresh_answers=True)
        request, needed = await self.jobs.checked_position(fresh, owner)
        return await self.jobs.start_position(
            request, needed, f"monitor-run-{run.id}", monitor.tenant
        )

    async def _frozen_sets(self, monitor: MonitorRow) -> str | None:
        """The evaluation whose sets the run asks again; None (the sets are built anew) when
        the retention sweep deleted it."""
        frozen = monitor.frozen_sets_from
        if frozen is None or await self.jobs.evaluations.store.get(frozen) is not None:
            return frozen
        logger.warning("monitor %s: evaluation %s is gone; sets built anew", monitor.name, frozen)
        await self.store.update(monitor.id, frozen_sets_from=None)
        return None

    async def _outcome(
        self, monitor: MonitorRow, run: RunRow
    ) -> tuple[MonitorRunStatus, str | None, RunValues | None] | None:
        """(status, error, values) of a run whose job ended; None while it runs."""
        if run.job_id is None:
            if self.clock() - run.started_at < SUBMIT_GRACE_S:
                return None
            return "failed", "its job was never submitted (the evaluator stopped)", None
        if monitor.kind == "consistency":
            evaluation = await self.jobs.evaluations.store.get(run.job_id, results=True)
            if evaluation is None:
                return "failed", f"evaluation {run.job_id} was deleted", None
            if evaluation.status in ("queued", "running"):
                return None
            if evaluation.status != "succeeded":
                reason, note = f"evaluation {evaluation.status}", evaluation.message
                return (
                    "failed",
                    f"{reason}: {note}" if note and note != evaluation.status else reason,
                    None,
                )
            summaries = msgspec.convert(
                (evaluation.results or {}).get("models", []), list[ModelSummary]
            )
            return "succeeded", None, consistency_values(summaries, evaluation.item_count)
        job = await self.jobs.position_jobs.get(run.job_id)
        if job is None:
            return "failed", f"position-bias job {run.job_id} was deleted", None
        if job.status in ("queued", "running"):
            return None
        if job.status != "succeeded" or job.result is None:
            return "failed", job.error or f"position-bias job {job.status}", None
        return "succeeded", None, position_values(job.result)

    async def _finish(
        self,
        monitor: MonitorRow,
        run: RunRow,
        status: MonitorRunStatus,
        error: str | None = None,
        values: RunValues | None = None,
    ) -> int:
        if not await self.store.finish_run(
            run.id,
            status,
            self.clock(),
            error=error,
            values=values,
        ):
            return 0  # another worker recorded it
        MONITOR_RUNS.labels(monitor.name, status).inc()
        if status == "succeeded" and monitor.kind == "consistency" and run.job_id:
            current = await self.store.get(monitor.id)
            if current is not None and current.last_success_id == run.id:  # the newest success
                await self.store.update(monitor.id, frozen_sets_from=run.job_id)
        if error:
            logger.warning("monitor %s: run %s failed: %s", monitor.name, run.id, error)
        return 1


def consistency_values(summaries: list[ModelSummary], items: int) -> RunValues:
    values: RunValues = {}
    for summary in summaries:
        model = values.setdefault(summary.model, {})
        for name, metric in CONSISTENCY_METRICS.items():
            if (value := summary.metrics.get(metric)) is not None:
                model[name] = _value(value)
        if summary.mean_agreement is not None:
            model["agreement"] = MonitorValue(value=summary.mean_agreement, n=items)
    return values


def position_values(result: PositionBiasEvaluation) -> RunValues:
    return {
        model: {
            name: _value(metrics[metric])
            for name, metric in POSITION_METRICS.items()
            if metric in metrics
        }
        for model, metrics in result.models.items()
    }


def _value(metric: MetricValue) -> MonitorValue:
    return MonitorValue(
        value=metric.value, n=metric.n, ci_low=metric.ci_low, ci_high=metric.ci_high
    )


def _point(run: RunRow, value: MonitorValue) -> SeriesPoint:
    return SeriesPoint(
        run_id=run.id,
        at=iso(run.finished_at) or "",
        value=value.value,
        n=value.n,
        ci_low=value.ci_low,
        ci_high=value.ci_high,
    )


def _require_few(count: int) -> None:
    if count > MAX_MONITOR_ITEMS:
        detail = (
            f"a monitor's run evaluates at most {MAX_MONITOR_ITEMS} items, this one {count}: "
            "set `limit`"
        )
        raise InvalidRequest(detail, field="limit")


def run_view(run: RunRow) -> MonitorRun:
    return MonitorRun(
        id=run.id,
        due_at=iso(run.due_at) or "",
        started_at=iso(run.started_at) or "",
        finished_at=iso(run.finished_at),
        status=run.status,
        job_id=run.job_id,
        error=run.error,
        values=run.values,  # type: ignore[arg-type]
    )


def monitor_view(row: MonitorRow, latest: Latest) -> Monitor:
    success = latest.last_success
    return Monitor(
        id=row.id,
        name=row.name,
        kind=row.kind,  # type: ignore[arg-type]
        interval_s=row.interval_s,
        paused=row.paused,
        models=row.models,
        created_at=iso(row.created_at) or "",
        next_run_at=iso(row.next_run_at),
        runs=latest.runs,
        last_run=run_view(latest.last_run) if latest.last_run else None,
        last_success_at=iso(success.finished_at) if success else None,
        last_values=success.values if success else {},  # type: ignore[arg-type]
        frozen_sets_from=row.frozen_sets_from,
        evaluation=row.spec.evaluation,
        position_bias=row.spec.position_bias,
    )


def _export_schedule(row: MonitorRow) -> None:
    MONITOR_CREATED.labels(row.name).set(row.created_at)
    for status in RUN_STATUSES:  # from 0: a first failure is an increase the alert can see
        MONITOR_RUNS.labels(row.name, status)
    if row.paused:
        with contextlib.suppress(KeyError):
            MONITOR_INTERVAL.remove(row.name)
    else:
        MONITOR_INTERVAL.labels(row.name).set(row.interval_s)


def _export_values(row: MonitorRow, success: RunRow) -> None:
    """The last success's values; a series it has no value for leaves the metrics (it would
    go on showing an older run's)."""
    for model in row.models:
        values = success.values.get(model, {})
        for metric in ALL_METRICS:
            value = values.get(metric)
            if value is not None and value.value is not None:
                MONITOR_VALUE.labels(row.name, model, metric).set(value.value)
            else:
                with contextlib.suppress(KeyError):
                    MONITOR_VALUE.remove(row.name, model, metric)
    MONITOR_LAST_SUCCESS.labels(row.name).set(success.finished_at or 0.0)


def forget_gauges(row: MonitorRow) -> None:
    """A deleted monitor's series leave the metrics."""
    for gauge in (MONITOR_LAST_SUCCESS, MONITOR_INTERVAL, MONITOR_CREATED):
        with contextlib.suppress(KeyError):
            gauge.remove(row.name)
    for status in RUN_STATUSES:
        with contextlib.suppress(KeyError):
            MONITOR_RUNS.remove(row.name, status)
    for model in row.models:
        for metric in ALL_METRICS:
            with contextlib.suppress(KeyError):
                MONITOR_VALUE.remove(row.name, model, metric)


@dataclass
class MonitorScheduler:
    """Starts due runs and records ended ones every ``poll_s``; one per evaluator process."""

    monitors: Monitors
    poll_s: float
    _task: asyncio.Task[None] | None = None
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop())

    def wake(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def tick(self) -> None:
        """Each step on its own: one that fails (its error logged) leaves the others running."""
        for step in (
            self.monitors.finish_ended_runs,
            self.monitors.start_due_runs,
            self.monitors.export_gauges,
        ):
            try:
                await step()
            except Exception:
                logger.exception("monitor scheduler: %s failed", step.__name__)

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                logger.exception("monitor scheduler tick failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
