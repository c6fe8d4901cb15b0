"""``POST /v1/position-bias`` and its job form: thin handlers over the positional-bias
protocol."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.position_jobs import PositionJobRow, PositionJobStore
from steadfast.services.evaluator.components import Wake
from steadfast.services.evaluator.controllers.evaluations import IdempotencyKey, idempotency_problem
from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.domain.position import (
    PositionUpstream,
    checked_request,
    evaluate_position_bias,
)
from steadfast.services.evaluator.errors import IdempotencyConflict, UpstreamError
from steadfast.services.evaluator.limits import KeyJobs, grant_of
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionBiasJob,
)
from steadfast.shared.errors import not_found
from steadfast.shared.fingerprint import fingerprint
from steadfast.shared.problems import ProblemError, problem_responses
from steadfast.shared.tenancy import Tenancy


class PositionBiasController(Controller):
    """``/v1/position-bias``: the protocol run synchronously, and its jobs (created, read,
    cancelled)."""

    path = "/v1/position-bias"
    tags = ["position-bias"]  # noqa: RUF012

    @post(
        "",
        operation_id="evaluatePositionBias",
        summary="Ask each item with its options in every order: PF, PC and the mitigations",
        status_code=200,
        responses=problem_responses(
            {
                400: "Invalid request: the problem's `errors` name each field and where it is; "
                "also when both or neither of `items` and `dataset_id`, or of `model` and "
                "`models`, are given",
                404: "Unknown dataset_id",
                413: "More answers than a request may wait for: a job",
                422: "An unknown model or generator route",
                502: "A service the evaluation needs failed",
            }
        ),
    )
    async def evaluate(
        self,
        data: JSONBody[PositionBiasEvaluate],
        settings: NamedDependency[EvaluatorSettings],
        datasets: NamedDependency[DatasetStore],
        upstream: NamedDependency[PositionUpstream],
        retry: NamedDependency[Backoff],
        tenancy: NamedDependency[Tenancy],
    ) -> PositionBiasEvaluation:
        data, needed = await checked_request(data, datasets, upstream, tenancy)
        if needed > settings.max_sync_variants:
            raise _too_large(
                needed,
                f"the synchronous limit of {settings.max_sync_variants}; send fewer items "
                "(`limit`) or submit a job to POST /v1/position-bias/jobs",
            )
        try:
            return await evaluate_position_bias(data, upstream, retry)
        except UpstreamError as error:
            raise ProblemError(502, "Upstream failure", error.reason) from error

    @post(
        "/jobs",
        operation_id="createPositionBiasJob",
        summary="Submit a positional-bias evaluation as a job (for more answers than a request "
        "can wait for; an Idempotency-Key header makes retries safe)",
        status_code=HTTP_202_ACCEPTED,
        responses=problem_responses(
            {
                400: "Invalid request: the problem's `errors` name each field and where it is; "
                "also when both or neither of `items` and `dataset_id`, or of `model` and "
                "`models`, are given",
                404: "Unknown dataset_id",
                413: "More answers than a job may ask for",
                422: "An Idempotency-Key reused for another request, or an unknown model or "
                "generator route",
            }
        ),
    )
    async def create_job(
        self,
        data: JSONBody[PositionBiasEvaluate],
        settings: NamedDependency[EvaluatorSettings],
        datasets: NamedDependency[DatasetStore],
        upstream: NamedDependency[PositionUpstream],
        position_jobs: NamedDependency[PositionJobStore],
        wake_position_jobs: NamedDependency[Wake],
        tenancy: NamedDependency[Tenancy],
        request: Request[Any, Any, Any],
        key_jobs: NamedDependency[KeyJobs],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[PositionBiasJob]:
        request_hash = fingerprint(data)  # of the request as sent, before a dataset fills it
        data, needed = await checked_request(data, datasets, upstream, tenancy)
        if needed > settings.max_job_answers:
            raise _too_large(needed, f"the job limit of {settings.max_job_answers}")
        try:
            async with key_jobs.admitted(grant_of(request), idempotency_key) as api_key_id:
                job = await position_jobs.create(
                    data,
                    needed,
                    idempotency_key=idempotency_key,
                    request_hash=request_hash,
                    tenant=tenancy.tenant,
                    api_key_id=api_key_id,
                )
        except IdempotencyConflict as conflict:
            raise idempotency_problem(conflict) from conflict
        wake_position_jobs()
        return Response(
            job_view(job),
            status_code=HTTP_202_ACCEPTED,
            headers={"Location": f"/v1/position-bias/jobs/{job.id}"},
        )

    @get(
        "/jobs/{job_id:str}",
        operation_id="getPositionBiasJob",
        summary="A positional-bias job's status and, once it succeeded, its result",
    )
    async def get_job(
        self,
        job_id: StoredId,
        position_jobs: NamedDependency[PositionJobStore],
        tenancy: NamedDependency[Tenancy],
    ) -> PositionBiasJob:
        return job_view(await _job(position_jobs, job_id, tenancy))

    @delete(
        "/jobs/{job_id:str}",
        operation_id="cancelPositionBiasJob",
        summary="Cancel a queued or running positional-bias job",
        status_code=200,
        responses=problem_responses({409: "The job has finished already"}),
    )
    async def cancel_job(
        self,
        job_id: StoredId,
        position_jobs: NamedDependency[PositionJobStore],
        tenancy: NamedDependency[Tenancy],
    ) -> PositionBiasJob:
        job = await _job(position_jobs, job_id, tenancy)
        if not await position_jobs.cancel(job.id):
            detail = f"position-bias job {job.id} already {job.status}"
            raise ProblemError(409, "Conflict", detail, field="job_id", source="path")
        return job_view(await _job(position_jobs, job_id, tenancy))


async def _job(position_jobs: PositionJobStore, job_id: str, tenancy: Tenancy) -> PositionJobRow:
    """The job, or a 404 (another tenant's too, answered alike)."""
    job = await position_jobs.get(job_id, tenancy)
    if job is None:
        raise not_found("position-bias job", job_id, "job_id")
    return job


def _too_large(needed: int, limit: str) -> ProblemError:
    return ProblemError(
        413,
        "Request too large",
        f"up to {needed} answers (option orders × conditions × models) exceed {limit}",
        field="items",
    )


def job_view(job: PositionJobRow) -> PositionBiasJob:
    return PositionBiasJob(
        id=job.id,
        status=job.status,
        order_count=job.order_count,
        created_at=iso(job.created_at) or "",
        started_at=iso(job.started_at),
        finished_at=iso(job.finished_at),
        attempts=job.attempts,
        error=job.error,
        result=job.result,
    )
