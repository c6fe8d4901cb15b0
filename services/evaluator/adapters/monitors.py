"""Monitors and their runs in the database.

Any number of evaluators share the schedule: a worker takes a due time by moving the monitor's
``next_run_at`` on from exactly the value it read (compare and set), and the run row is unique per
(monitor, due time), so a due time is run once whoever saw it first."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services.evaluator.db.models import monitor_runs, monitors
from steadfast.shared.contracts.monitors import MonitorCreate, MonitorRunStatus, MonitorValue
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, visible

logger = logging.getLogger(__name__)

#: ``{model: {metric: value}}``
RunValues = dict[str, dict[str, MonitorValue]]


class MonitorNameTaken(Exception):
    """Another monitor has this name."""


@dataclass(frozen=True)
class MonitorRow:
    """A stored monitor: its request, models, interval, next due time, and the id of its last
    successful run."""

    id: str
    name: str
    kind: str
    spec: MonitorCreate
    models: list[str]
    interval_s: float
    paused: bool
    created_at: float
    next_run_at: float | None
    frozen_sets_from: str | None
    last_success_id: str | None = None
    #: whose it is (shared/tenancy.py); its runs' jobs are this tenant's too
    tenant: str = DEFAULT_TENANT


@dataclass(frozen=True)
class Latest:
    """A monitor's last run, its last successful run and how many runs it had."""

    last_run: RunRow | None
    last_success: RunRow | None
    runs: int


@dataclass(frozen=True)
class RunRow:
    """One run of a monitor: when it was due and ran, the job it started and the values it
    recorded."""

    id: str
    monitor_id: str
    due_at: float
    started_at: float
    finished_at: float | None
    status: MonitorRunStatus
    job_id: str | None
    error: str | None
    values: RunValues


