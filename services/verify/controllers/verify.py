"""``POST /v1/verify``."""

from __future__ import annotations

from litestar import Controller, post
from litestar.datastructures import State
from litestar.params import JSONBody

from services.verify import metrics
from services.verify.adapters.embedder import EmbedderError
from services.verify.domain.judge import Judge, UnknownModelError
from services.verify.domain.pipeline import verify
from services.verify.domain.semantic import EmbeddingCheck, NliCheck, SemanticStage
from shared.contracts.verify import VerifyRequest, VerifyResponse
from shared.problems import ProblemError


class VerifyController(Controller):
    path = "/v1"
    tags = ["verify"]  # noqa: RUF012

    @post(
        "/verify",
        operation_id="verifyCandidates",
        summary="Check candidate paraphrases against the original: lexical, semantic, judge",
        status_code=200,
    )
    async def verify_candidates(
        self, data: JSONBody[VerifyRequest], state: State
    ) -> VerifyResponse:
        if not data.original.strip():
            raise ProblemError(
                422, "Empty original", "original must not be blank", field="original"
            )
        judge = await _known_judge(data, state) if data.stages.judge else None
        try:
            response = await verify(data, judge=judge, semantic=_semantic(data, state))
        except UnknownModelError as exc:
            raise ProblemError(422, "Unknown judge model", str(exc), field="judge_model") from exc
        except EmbedderError as exc:
            raise ProblemError(503, "Embedder unavailable", str(exc)) from exc
        metrics.record(response)
        return response


async def _known_judge(data: VerifyRequest, state: State) -> Judge:
    """The judge, once the gateway is known to have its route (checked before any stage runs:
    a candidate may never reach the judge, and a caller would learn of a misspelt route rounds
    later); a default route the gateway lacks is this service's misconfiguration (503)."""
    model = data.judge_model or state.settings.default_judge_model
    known = await state.gateway.route_names()
    if known is not None and model not in known:
        if data.judge_model is None:
            detail = f"the default judge route {model!r} is not a gateway route: set judge_model"
            raise ProblemError(503, "Judge route not configured", detail)
        detail = f"the gateway has no model {model!r}"
        raise ProblemError(422, "Unknown judge model", detail, field="judge_model")
    return _judge(model, state)


def _judge(model: str, state: State) -> Judge:
    judges: dict[str, Judge] = state.judges
    if model not in judges:
        judges[model] = Judge(state.gateway, model, concurrency=state.settings.judge_concurrency)
    return judges[model]


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
