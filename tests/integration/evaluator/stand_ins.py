"""In-process stand-ins for the services the evaluator calls (the ``Upstream`` port)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.domain.fan_out import new_evaluation
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import Generated, ParaphraseSet
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.gateway import GenerateRequest, ModelCalls
from steadfast.shared.contracts.perturb import Paraphrase, ParaphraseRequest, ParaphraseResponse
from steadfast.shared.contracts.scoring import ConsistencyRequest, GradeRequest, GradeResult
from steadfast.shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyResponse

#: ``(model, question)`` → the answer text, a whole outcome (a reply cut at its token limit,
#: say), or None to fail the call
Answerer = Callable[[str, str], str | Generated | None]
#: how the answer-equivalence judge's system prompt starts
ANSWER_JUDGE = "You compare two answers"


async def create_evaluation(
    store: EvaluationStore,
    *,
    settings: EvaluationSettings,
    items: list[EvaluationItem],
    models: list[str],
    reuse_sets: dict[str, ParaphraseSet] | None = None,
    **kwargs: Any,
) -> tuple[EvaluationRow, bool]:
    """``store.create`` with the items and answers the domain makes of ``items``, as a
    submission stores them."""
    new_items, answers = new_evaluation(settings, items, models, reuse_sets or {})
    return await store.create(
        settings=settings, items=new_items, answers=answers, models=models, **kwargs
    )


def question_of(request: GenerateRequest) -> str:
    content = request.messages[-1].content
    return content.rsplit("Question: ", 1)[-1]


class StandInUpstream:
    """Paraphrases are "<question> (variant j)"; ``answerer(model, question)`` gives the answer
    (text or outcome), or None to fail the call. Completed calls are counted per (model,
    question); the answers sent to grading are kept in ``graded``."""

    def __init__(
        self, answerer: Answerer, *, latency_s: float = 0.0, hang_after: int | None = None
    ) -> None:
        self.answerer = answerer
        self.latency_s = latency_s
        #: after this many answers every call hangs, as if the worker had died mid-call
        self.hang_after = hang_after
        #: the gateway's model names; None: it cannot say (nothing is checked up front)
        self.routes: set[str] | None = None
        self.answered: Counter[tuple[str, str]] = Counter()
        #: answer requests by their ``cache`` flag (False: the gateway's cache bypassed)
        self.cache_flags: Counter[bool] = Counter()
        self.paraphrased: Counter[str] = Counter()
        self.grade_calls = 0
        self.graded: list[str] = []
        #: the audit's verdict on a paraphrase: why it fails, or None
        self.audit_rejects: Callable[[str, str], str | None] = lambda _question, _text: None
        self.audited: list[tuple[str, list[str]]] = []
        #: the answer-equivalence judge's reply to a pair of answers (NO by default)
        self.answer_judge: Callable[[str], str] = lambda _pair: "NO"
        self.answer_judged: list[str] = []
        #: calls hanging now (``hang_after`` reached)
        self.hanging = 0
        #: the seconds a question's set reports it took (0 by default), and the time budget
        #: each set was asked with
        self.paraphrase_elapsed: Callable[[str], float] = lambda _question: 0.0
        self.time_budgets: dict[str, float] = {}
        #: questions whose set ends one paraphrase short, out of time
        self.incomplete: set[str] = set()

    async def route_names(self) -> set[str] | None:
        return self.routes

    async def paraphrase(self, request: ParaphraseRequest) -> ParaphraseResponse:
        await asyncio.sleep(self.latency_s)
        self.paraphrased[request.question] += 1
        self.time_budgets[request.question] = request.time_budget_s
        accepted = [
            Paraphrase(
                text=f"{request.question} (variant {j})",
                kind="plain" if j % 2 else "toned",
                tone=None if j % 2 else "formal",
                generator=request.generator,
                seed=request.seed,
                prompt_version="stand-in",
            )
            for j in range(1, request.k + 1)
        ]
        short = request.question in self.incomplete
        if short:
            accepted = accepted[:-1]
        return ParaphraseResponse(
            question=request.question,
            accepted=accepted,
            rejected=[],
            candidates_generated=request.k,
            rounds=1,
            elapsed_s=self.paraphrase_elapsed(request.question),
            complete=not short,
            incomplete_reason=f"time budget of {request.time_budget_s:g} s ran out"
            if short
            else None,
            prompt_version="stand-in",
            semantic_check="embedding",
        )

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]:
        await asyncio.sleep(self.latency_s)
        if self.hang_after is not None and sum(self.answered.values()) >= self.hang_after:
            self.hanging += 1
            await asyncio.Event().wait()
        outcomes = []
        for request in requests:
            if request.messages[0].content.startswith(ANSWER_JUDGE):
                self.answer_judged.append(request.messages[-1].content)
                outcomes.append(Generated(text=self.answer_judge(request.messages[-1].content)))
                continue
            question = question_of(request)
            self.cache_flags[request.cache] += 1
            text = self.answerer(request.model, question)
            if text is None:
                outcomes.append(Generated(error=UpstreamError("upstream_error: stand-in 500")))
            else:
                self.answered[(request.model, question)] += 1
                outcomes.append(text if isinstance(text, Generated) else Generated(text=text))
        return outcomes

    async def verify(self, request: VerifyRequest) -> VerifyResponse:
        """The audit's check: ``audit_rejects(question, paraphrase)`` names why it fails, or
        None (every paraphrase passes by default)."""
        self.audited.append((request.original, list(request.candidates)))
        results = []
        for text in request.candidates:
            reason = self.audit_rejects(request.original, text)
            results.append(
                CandidateVerdict(
                    text=text,
                    accepted=reason is None,
                    deciding_stage="audit" if reason else None,
                    reason=reason,
                )
            )
        calls = ModelCalls(calls=4 * len(request.candidates))
        return VerifyResponse(results=results, semantic_check="off", model_calls=calls)

    async def judge_threshold(self, route: str, prompt_version: str) -> JudgeThreshold:
        return JudgeThreshold(value=0.5, source="method_default", origin="stand-in")

    async def grade(self, request: GradeRequest) -> list[GradeResult]:
        self.grade_calls += 1
        results = []
        for item in request.items:
            self.graded.append(item.answer_text)
            gold = (item.gold.answers or [item.gold.answer or ""])[0]
            label = "correct" if item.answer_text.strip().lower() == gold.lower() else "incorrect"
            results.append(GradeResult(label=label, parsed=item.answer_text, reason="stand-in"))
        return results

    async def consistency(self, request: ConsistencyRequest) -> dict[str, Any]:
        """Only A_orig and the paraphrase kinds each model's records carry (enough to check
        what reaches scoring); the real formulas are scoring's."""
        originals: dict[str, list[int]] = {}
        kinds: dict[str, dict[str, dict[str, Any]]] = {}
        for record in request.records:
            if record.variant == 0:
                originals.setdefault(record.model, []).append(int(record.label == "correct"))
            elif record.kind is not None:
                kinds.setdefault(record.model, {})[record.kind] = {"n": None}
        return {
            "flips_by_kind": kinds,
            "models": {
                model: {"A_orig": {"value": sum(v) / len(v), "n": len(v)}}
                for model, v in originals.items()
            },
            "items": [
                {"item_id": r.item_id, "model": r.model, "match": True}
                for r in request.records
                if r.variant == 0
            ],
        }
