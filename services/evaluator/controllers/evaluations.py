"""``/v1/evaluate`` and ``/v1/evaluations``: thin handlers over the evaluation use cases."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, HeaderParameter, JSONBody, Parameter
from litestar.status_codes import HTTP_202_ACCEPTED

from steadfast.services.evaluator.adapters.upstream import Renderer
from steadfast.services.evaluator.components import Wake
from steadfast.services.evaluator.controllers.documents import DocumentOperation
from steadfast.services.evaluator.controllers.parameters import StoredFilter, StoredId
from steadfast.services.evaluator.domain.evaluate import evaluate_now, variant_count
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.services.evaluator.domain.pipeline import Upstream
from steadfast.services.evaluator.domain.validation import check_evaluation
from steadfast.services.evaluator.errors import IdempotencyConflict, UpstreamError
from steadfast.services.evaluator.limits import KeyJobs, grant_of
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.base import (
    MAX_STORED_INT,
    REPORT_MEDIA_TYPES,
    ReportFormat,
    Task,
)
from steadfast.shared.contracts.evaluator import (
    EvaluateRequest,
    EvaluateResponse,
    EvaluationAccepted,
    EvaluationCreate,
    EvaluationPage,
    EvaluationReport,
    EvaluationStatus,
    ItemPage,
    JobStatus,
)
from steadfast.shared.problems import ProblemError, problem_responses
from steadfast.shared.tenancy import Tenancy

#: the 400 of a body valid by the schema that breaks a rule between its fields
ONE_MODEL_RULE = (
    "Invalid request: the problem's `errors` name each field and where it is; also when both or "
    "neither of `model` and `models` are given, or a model is named twice"
)

#: the header that makes a job's submission safe to retry (see ``IdempotencyConflict``)
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", min_length=1, max_length=200, required=False),
]


def idempotency_problem(conflict: IdempotencyConflict) -> ProblemError:
    """The 422 naming the header, for a key that made a job of another request first."""
    return ProblemError(
        422, "Idempotency-Key reused", str(conflict), field="Idempotency-Key", source="header"
    )


class EvaluateController(Controller):
    """``/v1/evaluate``: a few questions evaluated within the request, nothing stored."""

    path = "/v1/evaluate"
    tags = ["evaluations"]  # noqa: RUF012

    @post(
        "",
        operation_id="evaluateNow",
        summary="Evaluate a few questions in one request: paraphrase, answer, grade, score",
        status_code=200,
        responses=problem_responses(
            {
                400: ONE_MODEL_RULE,
                413: "More variants than a request may answer: a job",
                422: "An unknown model, generator or judge route, or items the grader cannot grade",
            }
        ),
    )
    async def evaluate(
        self,
        data: JSONBody[EvaluateRequest],
        settings: NamedDependency[EvaluatorSettings],
        upstream: NamedDependency[Upstream],
        retry: NamedDependency[Backoff],
    ) -> EvaluateResponse:
        await check_evaluation(data, data.items, upstream, inline=True)
        needed = variant_count(data)
        if needed > settings.max_sync_variants:
            raise ProblemError(
                413,
                "Request too large",
                f"{needed} variants to answer (items × (1 + k) × models) exceed the synchronous "
                f"limit of {settings.max_sync_variants}; submit a job to POST /v1/evaluations",
                field="items",
            )
        return await evaluate_now(data, upstream, retry)


class EvaluationController(Controller):
    """``/v1/evaluations``: evaluation jobs, their status, items, reports, cancel and retry."""

    path = "/v1/evaluations"
    tags = ["evaluations"]  # noqa: RUF012

    @post(
        "",
        operation_id="createEvaluation",
        summary="Submit an evaluation job (an Idempotency-Key header makes retries safe)",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(
            {
                400: ONE_MODEL_RULE,
                404: "Unknown dataset_id or reuse_paraphrases_from",
                422: "An Idempotency-Key reused for another request, sets of another k, or an "
                "unknown model, generator or judge route",
            }
        ),
    )
    async def create(
        self,
        data: JSONBody[EvaluationCreate],
        request: Request[Any, Any, Any],
        evaluations: NamedDependency[Evaluations],
        wake_jobs: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
        key_jobs: NamedDependency[KeyJobs],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[EvaluationAccepted]:
        try:
            async with key_jobs.admitted(grant_of(request), idempotency_key) as api_key_id:
                job, _ = await evaluations.submit(data, idempotency_key, tenancy, api_key_id)
        except IdempotencyConflict as conflict:
            raise idempotency_problem(conflict) from conflict
        wake_jobs()
        return Response(
            EvaluationAccepted(id=job.id, status=job.status),  # type: ignore[arg-type]
            status_code=HTTP_202_ACCEPTED,
            headers={"Location": f"/v1/evaluations/{job.id}"},
        )

    @get("", operation_id="listEvaluations", summary="List evaluations, newest first")
    async def list_evaluations(
        self,
        evaluations: NamedDependency[Evaluations],
        tenancy: NamedDependency[Tenancy],
        status: FromQuery[JobStatus | None] = None,
        task: FromQuery[Task | None] = None,
        model: StoredFilter = None,
        dataset_id: StoredFilter = None,
        limit: Annotated[int, Parameter(ge=1, le=200)] = 20,
        offset: Annotated[int, Parameter(ge=0, le=MAX_STORED_INT)] = 0,
    ) -> EvaluationPage:
        return await evaluations.page(
            status=status,
            task=task,
            model=model,
            dataset_id=dataset_id,
            limit=limit,
            offset=offset,
            tenancy=tenancy,
        )

    @get(
        "/{evaluation_id:str}",
        operation_id="getEvaluation",
        summary="Status, progress per stage, timings and errors so far",
    )
    async def get_evaluation(
        self,
        evaluation_id: StoredId,
        evaluations: NamedDependency[Evaluations],
        tenancy: NamedDependency[Tenancy],
    ) -> EvaluationStatus:
        return await evaluations.status(await evaluations.require(evaluation_id, tenancy))

    @delete(
        "/{evaluation_id:str}",
        operation_id="cancelEvaluation",
        summary="Cancel a queued or running evaluation",
        status_code=200,
        responses=problem_responses({409: "The evaluation has finished already"}),
    )
    async def cancel(
        self,
        evaluation_id: StoredId,
        evaluations: NamedDependency[Evaluations],
        tenancy: NamedDependency[Tenancy],
    ) -> EvaluationStatus:
        return await evaluations.cancel(evaluation_id, tenancy)

    @post(
        "/{evaluation_id:str}/retry",
        operation_id="retryEvaluation",
        summary="Run a finished evaluation's failed parts again (paraphrase sets, answers, "
        "grades); the rest stays as it is, and the report is made anew",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(
            {409: "The evaluation is not finished, was cancelled, or has no failed part"}
        ),
    )
    async def retry(
        self,
        evaluation_id: StoredId,
        evaluations: NamedDependency[Evaluations],
        wake_jobs: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
    ) -> EvaluationAccepted:
        job = await evaluations.retry(evaluation_id, tenancy)
        wake_jobs()
        return EvaluationAccepted(id=job.id, status=job.status)  # type: ignore[arg-type]

    @get(
        "/{evaluation_id:str}/items",
        operation_id="listEvaluationItems",
        summary="Per-item results: variants, every model's answers, agreement, metrics",
    )
    async def items(
        self,
        evaluation_id: StoredId,
        evaluations: NamedDependency[Evaluations],
        tenancy: NamedDependency[Tenancy],
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
        offset: Annotated[int, Parameter(ge=0, le=MAX_STORED_INT)] = 0,
    ) -> ItemPage:
        evaluation = await evaluations.require(evaluation_id, tenancy, results=True)
        return await evaluations.items_page(evaluation, offset, limit)

    @get(
        "/{evaluation_id:str}/report",
        operation_id="getEvaluationReport",
        summary="The report as JSON, a self-contained HTML page, or CSV of per-item rows",
        description="`format=json` (the default) answers the report below as "
        "`application/json`; `format=html` answers a self-contained page as "
        "`text/html; charset=utf-8`; `format=csv` answers per-item rows as "
        "`text/csv; charset=utf-8` with `Content-Disposition: attachment`.",
        responses=problem_responses({502: "The scoring service could not render it"}),
        operation_class=DocumentOperation,
    )
    async def report(
        self,
        evaluation_id: StoredId,
        evaluations: NamedDependency[Evaluations],
        renderer: NamedDependency[Renderer],
        tenancy: NamedDependency[Tenancy],
        format: FromQuery[ReportFormat] = "json",
    ) -> Response[EvaluationReport]:
        evaluation = await evaluations.require(evaluation_id, tenancy, results=True)
        if format == "json":
            report: EvaluationReport = await evaluations.report(evaluation)
            return Response(report, media_type=REPORT_MEDIA_TYPES["json"])
        document = await evaluations.report_document(evaluation)
        try:
            rendered = await renderer(document, format)
        except UpstreamError as error:
            raise ProblemError(502, "Report rendering failed", error.reason) from error
        headers = {}
        if format == "csv":
            headers["Content-Disposition"] = f'attachment; filename="{evaluation_id}.csv"'
        return Response(
            rendered,  # type: ignore[arg-type]  # the html or csv rendering of the report
            media_type=REPORT_MEDIA_TYPES[format],
            headers=headers,
        )
