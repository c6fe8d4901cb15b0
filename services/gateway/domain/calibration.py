"""Which P(YES) threshold a judge route is held to, per judge prompt and task (docs: METHOD
§1.1).

In order: the route's configuration (``judge_threshold``, ``audit_threshold`` in the routes
file), a calibration stored by ``steadfast calibrate`` (the task's own, then one for every task),
the calibration bundled with a local model (likewise), and METHOD's default of 0.5.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import msgspec

from steadfast.services.gateway.domain.errors import UnknownRoute
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import (
    METHOD_DEFAULT_THRESHOLD,
    JudgeCalibration,
    JudgeThreshold,
)

#: calibrations of the bundled local models, made with ``steadfast calibrate`` on the bundled
#: labelled pairs; found by the local model's name, whatever the route is called
BUNDLED_FILE = Path(__file__).resolve().parent.parent / "calibrations.json"

#: the prompt family ("judge", "audit") a prompt version ("judge-v4") belongs to
AUDIT_PROMPT_PREFIX = "audit-"


class CalibrationStore(Protocol):
    """Where calibrations stored by ``steadfast calibrate`` are kept (the gateway's database)."""

    async def get(
        self, route: str, prompt_version: str, task: Task | None = None
    ) -> JudgeCalibration | None: ...

    async def all(self) -> list[JudgeCalibration]: ...

    async def put(self, calibration: JudgeCalibration) -> None: ...

    async def delete(self, route: str, prompt_version: str, task: Task | None = None) -> bool: ...


def load_bundled(path: Path = BUNDLED_FILE) -> list[JudgeCalibration]:
    if not path.exists():
        return []
    return msgspec.json.decode(path.read_bytes(), type=list[JudgeCalibration])


class JudgeCalibrations:
    """The P(YES) threshold each judge route is held to, per prompt and task, with its
    source: the route's configuration, a stored or bundled calibration, or METHOD's 0.5."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        store: CalibrationStore | None,
        bundled: list[JudgeCalibration] | None = None,
    ) -> None:
        self._routes = routes
        self._store = store
        self._bundled = load_bundled() if bundled is None else bundled

    def use_store(self, store: CalibrationStore) -> None:
        self._store = store

    def route(self, name: str) -> Route:
        route = self._routes.get(name)
        if route is None:
            raise UnknownRoute(name, sorted(self._routes), field="route")
        return route

    async def threshold(
        self, route_name: str, prompt_version: str, task: Task | None = None
    ) -> JudgeThreshold:
        route = self.route(route_name)
        configured = _configured(route, prompt_version)
        if configured is not None:
            return configured
        stored = await self._stored(route, prompt_version, task)
        if stored is not None:
            when = stored.calibrated_at[:10]
            origin = f"stored by steadfast calibrate on {when} ({stored.pairs})"
            return JudgeThreshold(
                value=stored.threshold, source="calibrated", origin=origin, calibration=stored
            )
        bundled = self._bundled_for(route, prompt_version, task) or self._bundled_for(
            route, prompt_version, None
        )
        if bundled is not None:
            origin = f"bundled with the local model {route.model} ({bundled.pairs})"
            return JudgeThreshold(
                value=bundled.threshold, source="calibrated", origin=origin, calibration=bundled
            )
        return JudgeThreshold(
            value=METHOD_DEFAULT_THRESHOLD,
            source="method_default",
            origin="METHOD's default: the route was never calibrated for this prompt",
        )

    async def all(self) -> list[JudgeThreshold]:
        """The threshold of every stored or bundled calibration of a known route."""
        keys: dict[tuple[str, str, Task | None], None] = {}
        for calibration in await self._store.all() if self._store else []:
            if calibration.route in self._routes:
                keys[(calibration.route, calibration.prompt_version, calibration.task)] = None
        for route in self._routes.values():
            for calibration in self._bundled:
                if route.backend == "local" and calibration.model == route.model:
                    keys[(route.name, calibration.prompt_version, calibration.task)] = None
        return [await self.threshold(*key) for key in keys]

    async def store(self, calibration: JudgeCalibration) -> JudgeThreshold:
        route = self.route(calibration.route)
        if self._store is None:
            raise RuntimeError("the gateway has no database to store calibrations in")
        await self._store.put(msgspec.structs.replace(calibration, model=route.model))
        return await self.threshold(route.name, calibration.prompt_version, calibration.task)

    async def forget(self, route_name: str, prompt_version: str, task: Task | None = None) -> bool:
        route = self.route(route_name)
        if self._store is None:
            return False
        return await self._store.delete(route.name, prompt_version, task)

    async def _stored(
        self, route: Route, prompt_version: str, task: Task | None
    ) -> JudgeCalibration | None:
        """The task's own stored calibration, else the one stored for every task."""
        if self._store is None:
            return None
        own = await self._store.get(route.name, prompt_version, task) if task else None
        return own or await self._store.get(route.name, prompt_version, None)

    def _bundled_for(
        self, route: Route, prompt_version: str, task: Task | None
    ) -> JudgeCalibration | None:
        if route.backend != "local":
            return None
        for calibration in self._bundled:
            if (
                calibration.model == route.model
                and calibration.prompt_version == prompt_version
                and calibration.task == task
            ):
                return msgspec.structs.replace(calibration, route=route.name)
        return None


def _configured(route: Route, prompt_version: str) -> JudgeThreshold | None:
    audit = prompt_version.startswith(AUDIT_PROMPT_PREFIX)
    value = route.audit_threshold if audit else route.judge_threshold
    if value is None:
        return None
    key = "audit_threshold" if audit else "judge_threshold"
    return JudgeThreshold(
        value=value, source="configured", origin=f"the route's configuration ({key})"
    )
