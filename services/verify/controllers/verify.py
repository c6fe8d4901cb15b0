"""``POST /v1/verify``."""

from __future__ import annotations

from litestar import Controller, post
from litestar.datastructures import State
from litestar.params import JSONBody

from steadfast.services.verify import metrics
from steadfast.services.verify.adapters.embedder import EmbedderError
from steadfast.services.verify.domain.judge import Judge, JudgeUnavailable, UnknownModelError
from steadfast.services.verify.domain.pipeline import verify
from steadfast.services.verify.domain.prompts import AUDIT, EQUIVALENCE, JudgePrompt
from steadfast.services.verify.domain.semantic import EmbeddingCheck, NliCheck, SemanticStage
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
                422: "A blank original, or an unknown judge route",
                503: "The embedder, the default judge route, or the judge's model server is "
                "unavailable (the model server down for now: ask again later)",
            }
        ),
    )
    async def verify_candidates(
        self, data: JSONBody[VerifyRequest], state: State
    ) -> VerifyResponse:
        if not data.original.strip():
            raise ProblemError(
                422, "Empty original", "original must not be blank", field="original"
            )
        judge = await _known_judge(data, state) if data.stages.judge else None
        audit_judge = await _audit_judge(data, state) if data.audit else None
        try:
            response = await verify(
                data,
                judge=judge,
                semantic=_semantic(data, state),
                audit_judge=audit_judge,
                thresholds=state.thresholds,
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


async def _known_judge(data: VerifyRequest, state: State) -> Judge:
    """The judge, once the gateway is known to have its route (checked before any stage runs:
    a candidate may never reach the judge, and a caller would learn of a misspelt route rounds
    later); a default route the gateway lacks is this service's misconfiguration (503)."""
    model = data.judge_model or state.settings.default_judge_model
    await _require_route(model, "judge_model", data.judge_model is None, state)
    return _judge(model, EQUIVALENCE, state)


async def _audit_judge(data: VerifyRequest, state: State) -> Judge:
    """The judge of the audit's second question: its own route, else the judge's."""
    if data.audit_judge_model is not None:
        await _require_route(data.audit_judge_model, "audit_judge_model", False, state)
        return _judge(data.audit_judge_model, AUDIT, state)
    model = data.judge_model or state.settings.default_judge_model
    await _require_route(model, "judge_model", data.judge_model is None, state)
    return _judge(model, AUDIT, state)


async def _require_route(model: str, field: str, default: bool, state: State) -> None:
    known = await state.gateway.route_names()
    if known is None or model in known:
        return
    if default:
        detail = f"the default judge route {model!r} is not a gateway route: set judge_model"
        raise ProblemError(503, "Judge route not configured", detail)
    detail = f"the gateway has no model {model!r}"
    raise ProblemError(422, "Unknown judge model", detail, field=field)


def _judge(model: str, prompt: JudgePrompt, state: State) -> Judge:
    """One judge per route and prompt, shared by every request (the route's concurrency)."""
    judges: dict[tuple[str, str], Judge] = state.judges
    key = (model, prompt.version)
    if key not in judges:
        concurrency = state.settings.judge_concurrency
        judges[key] = Judge(state.gateway, model, concurrency=concurrency, prompt=prompt)
    return judges[key]


def _semantic(data: VerifyRequest, state: State) -> SemanticStage | None:
    check = data.stages.semantic
    if check == "auto":
        check = "nli" if state.nli is not None else "embedding"
    if check == "embedding":
        return EmbeddingCheck(state.embedder)
    if check == "nli":
        if state.nli is None:
            raise ProblemError(
                422,
                "No NLI model configured",
                "set STEADFAST_VERIFY_NLI_URL, or use semantic='embedding'",
                field="stages.semantic",
            )
        return NliCheck(state.nli)
    return None
