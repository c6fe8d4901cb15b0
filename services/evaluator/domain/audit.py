"""The audit (docs/method.md §1.4): before the metrics, a paraphrase whose answer disagrees with the
original's or with its set's majority, for any model, is verified again with a stricter check
(quantity invariance, both judge orders at the route's calibrated threshold, the judge's
second, differently worded question, and, for a factual item, whether the item's answer still
answers it). One that fails is removed from its set for every model,
with its reason, so that no reported flip rests on a paraphrase that changed the question. A
paraphrase of a factual item that states the item's answer is removed too, whatever its
answers (it would hide a flip rather than make one).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from steadfast.services.evaluator.domain.item_results import gold_texts
from steadfast.services.evaluator.domain.pipeline import Upstream, task_of, with_retries
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.answers import stated_answer
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import AuditSummary, EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.gateway import ModelCalls
from steadfast.shared.contracts.verify import VerifyRequest, VerifyResponse, VerifyStages
from steadfast.shared.metering import sum_calls

#: verification requests of one audit in flight at once
AUDIT_CONCURRENCY = 4
#: docs/method.md §1.4's tie order of labels: a tied majority goes to the first of these present
_LABEL_ORDER = ("correct", "incorrect", "not_attempted")


@dataclass(frozen=True)
class AuditedItem:
    """An item's question and paraphrase set, with the answers its models gave."""

    key: str
    item: EvaluationItem
    paraphrase_set: ParaphraseSet
    answers: Sequence[AnswerRecord]


@dataclass
class AuditOutcome:
    """What the audit found: its summary and the paraphrases it removed, with why."""

    summary: AuditSummary
    #: item key → paraphrase variant (1..k) → why it was removed
    removed: dict[str, dict[int, str]] = field(default_factory=dict)


def _answer_key(answer: AnswerRecord, by_label: bool) -> str | None:
    return answer.label if by_label else answer.value


def disagreeing_variants(answers: Sequence[AnswerRecord]) -> set[int]:
    """The paraphrase variants whose answer differs from the original's or from the majority
    of the paraphrases' answers, for any model: labels where the answers were graded, else the
    normalised answer values."""
    by_model: dict[str, list[AnswerRecord]] = defaultdict(list)
    for answer in answers:
        if answer.text is not None:
            by_model[answer.model].append(answer)
    chosen: set[int] = set()
    for model_answers in by_model.values():
        by_label = any(a.label is not None for a in model_answers)
        keys = {a.variant: _answer_key(a, by_label) for a in model_answers}
        original = keys.pop(0, None)
        paraphrases = {variant: key for variant, key in keys.items() if key is not None}
        majority = _majority(list(paraphrases.values()), by_label)
        chosen |= {v for v, key in paraphrases.items() if key != original or key != majority}
    return chosen


def _majority(keys: list[str], by_label: bool) -> str | None:
    counts = Counter(keys)
    if not counts:
        return None
    top = max(counts.values())
    tied = [key for key, count in counts.items() if count == top]
    if by_label:
        ordered = [label for label in _LABEL_ORDER if label in tied]
        return ordered[0] if ordered else tied[0]
    return next(key for key in keys if key in tied)  # the value seen first


def stated_answers(settings: EvaluationSettings, audited: AuditedItem) -> dict[int, str]:
    """The paraphrases of a factual item that state one of its gold answers, which the
    original does not (``shared.answers.stated_answer``). A set made with the item's answers
    (``ParaphraseRequest.answers``) has none; one made without them, or given, may."""
    if task_of(settings, audited.item) != "factual":
        return {}
    golds = gold_texts(audited.item)
    stated = {}
    for variant, paraphrase in enumerate(audited.paraphrase_set.paraphrases, start=1):
        if found := stated_answer(audited.item.question, paraphrase.text, golds):
            stated[variant] = f"answer: the paraphrase states the answer ({found!r})"
    return stated


def variants_to_check(settings: EvaluationSettings, audited: AuditedItem) -> list[int]:
    count = len(audited.paraphrase_set.paraphrases)
    if settings.audit == "all":
        return list(range(1, count + 1))
    return sorted(v for v in disagreeing_variants(audited.answers) if 1 <= v <= count)


