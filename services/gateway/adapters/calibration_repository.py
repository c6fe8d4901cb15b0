"""Judge calibrations stored by ``steadfast calibrate``, in the gateway's database."""

from __future__ import annotations

import time

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from steadfast.services.gateway.db.models import judge_calibrations
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import JudgeCalibration
from steadfast.shared.db import Database

_decode = msgspec.json.Decoder(JudgeCalibration).decode


def _task_key(task: Task | None) -> str:
    """The column's value: a task, or "" for a calibration that holds for every task."""
    return task or ""


class SqlCalibrationStore:
    """Judge calibrations stored by ``steadfast calibrate``, one per route, prompt version
    and task, in the gateway's database."""

    def __init__(self, database: Database) -> None:
        self._database = database
        insert = postgresql.insert if database.dialect == "postgresql" else sqlite.insert
        statement = insert(judge_calibrations)
        self._upsert = statement.on_conflict_do_update(
            index_elements=["route", "prompt_version", "task"],
            set_={
                "payload": statement.excluded.payload,
                "created_at": statement.excluded.created_at,
            },
        )

    async def get(
        self, route: str, prompt_version: str, task: Task | None = None
    ) -> JudgeCalibration | None:
        query = sa.select(judge_calibrations.c.payload).where(
            judge_calibrations.c.route == route,
            judge_calibrations.c.prompt_version == prompt_version,
            judge_calibrations.c.task == _task_key(task),
        )
        async with self._database.engine.connect() as connection:
            payload = (await connection.execute(query)).scalar_one_or_none()
        return _decode(payload) if payload is not None else None

    async def all(self) -> list[JudgeCalibration]:
        query = sa.select(judge_calibrations.c.payload).order_by(
            judge_calibrations.c.route,
            judge_calibrations.c.prompt_version,
            judge_calibrations.c.task,
        )
        async with self._database.engine.connect() as connection:
            rows = (await connection.execute(query)).scalars().all()
        return [_decode(payload) for payload in rows]

    async def put(self, calibration: JudgeCalibration) -> None:
        row = {
            "route": calibration.route,
            "prompt_version": calibration.prompt_version,
            "task": _task_key(calibration.task),
            "payload": msgspec.json.encode(calibration).decode(),
            "created_at": time.time(),
        }
        async with self._database.engine.begin() as connection:
            await connection.execute(self._upsert, [row])

    async def delete(self, route: str, prompt_version: str, task: Task | None = None) -> bool:
        statement = sa.delete(judge_calibrations).where(
            judge_calibrations.c.route == route,
            judge_calibrations.c.prompt_version == prompt_version,
            judge_calibrations.c.task == _task_key(task),
        )
        async with self._database.engine.begin() as connection:
            result = await connection.execute(statement)
        return bool(result.rowcount)
