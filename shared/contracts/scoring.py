"""Wire contracts of the scoring service — METHOD.md §1.3, §1.4, §2.2."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared.contracts.base import Contract
from shared.contracts.verify import Share, Task

Label = Literal["correct", "incorrect", "not_attempted", "invalid"]
Letter = Annotated[str, msgspec.Meta(pattern="^[A-Z]$")]


class Gold(Contract, kw_only=True):
    #: acceptable answers (factual)
    answers: list[str] | None = None
    #: answers that must not count as correct (TruthfulQA)
    incorrect_answers: list[str] | None = None
    #: the final answer (math)
    answer: str | None = None
    #: the correct option letter (choice)
    correct_option: Letter | None = None


class GradeItem(Contract, kw_only=True):
    question: Annotated[str, msgspec.Meta(min_length=1)]
    answer_text: str
    gold: Gold
    options: list[str] | None = None


class GradeRequest(Contract, kw_only=True):
    task: Task
    items: Annotated[list[GradeItem], msgspec.Meta(min_length=1, max_length=10000)]
    grader: Literal["reference", "llm"] = "reference"
    #: gateway routes of the LLM judges; their majority verdict wins
    judge_models: list[str] = msgspec.field(default_factory=lambda: ["local"])
    #: token-F1 at or above this counts as a match (reference grader)
    f1_threshold: Share = 0.8


class JudgeVote(Contract, kw_only=True):
    model: str
    label: Label
    raw: str


class GradeResult(Contract, kw_only=True):
    label: Label
    parsed: str | None
    reason: str
    normalized_value: str | None = None
    votes: list[JudgeVote] | None = None


class GradeResponse(Contract, kw_only=True):
    results: list[GradeResult]


class ConsistencyRecord(Contract, kw_only=True):
    item_id: Annotated[str, msgspec.Meta(min_length=1)]
    model: Annotated[str, msgspec.Meta(min_length=1)]
    #: 0 = the original question, 1..k = paraphrases
    variant: Annotated[int, msgspec.Meta(ge=0)]
    label: Label
    #: normalised answer value, for value-level metrics
    value: str | None = None
    tone: str | None = None
    kind: str | None = None


class ConsistencyOptions(Contract, kw_only=True):
    drop_majority_ties: bool = False
    strict_threshold: Share = 1.0
    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000
    seed: int = 0
    per_item: bool = False


class ConsistencyRequest(Contract, kw_only=True):
    records: Annotated[list[ConsistencyRecord], msgspec.Meta(min_length=1)]
    options: ConsistencyOptions = msgspec.field(default_factory=ConsistencyOptions)


class MetricValue(Contract, kw_only=True):
    """A per-model metric: its value (None when the denominator is 0), count and 95% CI."""

    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None


class PositionRecord(Contract, kw_only=True):
    item_id: Annotated[str, msgspec.Meta(min_length=1)]
    model: Annotated[str, msgspec.Meta(min_length=1)]
    #: "original" / "swapped" for two options; for k options, the permutation's index as text
    order: str
    #: the letter chosen, None when the reply was invalid
    choice: Letter | None
    #: the letter at which the correct option stood in this order
    correct: Letter
    condition: str | None = None


class PositionBiasOptions(Contract, kw_only=True):
    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000
    seed: int = 0


class PositionBiasRequest(Contract, kw_only=True):
    records: Annotated[list[PositionRecord], msgspec.Meta(min_length=1)]
    options: PositionBiasOptions = msgspec.field(default_factory=PositionBiasOptions)
