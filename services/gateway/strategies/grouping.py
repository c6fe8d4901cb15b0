"""How paraphrase-vote groups its variants' answers: maths and choice by their exact value,
free-form answers by normalised text or by meaning (shared/answer_equivalence.py), the judge
held to its route's threshold for the answer-equivalence prompt as the gateway keeps it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from steadfast.shared.answer_equivalence import (
    ANSWERS_PROMPT_VERSION,
    RouteJudge,
    VerdictCache,
    group_answers,
)
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.calibration import METHOD_DEFAULT_THRESHOLD
from steadfast.shared.contracts.proxy import Clustering, Grouping
from steadfast.shared.metering import MeteredCaller

#: a route's P(YES) threshold for a judge prompt version
ThresholdLookup = Callable[[str, str], Awaitable[float]]


@dataclass
class Grouped:
    """A vote's answers grouped: one key per answer (None: no part in the vote), how they were
    grouped, and the judge calls that cost."""

    keys: list[str | None]
    clustering: Clustering
    judge_calls: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class AnswerGrouper:
    """One per gateway: its verdict cache serves every request."""

    thresholds: ThresholdLookup | None = None
    verdicts: VerdictCache = field(default_factory=VerdictCache)

    async def group(
        self,
        model: MeteredCaller,
        *,
        judge_route: str,
        question: str,
        task: Task,
        keys: Sequence[str | None],
        answers: Sequence[str | None],
        grouping: Grouping,
        cache: bool,
    ) -> Grouped:
        """``keys``: each variant's exact key (None: no vote); ``answers``: its answer text."""
        if task != "factual":
            return Grouped(list(keys), "exact")
        if grouping in ("normalized", "exact"):
            return Grouped(list(keys), "normalised")
        threshold = METHOD_DEFAULT_THRESHOLD
        if self.thresholds is not None:
            threshold = await self.thresholds(judge_route, ANSWERS_PROMPT_VERSION)
        voting = [
            answer if key is not None else None for key, answer in zip(keys, answers, strict=True)
        ]
        result = await group_answers(
            question,
            voting,
            judge=RouteJudge(model, judge_route, cache=cache),
            judge_route=judge_route,
            threshold=threshold,
            cache=self.verdicts if cache else None,
            cheap_steps=grouping == "semantic",
        )
        clustering: Clustering = "semantic" if grouping == "semantic" else "judge"
        return Grouped(result.keys, clustering, result.judge_calls, result.notes)
