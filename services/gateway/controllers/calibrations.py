"""``/v1/calibrations``: the P(YES) threshold each judge route is held to, per judge prompt."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, delete, get, put
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter, QueryParameter

from steadfast.services.gateway.controllers.admin import require_admin_if_configured
from steadfast.services.gateway.controllers.problems import GATEWAY_EXCEPTION_HANDLERS
from steadfast.services.gateway.domain.calibration import JudgeCalibrations
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import CalibrationList, JudgeCalibration, JudgeThreshold
from steadfast.shared.guards import require_internal_token
from steadfast.shared.internal_token import INTERNAL_TOKEN_SCHEME
from steadfast.shared.problems import ProblemError, problem_responses

RoutePath = Annotated[str, Parameter(description="a route of GET /v1/models", max_length=200)]
PromptPath = Annotated[
    str,
    Parameter(
        description='the judge prompt\'s version ("judge-v4", "audit-v1")',
        max_length=40,
        pattern="^[a-z0-9.-]+$",
    ),
]

TaskQuery = Annotated[
    Task | None,
    QueryParameter(
        name="task",
        description=(
            "the kind of question judged (factual, math, choice): the task's own calibration "
            "comes before one for every task; unset: the one for every task"
        ),
    ),
]

_UNKNOWN_ROUTE = problem_responses({404: "Unknown model route"})


class CalibrationController(Controller):
    """``/v1/calibrations``: the judge thresholds each route is held to, and the calibrations
    stored for them."""

    path = "/v1/calibrations"
    tags = ["calibration"]  # noqa: RUF012
    exception_handlers = GATEWAY_EXCEPTION_HANDLERS
    guards = [require_internal_token]  # noqa: RUF012
    security = [{INTERNAL_TOKEN_SCHEME: []}]  # noqa: RUF012

    @get(
        "/",
        operation_id="listJudgeCalibrations",
        summary="Every stored or bundled judge calibration of a route, with its threshold",
    )
    async def list_calibrations(
        self, judge_calibrations: NamedDependency[JudgeCalibrations]
    ) -> CalibrationList:
        return CalibrationList(calibrations=await judge_calibrations.all())

    @get(
        "/{route:str}/{prompt_version:str}",
        operation_id="getJudgeThreshold",
        summary="The threshold a route is held to for a judge prompt, and where it comes from",
        description=(
            "In order: the route's configuration (`judge_threshold`, `audit_threshold`), a "
            "calibration stored by `steadfast calibrate` (for the task, then for every task), "
            "the one bundled with a local model (likewise), METHOD's default (0.5)."
        ),
        responses=problem_responses({400: "An unknown task", 404: "Unknown model route"}),
    )
    async def get_threshold(
        self,
        route: RoutePath,
        prompt_version: PromptPath,
        judge_calibrations: NamedDependency[JudgeCalibrations],
        task: TaskQuery = None,
    ) -> JudgeThreshold:
        return await judge_calibrations.threshold(route, prompt_version, task)

    @put(
        "/{route:str}/{prompt_version:str}",
        operation_id="storeJudgeCalibration",
        summary="Store a calibration (as `steadfast calibrate` does); every service then uses it",
        description=(
            "A calibration with a `task` holds for that task's questions only, one without for "
            "every task; storing replaces the calibration of the same route, prompt and task."
        ),
        status_code=200,
        responses=problem_responses(
            {
                401: "An admin key is configured and was not sent, or the internal token is "
                "missing or wrong (when the gateway has one)",
                404: "Unknown model route",
                422: "The body names another route or prompt",
            }
        ),
    )
    async def store(
        self,
        request: Request[object, object, State],
        route: RoutePath,
        prompt_version: PromptPath,
        data: JSONBody[JudgeCalibration],
        judge_calibrations: NamedDependency[JudgeCalibrations],
        settings: NamedDependency[GatewaySettings],
    ) -> JudgeThreshold:
        require_admin_if_configured(request, settings)
        for field, named, path in (
            ("route", data.route, route),
            ("prompt_version", data.prompt_version, prompt_version),
        ):
            if named != path:
                detail = f"the body's {field} {named!r} is not the path's {path!r}"
                raise ProblemError(422, "Mismatched calibration", detail, field=field)
        return await judge_calibrations.store(data)

    @delete(
        "/{route:str}/{prompt_version:str}",
        operation_id="deleteJudgeCalibration",
        summary="Forget a stored calibration (the bundled one or METHOD's default applies again)",
        responses=problem_responses(
            {
                400: "An unknown task",
                401: "An admin key is configured and was not sent, or the internal token is "
                "missing or wrong (when the gateway has one)",
                404: "Unknown model route, or no calibration stored for it, this prompt and task",
            }
        ),
    )
    async def forget(
        self,
        request: Request[object, object, State],
        route: RoutePath,
        prompt_version: PromptPath,
        judge_calibrations: NamedDependency[JudgeCalibrations],
        settings: NamedDependency[GatewaySettings],
        task: TaskQuery = None,
    ) -> None:
        require_admin_if_configured(request, settings)
        if not await judge_calibrations.forget(route, prompt_version, task):
            scope = f" and task {task!r}" if task else ""
            detail = f"no calibration is stored for {route!r} and {prompt_version!r}{scope}"
            raise ProblemError(404, "No stored calibration", detail)
