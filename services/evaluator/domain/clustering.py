"""Factual answers grouped by meaning before agreement and value-level consistency are counted
(shared/answer_equivalence.py): one model's answers to the wordings of one question, so that
"Paris" and "The capital of France is Paris." agree. Maths and choice answers keep their exact
values."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from steadfast.services.evaluator.domain.pipeline import Upstream, task_of
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.records import AnswerRecord
from steadfast.shared.answer_equivalence import ANSWERS_PROMPT_VERSION, RouteJudge, group_answers
from steadfast.shared.contracts.calibration import METHOD_DEFAULT_THRESHOLD
from steadfast.shared.contracts.evaluator import (
    AnswerGroupingSummary,
    EvaluationItem,
    EvaluationSettings,
)
from steadfast.shared.contracts.gateway import GenerateRequest, GenerateResponse, Usage

#: (item key, model) groups clustered at once
CLUSTER_CONCURRENCY = 4

#: item key → model → an answer's value as stored → its cluster's value
ClusterMap = dict[str, dict[str, dict[str, str]]]


@dataclass(frozen=True)
class ClusteredItem:
    """One item's answers to group by meaning, with the item and its key."""

    key: str
    item: EvaluationItem
    answers: Sequence[AnswerRecord]


@dataclass
class Clustered:
    """The grouping's outcome: its summary, and per item and model each answer value's cluster."""

    summary: AnswerGroupingSummary
    clusters: ClusterMap = field(default_factory=dict)


class _GatewayCaller:
    """The evaluator's gateway port as the judge's model caller."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        (outcome,) = await self._upstream.generate_batch([request])
        if outcome.text is None:
            raise outcome.error or UpstreamError("no result")
        return GenerateResponse(
            text=outcome.text,
            model=request.model,
            backend="gateway",
            finish_reason="stop",
            usage=Usage(),
            latency_s=0.0,
            cached=outcome.cached,
            logprobs=outcome.logprobs,
        )


async def cluster_answers(
    upstream: Upstream, settings: EvaluationSettings, items: Sequence[ClusteredItem]
) -> Clustered:
    """Each factual item's answers per model, grouped by meaning (``settings.grouping``
    ``semantic``); nothing changes under ``normalized`` or ``exact``."""
    judge_route = settings.answer_judge or settings.generator
    summary = AnswerGroupingSummary(
        clustering="semantic" if settings.grouping == "semantic" else "normalised",
        judge_model=judge_route if settings.grouping == "semantic" else None,
    )
    outcome = Clustered(summary)
    factual = [i for i in items if task_of(settings, i.item) == "factual"]
    if settings.grouping != "semantic" or not factual:
        return outcome
    threshold = await _threshold(upstream, judge_route, summary)
    judge = RouteJudge(_GatewayCaller(upstream), judge_route)
    limit = asyncio.Semaphore(CLUSTER_CONCURRENCY)

    async def one(clustered: ClusteredItem, model: str, answers: list[AnswerRecord]) -> None:
        texts = [a.text if a.value is not None else None for a in answers]
        async with limit:
            grouping = await group_answers(
                clustered.item.question,
                texts,
                judge=judge,
                judge_route=judge_route,
                threshold=threshold,
            )
        summary.judge_calls += grouping.judge_calls
        summary.notes.extend(n for n in grouping.notes if n not in summary.notes)
        mapping = outcome.clusters.setdefault(clustered.key, {}).setdefault(model, {})
        for answer, key in zip(answers, grouping.keys, strict=True):
            if answer.value is not None and key is not None and key != answer.value:
                mapping[answer.value] = key
                summary.merged += 1

    jobs = []
    for clustered in factual:
        by_model: dict[str, list[AnswerRecord]] = defaultdict(list)
        for answer in clustered.answers:
            if answer.text is not None:
                by_model[answer.model].append(answer)
        jobs += [one(clustered, model, answers) for model, answers in by_model.items()]
    await asyncio.gather(*jobs)
    return outcome


async def _threshold(upstream: Upstream, route: str, summary: AnswerGroupingSummary) -> float:
    try:
        threshold = await upstream.judge_threshold(route, ANSWERS_PROMPT_VERSION)
    except UpstreamError as error:
        summary.notes.append(f"the answer judge's threshold could not be read ({error.reason})")
        summary.threshold = METHOD_DEFAULT_THRESHOLD
        return METHOD_DEFAULT_THRESHOLD
    summary.threshold = threshold.value
    return threshold.value


def with_clusters(
    answers: Sequence[AnswerRecord], clusters: ClusterMap, key_of: dict[int, str]
) -> list[AnswerRecord]:
    """The answers with each value replaced by its cluster's (``key_of``: position → item
    key); the records are copied, the stored ones stay as they are."""
    clustered = []
    for answer in answers:
        mapping = clusters.get(key_of.get(answer.position, ""), {}).get(answer.model, {})
        if answer.value in mapping:
            answer = AnswerRecord(**{**answer.__dict__, "value": mapping[answer.value]})
        clustered.append(answer)
    return clustered
