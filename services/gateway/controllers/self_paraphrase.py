"""``POST /v1/self-paraphrase``: one question answered by a self-paraphrase strategy."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from steadfast.services.gateway.controllers.callers import (
    CALLER_FORBIDDEN,
    CALLER_RATE_LIMITED,
    CALLER_SECURITY,
    CALLER_UNAUTHORIZED,
    charge_caller,
    require_caller,
)
from steadfast.services.gateway.controllers.problems import (
    GENERATE_ERROR_RESPONSES,
    STRATEGY_EXCEPTION_HANDLERS,
)
from steadfast.services.gateway.strategies import metrics
from steadfast.services.gateway.strategies.prompts import PROMPT_VERSION
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.service import Run, SelfParaphraseService
from steadfast.shared.contracts.gateway import GatewayProblem
from steadfast.shared.contracts.proxy import SelfParaphraseRequest, SelfParaphraseResponse
from steadfast.shared.metering import MeteredCaller
from steadfast.shared.problems import ProblemError, problem_responses


class SelfParaphraseController(Controller):
    """``/v1/self-paraphrase``: one question answered by a self-paraphrase strategy."""

    path = "/v1"
    tags = ["self-paraphrase"]  # noqa: RUF012
    exception_handlers = STRATEGY_EXCEPTION_HANDLERS
    guards = [require_caller]  # noqa: RUF012
    security = CALLER_SECURITY

    @post(
        "/self-paraphrase",
        operation_id="answerWithSelfParaphrase",
        summary="Answer one question with a self-paraphrase strategy and a consistency score",
        status_code=200,
        responses={
            **GENERATE_ERROR_RESPONSES,
            **problem_responses(
                {
                    400: "Invalid request; also when both or neither of `question` and "
                    "`messages` are given",
                    401: CALLER_UNAUTHORIZED,
                    403: CALLER_FORBIDDEN,
                }
            ),
            **problem_responses({429: CALLER_RATE_LIMITED}, problem_type=GatewayProblem),
        },
    )
    async def self_paraphrase(
        self,
        request: Request[Any, Any, Any],
        data: JSONBody[SelfParaphraseRequest],
        self_paraphrase: NamedDependency[SelfParaphraseService],
    ) -> SelfParaphraseResponse:
        settings = AnswerSettings.asked(
            data.model,
            temperature=data.temperature,
            seed=data.seed,
            cache=data.cache,
            max_tokens=data.max_tokens,
        )
        try:
            question = _question(data)
        except ProblemError:
            metrics.record_rejected(data.strategy)
            raise
        meter = MeteredCaller(self_paraphrase.gateway)
        try:
            run = await self_paraphrase.run(data.strategy, question, settings, data, meter)
        finally:  # every call of the strategy, those of a failed run too
            charge_caller(request, meter.calls, meter.usage)
        return _response(run, data.model)


def _question(data: SelfParaphraseRequest) -> Question:
    if (data.question is None) == (data.messages is None):
        raise ProblemError(
            400, "Invalid request", "give exactly one of question and messages", field="question"
        )
    if data.question is not None:
        if not data.question.strip():
            raise ProblemError(400, "Invalid request", "the question is empty", field="question")
        return Question(text=data.question)
    try:
        return Question.from_messages(data.messages or [])
    except ValueError as exc:
        raise ProblemError(400, "Invalid request", str(exc), field="messages") from exc


def _response(run: Run, route: str) -> SelfParaphraseResponse:
    result = run.result
    return SelfParaphraseResponse(
        answer=result.answer,
        text=result.text,
        agreement=result.agreement,
        strategy=result.strategy,
        model=route,
        task=result.task,
        variants=result.variants,
        usage=run.meter.usage,
        latency_s=round(run.latency_s, 6),
        calls=run.meter.calls,
        cached_calls=run.meter.cached_calls,
        failed_variants=result.failed_variants,
        early_stopped=result.early_stopped,
        notes=result.notes,
        prompt_version=PROMPT_VERSION,
        clustering=result.clustering,
        clustering_judge_calls=result.clustering_judge_calls,
    )
