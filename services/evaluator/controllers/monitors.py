"""``/v1/monitors``: thin handlers over the monitors' use cases."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_202_ACCEPTED

from steadfast.services.evaluator.components import Wake
from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.domain.monitors import Monitors
from steadfast.shared.contracts.monitors import (
    Monitor,
    MonitorCreate,
    MonitorMetric,
    MonitorPage,
    MonitorRunAccepted,
    MonitorSeries,
    MonitorUpdate,
)
from steadfast.shared.problems import problem_responses
from steadfast.shared.tenancy import Tenancy

ModelQuery = Annotated[str, Parameter(min_length=1, max_length=200, pattern="^[^\\x00]*$")]


class MonitorController(Controller):
    """``/v1/monitors``: create, list, read, change and delete monitors, a metric's series over
    their runs, and a run started at once."""

    path = "/v1/monitors"
    tags = ["monitors"]  # noqa: RUF012

    @post(
        "",
        operation_id="createMonitor",
        summary="Create a monitor: an evaluation or positional-bias job run every interval, the "
        "first run at once",
        status_code=HTTP_201_CREATED,
        responses=problem_responses(
            {
                400: "Invalid request: the problem's `errors` name each field and where it is; "
                "also when a monitor does not carry the request of its kind (`evaluation` for "
                "consistency, `position_bias` for position-bias) or carries the other",
                404: "Unknown dataset_id",
                409: "A monitor of this name exists, or there are 50 monitors already",
                413: "A position-bias run would ask for more answers than a job may",
                422: "A model, generator or judge the gateway does not know",
            }
        ),
    )
    async def create(
        self,
        data: JSONBody[MonitorCreate],
        monitors: NamedDependency[Monitors],
        wake_monitors: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
    ) -> Response[Monitor]:
        monitor = await monitors.create(data, tenancy)
        wake_monitors()
        return Response(
            monitor,
            status_code=HTTP_201_CREATED,
            headers={"Location": f"/v1/monitors/{monitor.id}"},
        )

    @get("", operation_id="listMonitors", summary="Every monitor, oldest first")
    async def list_monitors(
        self, monitors: NamedDependency[Monitors], tenancy: NamedDependency[Tenancy]
    ) -> MonitorPage:
        return await monitors.page(tenancy)

    @get(
        "/{monitor_id:str}",
        operation_id="getMonitor",
        summary="A monitor: its last run, next run and last values",
    )
    async def get_monitor(
        self,
        monitor_id: StoredId,
        monitors: NamedDependency[Monitors],
        tenancy: NamedDependency[Tenancy],
    ) -> Monitor:
        return await monitors.view(monitor_id, tenancy)

    @get(
        "/{monitor_id:str}/series",
        operation_id="getMonitorSeries",
        summary="One model's value of one metric in every run that succeeded, with its 95% "
        "interval and n",
        responses=problem_responses({404: "Unknown monitor, or a model it does not follow"}),
    )
    async def series(
        self,
        monitor_id: StoredId,
        model: ModelQuery,
        metric: FromQuery[MonitorMetric],
        monitors: NamedDependency[Monitors],
        tenancy: NamedDependency[Tenancy],
    ) -> MonitorSeries:
        return await monitors.series(monitor_id, model, metric, tenancy)

    @patch(
        "/{monitor_id:str}",
        operation_id="updateMonitor",
        summary="Pause or resume a monitor (resumed: a run at once), or change its interval",
        responses=problem_responses({409: "The schedule kept changing under the update"}),
    )
    async def update(
        self,
        monitor_id: StoredId,
        data: JSONBody[MonitorUpdate],
        monitors: NamedDependency[Monitors],
        wake_monitors: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
    ) -> Monitor:
        monitor = await monitors.update(monitor_id, data, tenancy)
        wake_monitors()
        return monitor

    @delete(
        "/{monitor_id:str}",
        operation_id="deleteMonitor",
        summary="Delete a monitor and its runs (the evaluations they ran stay)",
        status_code=204,
    )
    async def delete_monitor(
        self,
        monitor_id: StoredId,
        monitors: NamedDependency[Monitors],
        tenancy: NamedDependency[Tenancy],
    ) -> None:
        await monitors.delete(monitor_id, tenancy)

    @post(
        "/{monitor_id:str}/runs",
        operation_id="runMonitorNow",
        summary="Run a monitor now (the next run then follows an interval after it)",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses({409: "The monitor is paused"}),
    )
    async def run_now(
        self,
        monitor_id: StoredId,
        monitors: NamedDependency[Monitors],
        wake_monitors: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
    ) -> MonitorRunAccepted:
        accepted = await monitors.run_now(monitor_id, tenancy)
        wake_monitors()
        return accepted
