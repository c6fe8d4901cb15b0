"""Runs the stages over the candidates, cheapest first: lexical, numbers, semantic, judge."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.verify.domain.judge import Judge, JudgeOutcome
from services.verify.domain.lexical import max_overlap, overlap
from services.verify.domain.prompts import JUDGE_PROMPT_VERSION
from services.verify.domain.semantic import SemanticStage
from shared.contracts.gateway import ModelCalls
from shared.contracts.verify import (
    CandidateVerdict,
    SemanticCheck,
    Stage,
    VerifyRequest,
    VerifyResponse,
)
from shared.http_client import ServiceCallError
from shared.metering import MeteredCaller
from shared.quantities import quantity_difference


@dataclass
class _Candidate:
    text: str
    rejected_by: Stage | None = None
    reason: str | None = None
    error: str | None = None
    overlap: float | None = None
    semantic: float | None = None
    judge: JudgeOutcome | None = None
    stages: list[Stage] = field(default_factory=list)

    def reject(self, stage: Stage, reason: str, error: str | None = None) -> None:
        if self.rejected_by is None:
            self.rejected_by, self.reason, self.error = stage, reason, error

    def verdict(self, semantic_name: SemanticCheck | None) -> CandidateVerdict:
        judge = self.judge
        return CandidateVerdict(
            text=self.text,
            accepted=self.rejected_by is None,
            deciding_stage=self.rejected_by,
            reason=self.reason,
            overlap=self.overlap,
            judge_verdict=judge.verdict if judge and not judge.error else None,
            judge_p_yes=judge.p_yes if judge else None,
            judge_votes=judge.votes if judge else None,
            semantic=self.semantic,
            semantic_check=semantic_name if self.semantic is not None else None,
            error=self.error,
        )


async def verify(
    request: VerifyRequest, *, judge: Judge | None, semantic: SemanticStage | None
) -> VerifyResponse:
    candidates = [_Candidate(text) for text in request.candidates]
    stages_run: list[Stage] = []
    for candidate in candidates:
        if not candidate.text.strip():
            candidate.reject("lexical", "empty candidate")
    if request.stages.lexical:
        stages_run.append("lexical")
        _lexical(request, candidates)
    if request.stages.numbers:
        stages_run.append("numbers")
        _numbers(request, candidates)
    if semantic is not None:
        stages_run.append("semantic")
        await _semantic(request, candidates, semantic)
    model_calls = ModelCalls()
    if judge is not None:
        stages_run.append("judge")
        meter = judge.meter()
        await _judge(request, candidates, judge, meter)
        model_calls = meter.summary()
    if request.stages.lexical:
        _against_earlier_accepted(request, candidates)
    return VerifyResponse(
        results=[c.verdict(semantic.name if semantic else None) for c in candidates],
        semantic_check=semantic.name if semantic else "off",
        judge_model=judge.model if judge else None,
        judge_prompt_version=JUDGE_PROMPT_VERSION if judge else None,
        stages_run=stages_run,
        model_calls=model_calls,
    )


def _pending(request: VerifyRequest, candidates: list[_Candidate]) -> list[_Candidate]:
    if request.explain_all:
        return [c for c in candidates if c.text.strip()]
    return [c for c in candidates if c.rejected_by is None]


def _lexical(request: VerifyRequest, candidates: list[_Candidate]) -> None:
    threshold = request.thresholds.overlap
    references = [request.original, *request.accepted]
    for candidate in _pending(request, candidates):
        candidate.overlap = max_overlap(candidate.text, references)
        if candidate.overlap >= threshold:
            candidate.reject(
                "lexical", f"overlap {candidate.overlap:.2f} >= {threshold} with an earlier text"
            )


def _numbers(request: VerifyRequest, candidates: list[_Candidate]) -> None:
    for candidate in _pending(request, candidates):
        difference = quantity_difference(request.original, candidate.text)
        if difference:
            candidate.reject("numbers", f"numbers differ from the original: {difference}")


async def _semantic(
    request: VerifyRequest, candidates: list[_Candidate], semantic: SemanticStage
) -> None:
    pending = _pending(request, candidates)
    if not pending:
        return
    threshold = semantic.threshold(request.thresholds)
    try:
        scores = await semantic.scores(request.original, [c.text for c in pending])
    except (ServiceCallError, ValueError) as exc:
        error = f"{semantic.name} check failed: {exc}"
        for candidate in pending:
            candidate.reject("semantic", error, error=error)
        return
    for candidate, score in zip(pending, scores, strict=True):
        candidate.semantic = score
        if score < threshold:
            candidate.reject("semantic", f"{semantic.name} score {score:.3f} < {threshold}")


async def _judge(
    request: VerifyRequest, candidates: list[_Candidate], judge: Judge, meter: MeteredCaller
) -> None:
    pending = _pending(request, candidates)
    if not pending:
        return
    outcomes = await judge.judge_all(
        meter,
        request.original,
        [c.text for c in pending],
        bidirectional=request.bidirectional,
        logprobs=request.judge_logprobs,
        cache=request.cache,
    )
    threshold = request.thresholds.judge_p_yes
    for candidate, outcome in zip(pending, outcomes, strict=True):
        candidate.judge = outcome
        if outcome.error is not None:
            candidate.reject("judge", outcome.error, error=outcome.error)
        elif not outcome.passes(threshold):
            candidate.reject("judge", _judge_reason(outcome, threshold))


def _judge_reason(outcome: JudgeOutcome, threshold: float | None) -> str:
    if threshold is not None and outcome.p_yes is not None:
        return f"judge P(yes) {outcome.p_yes:.3f} < {threshold}"
    replies = ", ".join(f"{v.order}: {v.reply!r}" for v in outcome.votes)
    return f"judge answered no ({replies})"


def _against_earlier_accepted(request: VerifyRequest, candidates: list[_Candidate]) -> None:
    """A candidate too close to one accepted before it in this same request is rejected."""
    threshold = request.thresholds.overlap
    kept: list[_Candidate] = []
    for candidate in candidates:
        if candidate.rejected_by is not None:
            continue
        closest = max((overlap(candidate.text, other.text) for other in kept), default=0.0)
        if closest >= threshold:
            candidate.overlap = max(candidate.overlap or 0.0, closest)
            candidate.reject(
                "lexical", f"overlap {closest:.2f} >= {threshold} with an accepted candidate"
            )
        else:
            kept.append(candidate)
