"""``POST /v1/position-bias`` and its job form: thin handlers over the positional-bias
protocol."""

from __future__ import annotations

from litestar import Controller, Response, delete, get, post
from litestar.datastructures import State
from litestar.params import JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from steadfast.services.evaluator.adapters.datasets import iso
from steadfast.services.evaluator.adapters.position_jobs import PositionJobRow, PositionJobStore
from steadfast.services.evaluator.adapters.repository import IdempotencyConflict
from steadfast.services.evaluator.controllers.evaluations import IdempotencyKey
from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.domain.pipeline import UpstreamError
from steadfast.services.evaluator.domain.position import checked_request, evaluate_position_bias
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionBiasJob,
)
from steadfast.shared.fingerprint import fingerprint
from steadfast.shared.problems import ProblemError, not_found, problem_responses


class PositionBiasController(Controller):
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
        self, data: JSONBody[PositionBiasEvaluate], state: State
    ) -> PositionBiasEvaluation:
        settings: EvaluatorSettings = state.settings
        data, needed = await _checked(data, state)
        if needed > settings.max_sync_variants:
            raise _too_large(
                needed,
                f"the synchronous limit of {settings.max_sync_variants}; send fewer items "
                "(`limit`) or submit a job to POST /v1/position-bias/jobs",
            )
        try:
            return await evaluate_position_bias(data, state.upstream, state.retry)
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
        state: State,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[PositionBiasJob]:
        settings: EvaluatorSettings = state.settings
        request_hash = fingerprint(data)  # of the request as sent, before a dataset fills it
        data, needed = await _checked(data, state)
        if needed > settings.max_job_answers:
            raise _too_large(needed, f"the job limit of {settings.max_job_answers}")
        store: PositionJobStore = state.position_jobs
        try:
            job = await store.create(
                data, needed, idempotency_key=idempotency_key, request_hash=request_hash
            )
        except IdempotencyConflict as conflict:
            raise conflict.problem("position-bias job") from conflict
        state.position_runner.wake()
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
    async def get_job(self, job_id: StoredId, state: State) -> PositionBiasJob:
        return job_view(await _job(state, job_id))

    @delete(
        "/jobs/{job_id:str}",
        operation_id="cancelPositionBiasJob",
        summary="Cancel a queued or running positional-bias job",
        status_code=200,
        responses=problem_responses({409: "The job has finished already"}),
    )
    async def cancel_job(self, job_id: StoredId, state: State) -> PositionBiasJob:
        job = await _job(state, job_id)
        store: PositionJobStore = state.position_jobs
        if not await store.cancel(job.id):
            detail = f"position-bias job {job.id} already {job.status}"
            raise ProblemError(409, "Conflict", detail, field="job_id", source="path")
        return job_view(await _job(state, job_id))


async def _job(state: State, job_id: str) -> PositionJobRow:
    store: PositionJobStore = state.position_jobs
    job = await store.get(job_id)
    if job is None:
        raise not_found("position-bias job", job_id, "job_id")
    return job


async def _checked(data: PositionBiasEvaluate, state: State) -> tuple[PositionBiasEvaluate, int]:
    return await checked_request(data, state.datasets, state.upstream)


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
