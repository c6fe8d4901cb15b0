"""``POST /v1/verify``."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from steadfast.services.verify import metrics
from steadfast.services.verify.adapters.embedder import EmbedderError
from steadfast.services.verify.domain.judge import JudgeUnavailable, UnknownModelError
from steadfast.services.verify.domain.judges import JudgePool
from steadfast.services.verify.domain.pipeline import ThresholdLookup, verify
from steadfast.services.verify.domain.semantic import SemanticModels
from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse
from steadfast.shared.problems import ProblemError, problem_responses


class VerifyController(Controller):
    """``/v1/verify``: candidate paraphrases checked against the original question."""

    path = "/v1"
    tags = ["verify"]  # noqa: RUF012

    @post(
        "/verify",
        operation_id="verifyCandidates",
        summary="Check candidate paraphrases against the original: lexical, semantic, judge",
        status_code=200,
        responses=problem_responses(
            {
                422: "A blank original, an unknown judge route, or reference answers without "
                "the audit",
                503: "The embedder, the default judge route, or the judge's model server is "
                "unavailable (the model server down for now: ask again later)",
            }
        ),
    )
    async def verify_candidates(
        self,
        data: JSONBody[VerifyRequest],
        judges: NamedDependency[JudgePool],
        semantic_models: NamedDependency[SemanticModels],
        thresholds: NamedDependency[ThresholdLookup],
    ) -> VerifyResponse:
        if not data.original.strip():
            raise ProblemError(
                422, "Empty original", "original must not be blank", field="original"
            )
        if data.reference_answers and not data.audit:
            detail = "reference_answers are read by the audit's answer check only: set audit"
            raise ProblemError(
                422, "Reference answers without the audit", detail, field="reference_answers"
            )
        judge = await judges.judge_for(data) if data.stages.judge else None
        audit_judge = await judges.audit_judge_for(data) if data.audit else None
        answer_judge = (
            judges.answer_judge_of(audit_judge) if audit_judge and data.reference_answers else None
        )
        try:
            response = await verify(
                data,
                judge=judge,
                semantic=semantic_models.stage_for(data.stages.semantic),
                audit_judge=audit_judge,
                answer_judge=answer_judge,
                thresholds=thresholds,
            )
        except UnknownModelError as exc:
            field = "audit_judge_model" if audit_judge and exc.model == audit_judge.model else None
            field = field or "judge_model"
            raise ProblemError(422, "Unknown judge model", str(exc), field=field) from exc
        except EmbedderError as exc:
            raise ProblemError(503, "Embedder unavailable", str(exc)) from exc
        except JudgeUnavailable as exc:
            raise ProblemError(503, "Judge unavailable", str(exc)) from exc
        metrics.record(response)
        return response