class MonitorStore:
    """Monitors and their runs in the database; workers share the schedule by taking due
    times with a compare-and-set."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    # ---- monitors ------------------------------------------------------------------------

    async def create(
        self, spec: MonitorCreate, models: list[str], now: float, tenant: str = DEFAULT_TENANT
    ) -> MonitorRow:
        """The monitor, ``tenant``'s."""
        values = {
            "id": f"mon-{uuid.uuid4().hex[:20]}",
            "name": spec.name,
            "kind": spec.kind,
            "spec": msgspec.json.encode(spec).decode(),
            "models": models,
            "interval_s": spec.interval_s,
            "paused": spec.paused,
            "created_at": now,
            "next_run_at": None if spec.paused else now,
            "frozen_sets_from": None,
            "last_success_id": None,
            "tenant": tenant,
        }
        try:
            async with self.engine.begin() as connection:
                await connection.execute(monitors.insert().values(**values))
        except IntegrityError as exc:
            raise MonitorNameTaken(spec.name) from exc
        return _monitor({**values, "spec": values["spec"]})

    async def count(self) -> int:
        async with self.engine.connect() as connection:
            counted = await connection.scalar(sa.select(sa.func.count()).select_from(monitors))
        return int(counted or 0)

    async def get(self, monitor_id: str, tenancy: Tenancy = UNRESTRICTED) -> MonitorRow | None:
        """The monitor; None for one ``tenancy`` does not see (another tenant's)."""
        query = sa.select(monitors).where(
            monitors.c.id == monitor_id, visible(monitors.c.tenant, tenancy)
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return _monitor(row) if row is not None else None

    async def all(self, tenancy: Tenancy = UNRESTRICTED) -> list[MonitorRow]:
        """The monitors ``tenancy`` sees, oldest first."""
        query = sa.select(monitors).where(visible(monitors.c.tenant, tenancy))
        async with self.engine.connect() as connection:
            rows = await connection.execute(query.order_by(monitors.c.created_at))
            return [_monitor(row) for row in rows.mappings()]

    async def update(self, monitor_id: str, **values: Any) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                monitors.update().where(monitors.c.id == monitor_id).values(**values)
            )

    async def update_unless_taken(
        self, monitor_id: str, next_run_at_was: float | None, **values: Any
    ) -> bool:
        """Change the schedule only if no worker took a due time since it was read (a
        ``next_run_at`` written back from before would name a due time already run)."""
        async with self.engine.begin() as connection:
            changed = await connection.execute(
                monitors.update()
                .where(
                    monitors.c.id == monitor_id,
                    monitors.c.next_run_at.is_not_distinct_from(next_run_at_was),
                )
                .values(**values)
            )
        return changed.rowcount == 1

    async def delete(self, monitor_id: str) -> bool:
        async with self.engine.begin() as connection:
            await connection.execute(
                monitor_runs.delete().where(monitor_runs.c.monitor_id == monitor_id)
            )
            deleted = await connection.execute(monitors.delete().where(monitors.c.id == monitor_id))
        return bool(deleted.rowcount)

    # ---- the schedule --------------------------------------------------------------------

    async def due(self, now: float) -> list[MonitorRow]:
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                sa.select(monitors).where(
                    monitors.c.next_run_at <= now, monitors.c.paused.is_(False)
                )
            )
            return [_monitor(row) for row in rows.mappings()]

    async def take_due_time(self, monitor: MonitorRow, now: float) -> RunRow | None:
        """The run of the monitor's due time, if this worker is the one to take it: the next
        run moves to an interval from now (a run missed while no evaluator ran happens once,
        not once per missed interval). None when another worker took it first."""
        due = monitor.next_run_at
        if due is None:
            return None
        run = RunRow(
            id=f"run-{uuid.uuid4().hex[:20]}",
            monitor_id=monitor.id,
            due_at=due,
            started_at=now,
            finished_at=None,
            status="running",
            job_id=None,
            error=None,
            values={},
        )
        try:
            async with self.engine.begin() as connection:
                moved = await connection.execute(
                    monitors.update()
                    .where(monitors.c.id == monitor.id, monitors.c.next_run_at == due)
                    .values(next_run_at=now + monitor.interval_s)
                )
                if moved.rowcount != 1:
                    return None
                await connection.execute(monitor_runs.insert().values(**_run_values(run)))
        except IntegrityError:  # this due time was run already: move on, or it stays due for ever
            logger.warning("monitor %s: due time %s was run already; moved on", monitor.name, due)
            await self.update_unless_taken(monitor.id, due, next_run_at=now + monitor.interval_s)
            return None
        return run

    # ---- runs ----------------------------------------------------------------------------

    async def set_job(self, run_id: str, job_id: str) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                monitor_runs.update().where(monitor_runs.c.id == run_id).values(job_id=job_id)
            )

    async def finish_run(
        self,
        run_id: str,
        status: MonitorRunStatus,
        now: float,
        *,
        error: str | None = None,
        values: RunValues | None = None,
    ) -> bool:
        """Records the outcome once: False when the run was finished already (by another
        worker that saw its job end at the same time)."""
        async with self.engine.begin() as connection:
            finished = await connection.execute(
                monitor_runs.update()
                .where(monitor_runs.c.id == run_id, monitor_runs.c.status == "running")
                .values(
                    status=status,
                    finished_at=now,
                    error=error,
                    metric_values=msgspec.to_builtins(values) if values else None,
                )
            )
            if finished.rowcount == 1 and status == "succeeded":
                await connection.execute(_newest_success(run_id))
        return finished.rowcount == 1

    async def running(self) -> list[RunRow]:
        async with self.engine.connect() as connection:
            rows = await connection.execute(
                sa.select(monitor_runs).where(monitor_runs.c.status == "running")
            )
            return [_run(row) for row in rows.mappings()]

    async def runs(self, monitor_id: str, status: str | None = None) -> list[RunRow]:
        """The monitor's runs, oldest first."""
        query = sa.select(monitor_runs).where(monitor_runs.c.monitor_id == monitor_id)
        if status is not None:
            query = query.where(monitor_runs.c.status == status)
        async with self.engine.connect() as connection:
            rows = await connection.execute(query.order_by(monitor_runs.c.started_at))
            return [_run(row) for row in rows.mappings()]

    async def latest_runs(self, rows: list[MonitorRow]) -> dict[str, Latest]:
        """Per monitor: its last run, its last run that succeeded, and how many it had.

        The last run and the count come from one statement over the runs (one snapshot), not
        from the monitor row read earlier: a run started between the two reads would be counted
        while the older run still showed as the last one."""
        if not rows:
            return {}
        ids = [r.id for r in rows]
        newest_first = sa.func.row_number().over(
            partition_by=monitor_runs.c.monitor_id,
            order_by=(monitor_runs.c.started_at.desc(), monitor_runs.c.id.desc()),
        )
        counted = sa.func.count().over(partition_by=monitor_runs.c.monitor_id)
        ranked = (
            sa.select(monitor_runs, newest_first.label("rank"), counted.label("count"))
            .where(monitor_runs.c.monitor_id.in_(ids))
            .subquery()
        )
        successes = sorted({r.last_success_id for r in rows if r.last_success_id})
        async with self.engine.connect() as connection:
            found = await connection.execute(
                sa.select(ranked).where(sa.or_(ranked.c.rank == 1, ranked.c.id.in_(successes)))
            )
            selected = list(found.mappings())
        runs = {row["id"]: _run(row) for row in selected}
        newest = {row["monitor_id"]: row for row in selected if row["rank"] == 1}
        return {r.id: _latest(r, runs, newest.get(r.id)) for r in rows}


