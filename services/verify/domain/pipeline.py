"""Runs the stages over the candidates, cheapest first: lexical, numbers, semantic, judge, and
the audit's second judge question when asked."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from steadfast.services.verify.domain.direction import direction_difference
from steadfast.services.verify.domain.form import form_difference
from steadfast.services.verify.domain.judge import Judge, JudgeOutcome, JudgeUnavailable
from steadfast.services.verify.domain.names_kept import name_dropped
from steadfast.services.verify.domain.prompts import JudgePrompt
from steadfast.services.verify.domain.semantic import SemanticStage
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import METHOD_DEFAULT_THRESHOLD, JudgeThreshold
from steadfast.shared.contracts.gateway import ModelCalls
from steadfast.shared.contracts.verify import (
    CandidateVerdict,
    JudgeVote,
    SemanticCheck,
    Stage,
    VerifyRequest,
    VerifyResponse,
)
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.lexical import overlap
from steadfast.shared.metering import MeteredCaller, sum_calls
from steadfast.shared.quantities.invariance import quantity_difference

#: a judge route's threshold for a prompt on questions of a task (none: any task), as the
#: gateway keeps them
ThresholdLookup = Callable[[str, JudgePrompt, Task | None], Awaitable[JudgeThreshold]]


@dataclass
class _Asked:
    """What one judge question said of a candidate."""

    outcome: JudgeOutcome
    passed: bool

    @property
    def verdict(self) -> Literal["yes", "no"] | None:
        if self.outcome.error:
            return None
        return "yes" if self.passed else "no"

    @property
    def votes(self) -> list[JudgeVote]:
        return self.outcome.votes


@dataclass
class _Candidate:
    text: str
    rejected_by: Stage | None = None
    reason: str | None = None
    error: str | None = None
    overlap: float | None = None
    semantic: float | None = None
    judge: _Asked | None = None
    audit: _Asked | None = None
    answer_p_yes: float | None = None

    def reject(self, stage: Stage, reason: str, error: str | None = None) -> None:
        if self.rejected_by is None:
            self.rejected_by, self.reason, self.error = stage, reason, error

    def verdict(self, semantic_name: SemanticCheck | None) -> CandidateVerdict:
        judge, audit = self.judge, self.audit
        return CandidateVerdict(
            text=self.text,
            accepted=self.rejected_by is None,
            deciding_stage=self.rejected_by,
            reason=self.reason,
            overlap=self.overlap,
            judge_verdict=judge.verdict if judge else None,
            judge_p_yes=judge.outcome.p_yes if judge else None,
            judge_votes=judge.votes if judge else None,
            audit_verdict=audit.verdict if audit else None,
            audit_p_yes=audit.outcome.p_yes if audit else None,
            audit_votes=audit.votes if audit else None,
            answer_p_yes=self.answer_p_yes,
            semantic=self.semantic,
            semantic_check=semantic_name if self.semantic is not None else None,
            error=self.error,
        )


@dataclass
class _Run:
    request: VerifyRequest
    candidates: list[_Candidate]
    thresholds: ThresholdLookup | None
    stages_run: list[Stage] = field(default_factory=list)
    calls: list[MeteredCaller] = field(default_factory=list)

    def pending(self) -> list[_Candidate]:
        if self.request.explain_all:
            return [c for c in self.candidates if c.text.strip()]
        return [c for c in self.candidates if c.rejected_by is None]

    def model_calls(self) -> ModelCalls:
        return sum_calls(meter.summary() for meter in self.calls)


async def verify(
    request: VerifyRequest,
    *,
    judge: Judge | None,
    semantic: SemanticStage | None,
    audit_judge: Judge | None = None,
    answer_judge: Judge | None = None,
    thresholds: ThresholdLookup | None = None,
) -> VerifyResponse:
    """``thresholds`` gives each judge route's threshold where the request sets none (without
    it: METHOD's default); ``audit_judge`` asks the audit's question when the request wants it,
    and ``answer_judge`` the answer check when it gives reference answers."""
    run = _Run(request, [_Candidate(text) for text in request.candidates], thresholds)
    for candidate in run.candidates:
        if not candidate.text.strip():
            candidate.reject("lexical", "empty candidate")
    if request.stages.form:
        run.stages_run.append("form")
        _form(run)
    if request.stages.direction:
        run.stages_run.append("direction")
        _direction(run)
    if request.stages.lexical:
        run.stages_run.append("lexical")
        _lexical(run)
    if request.stages.numbers:
        run.stages_run.append("numbers")
        _numbers(run)
    if semantic is not None:
        run.stages_run.append("semantic")
        await _semantic(run, semantic)
    judge_threshold = audit_threshold = None
    if judge is not None:
        run.stages_run.append("judge")
        judge_threshold = await _judge(run, judge, "judge", request.thresholds.judge_p_yes)
    if audit_judge is not None and request.audit:
        run.stages_run.append("audit")
        audit_threshold = await _judge(run, audit_judge, "audit", request.thresholds.audit_p_yes)
    answer = _AnswerCheck()
    if answer_judge is not None and request.audit and request.reference_answers:
        run.stages_run.append("answer")
        answer = await _answer_check(run, answer_judge)
    if request.stages.lexical:
        _against_earlier_accepted(request, run.candidates)
    return VerifyResponse(
        results=[c.verdict(semantic.name if semantic else None) for c in run.candidates],
        semantic_check=semantic.name if semantic else "off",
        judge_model=judge.model if judge else None,
        judge_prompt_version=judge.prompt.version if judge else None,
        judge_threshold=judge_threshold,
        audit_judge_model=audit_judge.model if audit_judge and audit_threshold else None,
        audit_prompt_version=audit_judge.prompt.version
        if audit_judge and audit_threshold
        else None,
        audit_threshold=audit_threshold,
        answer_reference=answer.reference,
        answer_p_yes_original=answer.p_yes_original,
        stages_run=run.stages_run,
        model_calls=run.model_calls(),
    )


def _form(run: _Run) -> None:
    for candidate in run.pending():
        difference = form_difference(run.request.original, candidate.text)
        if difference:
            candidate.reject("form", difference)


def _direction(run: _Run) -> None:
    original = run.request.original
    for candidate in run.pending():
        difference = direction_difference(original, candidate.text)
        if not difference and run.request.task in ("factual", "choice"):
            difference = name_dropped(original, candidate.text)
        if difference:
            candidate.reject("direction", difference)


def _lexical(run: _Run) -> None:
    threshold = run.request.thresholds.overlap
    for candidate in run.pending():
        candidate.overlap, closest = _closest_text(
            candidate.text, run.request.original, run.request.accepted
        )
        if candidate.overlap >= threshold:
            candidate.reject(
                "lexical", f"overlap {candidate.overlap:.2f} >= {threshold} with {closest}"
            )


def _closest_text(candidate: str, original: str, accepted: list[str]) -> tuple[float, str]:
    """The candidate's highest overlap, and with which text, in words a reader can check (the
    original on a tie)."""
    scored = [(overlap(candidate, original), "the original")]
    scored += [(overlap(candidate, text), f"the accepted paraphrase {text!r}") for text in accepted]
    return max(scored, key=lambda score: score[0])


def _numbers(run: _Run) -> None:
    for candidate in run.pending():
        difference = quantity_difference(run.request.original, candidate.text)
        if difference:
            candidate.reject("numbers", f"numbers differ from the original: {difference}")


async def _semantic(run: _Run, semantic: SemanticStage) -> None:
    pending = run.pending()
    if not pending:
        return
    threshold = semantic.threshold(run.request.thresholds)
    try:
        scores = await semantic.scores(run.request.original, [c.text for c in pending])
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
    run: _Run, judge: Judge, stage: Literal["judge", "audit"], configured: float | None
) -> JudgeThreshold | None:
    """One judge question over the pending candidates, at the route's threshold; the threshold
    used (None when no candidate was left to ask)."""
    pending = run.pending()
    if not pending:
        return None
    try:
        threshold = await _threshold(run, judge, configured)
    except ServiceCallError as exc:
        error = f"the {stage} threshold could not be read: {exc.problem.detail or exc}"
        if exc.transient:
            raise JudgeUnavailable(error) from exc
        for candidate in pending:
            candidate.reject(stage, error, error=error)
        return None
    meter = judge.meter()
    run.calls.append(meter)
    request = run.request
    outcomes = await judge.judge_all(
        meter,
        request.original,
        [c.text for c in pending],
        bidirectional=request.bidirectional,
        logprobs=request.judge_logprobs,
        cache=request.cache,
        # every order's P(YES) is reported when the request asks for every stage's scores
        threshold=None if request.explain_all else threshold.value,
    )
    for candidate, outcome in zip(pending, outcomes, strict=True):
        asked = _Asked(outcome, outcome.passes(threshold.value))
        if stage == "judge":
            candidate.judge = asked
        else:
            candidate.audit = asked
        if outcome.error is not None:
            candidate.reject(stage, outcome.error, error=outcome.error)
        elif not asked.passed:
            candidate.reject(stage, _judge_reason(stage, outcome, threshold.value))
    return threshold


async def _threshold(run: _Run, judge: Judge, configured: float | None) -> JudgeThreshold:
    if configured is not None:
        return JudgeThreshold(value=configured, source="configured", origin="the request")
    if run.thresholds is not None:
        return await run.thresholds(judge.model, judge.prompt, run.request.task)
    return JudgeThreshold(
        value=METHOD_DEFAULT_THRESHOLD, source="method_default", origin="METHOD's default"
    )


def _judge_reason(stage: str, outcome: JudgeOutcome, threshold: float) -> str:
    name = "judge" if stage == "judge" else "audit question"
    if outcome.settled_early and outcome.p_yes is not None:
        return (
            f"{name}: P(yes) {outcome.p_yes:.3f} with the original first, so the mean cannot "
            f"reach {threshold:g}; the other order was not asked"
        )
    if outcome.p_yes is not None:
        return f"{name}: mean P(yes) {outcome.p_yes:.3f} < {threshold:g}"
    replies = ", ".join(f"{v.order}: {v.reply!r}" for v in outcome.votes)
    return f"{name} answered no ({replies})"


@dataclass(frozen=True)
class _AnswerCheck:
    """The reference answer the answer check held candidates to, and how sure the judge was
    that it answers the original."""

    reference: str | None = None
    p_yes_original: float | None = None


async def _answer_check(run: _Run, judge: Judge) -> _AnswerCheck:
    """The audit's answer check (docs/method.md §3, D23): the reference answer the judge finds
    most surely right for the original; when it is sure enough (``answer_known``: the judge
    knows the fact), a candidate for which it is much less sure of that answer (by
    ``answer_drop``) asks something else. A judge that does not know the fact holds no
    candidate to it."""
    pending = run.pending()
    if not pending:
        return _AnswerCheck()
    request, meter = run.request, judge.meter()
    run.calls.append(meter)
    limits = request.thresholds

    async def fits(question: str, answer: str) -> float:
        return await judge.fits(meter, question, answer, request.judge_logprobs, request.cache)

    try:
        known = await asyncio.gather(
            *(fits(request.original, answer) for answer in request.reference_answers)
        )
        p_original = max(known)
        reference = request.reference_answers[known.index(p_original)]
        if p_original < limits.answer_known:
            return _AnswerCheck(reference, p_original)
        found = await asyncio.gather(*(fits(c.text, reference) for c in pending))
    except ServiceCallError as exc:
        if exc.transient:
            raise JudgeUnavailable(f"the answer check's judge is down for now: {exc}") from exc
        error = f"the answer check failed: {exc.problem.detail or exc}"
        for candidate in pending:
            candidate.reject("answer", error, error=error)
        return _AnswerCheck()
    for candidate, p_yes in zip(pending, found, strict=True):
        candidate.answer_p_yes = p_yes
        if p_original - p_yes >= limits.answer_drop:
            candidate.reject(
                "answer",
                f"the answer {reference!r} is right for the original (P(yes) {p_original:.2f}) "
                f"but not for this rewording (P(yes) {p_yes:.2f}, {limits.answer_drop:g} or more "
                "lower)",
            )
    return _AnswerCheck(reference, p_original)


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