def audit_request(
    settings: EvaluationSettings, item: EvaluationItem, candidates: list[str]
) -> VerifyRequest:
    """The stricter check: numbers, both judge orders at the route's calibrated threshold (the
    request sets none, whatever the set was verified with), and the audit's second question."""
    task = task_of(settings, item)
    return VerifyRequest(
        original=item.question,
        candidates=candidates,
        stages=VerifyStages(lexical=False, numbers=True, judge=True, semantic="off"),
        judge_model=settings.verify.judge_model or settings.generator,
        bidirectional=True,
        judge_logprobs=True,
        task=task,
        audit=True,
        audit_judge_model=settings.audit_judge,
        reference_answers=reference_answers(item) if task == "factual" else [],
    )


#: the item's answers the audit's answer check asks about, at most (one judge call each)
MAX_REFERENCE_ANSWERS = 3
_MAX_REFERENCE_CHARS = 2000


def reference_answers(item: EvaluationItem) -> list[str]:
    """A factual item's answers for the audit's answer check: its best answer first. A maths
    item gets none: the judge would have to solve the problem to say."""
    ordered = [item.answer] if item.answer else []
    ordered += [a for a in item.answers or [] if a != item.answer]
    usable = [a for a in ordered if a.strip() and len(a) <= _MAX_REFERENCE_CHARS]
    return usable[:MAX_REFERENCE_ANSWERS]


async def run_audit(
    upstream: Upstream,
    settings: EvaluationSettings,
    items: Sequence[AuditedItem],
    retry: Backoff,
) -> AuditOutcome:
    outcome = AuditOutcome(summary=AuditSummary(mode=settings.audit))
    if settings.audit == "off":
        return outcome
    limit = asyncio.Semaphore(AUDIT_CONCURRENCY)
    calls: list[ModelCalls] = []

    async def one(audited: AuditedItem) -> None:
        stated = stated_answers(settings, audited)
        if stated:  # removed without asking the judge: the text says it
            outcome.summary.checked += len(stated)
            outcome.summary.removed += len(stated)
            outcome.removed.setdefault(audited.key, {}).update(stated)
        variants = [v for v in variants_to_check(settings, audited) if v not in stated]
        if not variants:
            return
        texts = [audited.paraphrase_set.paraphrases[v - 1].text for v in variants]
        request = audit_request(settings, audited.item, texts)
        async with limit:
            try:
                response = await with_retries(lambda: upstream.verify(request), retry)
            except UpstreamError as error:
                outcome.summary.unchecked += len(variants)
                outcome.summary.failures.append(f"{audited.key}: {error.reason}")
                return
        calls.append(response.model_calls)
        _record(outcome, audited.key, variants, response)

    await asyncio.gather(*(one(audited) for audited in items))
    outcome.summary.model_calls = sum_calls(calls)
    return outcome


def _record(outcome: AuditOutcome, key: str, variants: list[int], response: VerifyResponse) -> None:
    summary = outcome.summary
    summary.judge_model = summary.judge_model or response.judge_model
    summary.audit_judge_model = summary.audit_judge_model or response.audit_judge_model
    summary.judge_threshold = summary.judge_threshold or response.judge_threshold
    summary.audit_threshold = summary.audit_threshold or response.audit_threshold
    for variant, verdict in zip(variants, response.results, strict=True):
        if verdict.error is not None:  # could not be checked: kept, and said so
            summary.unchecked += 1
            summary.failures.append(f"{key}, paraphrase {variant}: {verdict.error}")
            continue
        summary.checked += 1
        if not verdict.accepted:
            summary.removed += 1
            stage = verdict.deciding_stage or "audit"
            outcome.removed.setdefault(key, {})[variant] = f"{stage}: {verdict.reason}"


def without_removed(
    answers: Sequence[AnswerRecord], removed: dict[int, str] | None
) -> list[AnswerRecord]:
    """The answers the metrics count: none to a paraphrase the audit removed."""
    if not removed:
        return list(answers)
    return [a for a in answers if a.variant not in removed]


def audit_note(outcome: AuditOutcome) -> str | None:
    """What the audit could not do, in words (None when it checked all it had to)."""
    summary = outcome.summary
    if not summary.unchecked:
        return None
    first = f"; the first: {summary.failures[0]}" if summary.failures else ""
    return f"the audit could not check {summary.unchecked} paraphrases, kept in their sets{first}"