def _newest_success(run_id: str) -> sa.Update:
    """The run as its monitor's last success, unless a run started after it succeeded already
    (runs may overlap: one started by hand while a scheduled one runs)."""
    run = monitor_runs.alias("run")
    earlier = monitor_runs.alias("earlier")
    this_run = sa.select(run.c.started_at).where(run.c.id == run_id).scalar_subquery()
    current = (
        sa.select(earlier.c.started_at)
        .where(earlier.c.id == monitors.c.last_success_id)
        .scalar_subquery()
    )
    owner = sa.select(run.c.monitor_id).where(run.c.id == run_id).scalar_subquery()
    return (
        monitors.update()
        .where(
            monitors.c.id == owner,
            sa.or_(monitors.c.last_success_id.is_(None), current <= this_run),
        )
        .values(last_success_id=run_id)
    )


def _latest(row: MonitorRow, runs: dict[str, RunRow], newest: Any) -> Latest:
    if newest is None:
        return Latest(None, runs.get(row.last_success_id or ""), 0)
    last_run = runs[newest["id"]]
    # the monitor row may have been read just before its last run succeeded
    if last_run.status == "succeeded":
        return Latest(last_run, last_run, newest["count"])
    return Latest(last_run, runs.get(row.last_success_id or ""), newest["count"])


def _monitor(row: Any) -> MonitorRow:
    return MonitorRow(
        id=row["id"],
        name=row["name"],
        kind=row["kind"],
        spec=msgspec.json.decode(row["spec"], type=MonitorCreate),
        models=list(row["models"]),
        interval_s=row["interval_s"],
        paused=bool(row["paused"]),
        created_at=row["created_at"],
        next_run_at=row["next_run_at"],
        frozen_sets_from=row["frozen_sets_from"],
        last_success_id=row["last_success_id"],
        tenant=row["tenant"],
    )


def _run(row: Any) -> RunRow:
    return RunRow(
        id=row["id"],
        monitor_id=row["monitor_id"],
        due_at=row["due_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        job_id=row["job_id"],
        error=row["error"],
        values=msgspec.convert(row["metric_values"] or {}, RunValues),
    )


def _run_values(run: RunRow) -> dict[str, Any]:
    return {
        "id": run.id,
        "monitor_id": run.monitor_id,
        "due_at": run.due_at,
        "started_at": run.started_at,
        "status": run.status,
    }
