"""``/v1/studies``: thin handlers over the studies' use cases."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, Parameter
from litestar.status_codes import HTTP_202_ACCEPTED

from steadfast.services.evaluator.controllers.documents import DocumentOperation
from steadfast.services.evaluator.controllers.evaluations import idempotency_problem
from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.domain.studies import Studies
from steadfast.services.evaluator.domain.study_report import render_csv, render_html
from steadfast.services.evaluator.errors import IdempotencyConflict
from steadfast.shared.contracts.base import MAX_STORED_INT, REPORT_MEDIA_TYPES, ReportFormat
from steadfast.shared.contracts.studies import (
    StudyAccepted,
    StudyCreate,
    StudyPage,
    StudyReport,
    StudyStatus,
)
from steadfast.shared.problems import problem_responses
from steadfast.shared.tenancy import Tenancy


class StudyController(Controller):
    """``/v1/studies``: start a study, list them, read one and its report."""

    path = "/v1/studies"
    tags = ["studies"]  # noqa: RUF012

    @post(
        "",
        operation_id="createStudy",
        summary="Start a study: every part (a data set under a protocol) as its own job",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(
            {
                400: "Invalid request: the problem's `errors` name each field and where it is; "
                "also when a part does not carry the request of its protocol (`evaluation` for "
                "consistency, `position_bias` for position-bias) or carries the other",
                404: "A part's unknown dataset_id (the problem names the part)",
                413: "A positional-bias part would ask for more answers than a job may",
                422: "A model, generator or judge route the gateway does not know",
            }
        ),
    )
    async def create(
        self,
        data: JSONBody[StudyCreate],
        studies: NamedDependency[Studies],
        tenancy: NamedDependency[Tenancy],
    ) -> Response[StudyAccepted]:
        try:
            accepted = await studies.create(data, tenancy)
        except IdempotencyConflict as conflict:  # a part's key, made anew: a bug if ever
            raise idempotency_problem(conflict) from conflict
        return Response(
            accepted,
            status_code=HTTP_202_ACCEPTED,
            headers={"Location": f"/v1/studies/{accepted.id}"},
        )

    @get("", operation_id="listStudies", summary="Studies, newest first, with their progress")
    async def list_studies(
        self,
        studies: NamedDependency[Studies],
        tenancy: NamedDependency[Tenancy],
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20,
        offset: Annotated[int, Parameter(ge=0, le=MAX_STORED_INT)] = 0,
    ) -> StudyPage:
        return await studies.page(offset, limit, tenancy)

    @get(
        "/{study_id:str}",
        operation_id="getStudy",
        summary="A study's progress over all its parts, and each part's job and status",
    )
    async def get_study(
        self,
        study_id: StoredId,
        studies: NamedDependency[Studies],
        tenancy: NamedDependency[Tenancy],
    ) -> StudyStatus:
        return await studies.status(await studies.require(study_id, tenancy))

    @get(
        "/{study_id:str}/report",
        operation_id="getStudyReport",
        summary="One report of every part: tables per data set, charts, settings",
        description="`format=json` (the default) answers the report below; `format=html` a "
        "self-contained page (`text/html; charset=utf-8`); `format=csv` one row per part, "
        "model, condition and metric (`text/csv; charset=utf-8`). Parts still running or "
        "failed are listed with their status and reason.",
        operation_class=DocumentOperation,
    )
    async def report(
        self,
        study_id: StoredId,
        studies: NamedDependency[Studies],
        tenancy: NamedDependency[Tenancy],
        format: FromQuery[ReportFormat] = "json",
    ) -> Response[StudyReport]:
        report = await studies.report(await studies.require(study_id, tenancy))
        if format == "json":
            return Response(report, media_type=REPORT_MEDIA_TYPES["json"])
        rendered = render_html(report) if format == "html" else render_csv(report)
        headers = {}
        if format == "csv":
            headers["Content-Disposition"] = f'attachment; filename="{study_id}.csv"'
        document: Response[StudyReport] = Response(
            rendered,  # type: ignore[arg-type]  # the html or csv rendering of the report
            media_type=REPORT_MEDIA_TYPES[format],
            headers=headers,
        )
        return document
