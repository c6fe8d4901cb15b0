"""``POST /v1/paraphrases[/batch]``, ``/v1/distractors``, ``/v1/permutations``."""

from __future__ import annotations

import asyncio

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from steadfast.services.perturb import metrics
from steadfast.services.perturb.domain.distractors import DistractorWriter
from steadfast.services.perturb.domain.errors import (
    RequestError,
    UpstreamUnavailable,
    VerifyRejectedError,
)
from steadfast.services.perturb.domain.paraphrasing import ParaphraseBuilder
from steadfast.services.perturb.domain.permutations import permute
from steadfast.services.perturb.settings import PerturbSettings
from steadfast.shared.contracts.base import FieldError, Problem
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    DistractorResponse,
    ParaphraseBatchItem,
    ParaphraseBatchRequest,
    ParaphraseBatchResponse,
    ParaphraseRequest,
    ParaphraseResponse,
    PermutationRequest,
    PermutationResponse,
)
from steadfast.shared.problems import ProblemError, problem_responses


class PerturbController(Controller):
    """``/v1/paraphrases`` (one and batch), ``/v1/distractors`` and ``/v1/permutations``."""

    path = "/v1"
    tags = ["perturb"]  # noqa: RUF012

    @post(
        "/paraphrases",
        operation_id="createParaphrases",
        summary="Generate and verify up to k paraphrases of a question",
        status_code=200,
        responses=problem_responses(
            {
                422: "A blank question, an unknown generator route, or verify settings refused",
                503: "The generator's model server or the verify service is down for now: ask "
                "again later (an incomplete set is only returned for other reasons)",
            }
        ),
    )
    async def create_paraphrases(
        self, data: JSONBody[ParaphraseRequest], paraphraser: NamedDependency[ParaphraseBuilder]
    ) -> ParaphraseResponse:
        return await _build(paraphraser, data)

    @post(
        "/paraphrases/batch",
        operation_id="createParaphrasesBatch",
        summary="Paraphrases for many questions; each item has its result or its error",
        status_code=200,
    )
    async def create_paraphrases_batch(
        self,
        data: JSONBody[ParaphraseBatchRequest],
        paraphraser: NamedDependency[ParaphraseBuilder],
        settings: NamedDependency[PerturbSettings],
    ) -> ParaphraseBatchResponse:
        limit = asyncio.Semaphore(settings.batch_concurrency)

        async def one(index: int, request: ParaphraseRequest) -> ParaphraseBatchItem:
            async with limit:
                try:
                    return ParaphraseBatchItem(result=await _build(paraphraser, request))
                except ProblemError as error:
                    return ParaphraseBatchItem(error=_item_problem(error, index))

        items = await asyncio.gather(*(one(i, r) for i, r in enumerate(data.requests)))
        return ParaphraseBatchResponse(results=list(items))

    @post(
        "/distractors",
        operation_id="createDistractors",
        summary="Distinct wrong answers: plausible, or out of context",
        status_code=200,
        responses=problem_responses(
            {422: "A blank question or correct answer, or an unknown generator route"}
        ),
    )
    async def create_distractors(
        self,
        data: JSONBody[DistractorRequest],
        distractor_writer: NamedDependency[DistractorWriter],
    ) -> DistractorResponse:
        for name in ("question", "correct_answer"):
            if not getattr(data, name).strip():
                raise ProblemError(422, f"Empty {name}", f"{name} must not be blank", field=name)
        try:
            return await distractor_writer.write(data)
        except RequestError as error:
            raise ProblemError(422, error.title, str(error), field=error.field) from error

    @post(
        "/permutations",
        operation_id="createPermutations",
        summary="Option orders (swap or cyclic) with every option's position in each",
        status_code=200,
        responses=problem_responses(
            {
                400: "Invalid request: the problem's `errors` name each field and where it is; "
                "also `swap` with more than two options (`cyclic` is for three or more)"
            }
        ),
    )
    async def create_permutations(self, data: JSONBody[PermutationRequest]) -> PermutationResponse:
        if data.scheme == "swap" and len(data.options) > 2:
            # scoring tells the passes of a unit apart by rotation: a reversal of three or more
            # options would leave it incomplete and out of every metric
            detail = (
                "`swap` is for two options; use `cyclic` for three or more (docs/method.md §2.1)"
            )
            raise ProblemError(400, "Invalid request", detail, field="scheme")
        return PermutationResponse(scheme=data.scheme, orders=permute(data.options, data.scheme))


async def _build(builder: ParaphraseBuilder, request: ParaphraseRequest) -> ParaphraseResponse:
    if not request.question.strip():
        raise ProblemError(422, "Empty question", "question must not be blank", field="question")
    try:
        response = await builder.build(request)
    except RequestError as error:
        raise ProblemError(422, error.title, str(error), field=error.field) from error
    except UpstreamUnavailable as error:
        raise ProblemError(503, "Service Unavailable", str(error)) from error
    except VerifyRejectedError as error:
        problem = error.error.problem
        field = problem.errors[0].field if problem.errors else None
        raise ProblemError(
            422,
            "Verification settings rejected",
            problem.detail or problem.title,
            field=f"verify.{field}" if field else "verify",
        ) from error
    metrics.record(response)
    return response


def _item_problem(error: ProblemError, index: int) -> Problem:
    field = f"requests[{index}].{error.field}" if error.field else f"requests[{index}]"
    return Problem(
        title=error.title,
        status=error.status,
        detail=error.detail,
        errors=[FieldError(field=field, message=error.detail or error.title)],
    )
