"""The evaluator's ``POST /v1/position-bias``: a model asked the same choice question with its
options in every order (docs/method.md §2)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import (
    MAX_ALSO_CORRECT,
    STORABLE_TEXT,
    AnswerText,
    Contract,
    LanguageCode,
    StoredCount,
    StoredSeed,
)
from steadfast.shared.contracts.evaluator import Identifier, InstructionRole, ModelName
from steadfast.shared.contracts.scoring import Letter, MetricValue, ModelMetrics, PairCounts

#: docs/method.md §2.1: low — context shown, plausible distractor; medium — the same without the
#: context; high — two out-of-context distractors and no correct option
Condition = Literal["low", "medium", "high"]
CONDITIONS: tuple[Condition, ...] = ("low", "medium", "high")


class PositionItem(Contract, kw_only=True):
    """A question with its correct answer (the distractors are written when not given), or a
    multiple-choice question with its ``options`` and ``correct_option``."""

    id: Identifier | None = None
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000, pattern=STORABLE_TEXT)]
    #: a passage the question is about: shown in the low condition only
    context: Annotated[str, msgspec.Meta(max_length=50000, pattern=STORABLE_TEXT)] | None = None
    #: the correct answer of a two-option item
    answer: AnswerText | None = None
    #: other answers that are also correct (aliases of ``answer``): no distractor may be one
    also_correct: Annotated[list[AnswerText], msgspec.Meta(max_length=MAX_ALSO_CORRECT)] = (
        msgspec.field(default_factory=list)
    )
    #: the wrong option of a two-option item; written by ``generator`` when absent
    distractor: AnswerText | None = None
    #: the options of a k-option item, asked in every cyclic order (no distractor is written)
    options: Annotated[list[str], msgspec.Meta(min_length=2, max_length=26)] | None = None
    correct_option: Letter | None = None
    #: the language the item is asked in (default: the request's ``language``, else detected)
    language: LanguageCode | None = None


class PositionBiasEvaluate(Contract, kw_only=True):
    """``POST /v1/position-bias``: the models and choice items to ask in every option order,
    and how the distractors are written."""

    #: one model (gateway route) ...
    model: ModelName | None = None
    #: ... or several, asked the same option orders
    models: Annotated[list[ModelName], msgspec.Meta(max_length=20)] | None = None
    #: the items, inline ...
    items: Annotated[list[PositionItem], msgspec.Meta(min_length=1)] | None = None
    #: ... or a stored dataset's (``answer``/``answers`` give the correct answer; multiple-choice
    #: items keep their options)
    dataset_id: Identifier | None = None
    #: only the first ``limit`` items of the dataset
    limit: StoredCount | None = None
    #: the conditions to run, each where an item allows it (low needs a context, high a
    #: two-option item); default: every one
    conditions: Annotated[list[Condition], msgspec.Meta(min_length=1)] | None = None
    #: gateway route that writes the distractors
    generator: ModelName = "local"
    #: seed of the distractor writer (a fixed seed makes a re-run cost no model calls)
    seed: StoredSeed = 0
    #: cap on the reply of the model under test (an option letter)
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] = 8
    system_prompt: Annotated[str, msgspec.Meta(max_length=20000)] | None = None
    #: where the instruction goes; default "system" when a model is a self-paraphrase model
    instruction_role: InstructionRole | None = None
    #: the language of the items (each may name its own): the instruction, and the distractor
    #: writer's prompt, are in it; unset: detected per item (English and Italian prompts; other
    #: languages are asked with the English ones)
    language: LanguageCode | None = None
    #: docs/method.md §2.3 balanced position calibration: ask each reply's first-token
    #: log-probabilities and choose the option whose probability, averaged over the orders, is
    #: highest (the route must support ``top_logprobs``: local and openai do)
    calibrate: bool = False
    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000
    #: ask the models under test without the gateway's response cache (monitors' runs)
    fresh_answers: bool = False


class OrderAnswer(Contract, kw_only=True):
    """One model's reply to one option order."""

    #: ``order[j]``: the index (in the trial's ``options``) of the option shown at letter j
    order: list[int]
    text: str | None = None
    #: the letter replied, parsed strictly (docs/method.md §2.1); None when invalid or failed
    choice: Letter | None = None
    #: the index of the option chosen, in the trial's ``options``
    chosen: int | None = None
    #: with ``calibrate``: the probability of each option's letter as the first token, by the
    #: option's index in the trial's ``options``
    option_probabilities: list[float] | None = None
    error: str | None = None


class TrialModelResult(Contract, kw_only=True):
    """One model's replies to every option order of a trial, and whether they agree."""

    model: str
    answers: list[OrderAnswer]
    #: every order chose the same option (by content); None when a reply is missing
    consistent: bool | None = None
    #: docs/method.md §2.3 swap-and-agree: the option every order agreed on, else None
    agreed: int | None = None
    #: docs/method.md §2.3 permutation vote: the option most orders chose (ties: None)
    vote: int | None = None
    #: docs/method.md §2.3 balanced position calibration (with ``calibrate``): the option with the
    #: highest probability averaged over the orders (ties or no probabilities: None)
    calibrated: int | None = None


class Trial(Contract, kw_only=True):
    """One item under one condition: its options and every model's reply to every order."""

    item_id: str
    condition: Condition
    question: str
    context_shown: bool
    options: list[str]
    #: the index of the correct option; in the high condition, of the reference option the
    #: pairs are classified against (there is no correct one)
    reference: int
    #: "given" or the distractor writer's prompt version
    distractors: str
    #: the language the model was asked in (the instruction's; ``en`` or ``it``)
    language: str = "en"
    models: list[TrialModelResult]


class SkippedTrial(Contract, kw_only=True):
    """An item/condition pair that was not run, with the reason."""

    item_id: str
    condition: Condition
    reason: str


class PositionBiasEvaluation(Contract, kw_only=True):
    """The result of a positional-bias evaluation: every trial and the metrics per model,
    overall and per condition (docs/method.md §2.2)."""

    trials: list[Trial]
    #: item/condition pairs not run, with the reason (a distractor could not be written...)
    skipped: list[SkippedTrial]
    #: ``{model: {PF, abs_PF, PC, acc_correct_first, ...}}`` over every condition (scoring's
    #: position-bias metrics; empty when no reply could be scored). In the high condition the
    #: "correct" option is the first decoy, so the accuracy-like numbers over every condition
    #: mix in a preference for it; PF and PC keep their meaning (see ``by_condition``)
    models: ModelMetrics = msgspec.field(default_factory=dict)
    by_condition: dict[str, ModelMetrics] = msgspec.field(default_factory=dict)
    pairs: dict[str, PairCounts] = msgspec.field(default_factory=dict)
    recall_by_position: dict[str, dict[str, MetricValue]] = msgspec.field(default_factory=dict)
    #: ``{model: replies that failed after every retry}``: they count in no metric (their
    #: reason is on the reply)
    failed_replies: dict[str, int] = msgspec.field(default_factory=dict)
    #: ``{language: items}``: the languages the models were asked in
    languages: dict[str, int] = msgspec.field(default_factory=dict)
    #: what each metric is counted over (its ``n``): PC and the fluctuation rate, say, rest on
    #: different units
    metric_sets: dict[str, str] = msgspec.field(default_factory=dict)
    #: what the caller should know: a model that could not be calibrated, metrics that failed
    notes: list[str] = msgspec.field(default_factory=list)
    elapsed_s: float = 0.0


#: a position-bias job runs whole: it has no partial progress to show
PositionJobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class PositionBiasJob(Contract, kw_only=True):
    """``POST /v1/position-bias/jobs``: the evaluation of ``POST /v1/position-bias`` for more
    answers than a request can wait for, run by the evaluator's workers; the result is kept."""

    id: str
    status: PositionJobStatus
    #: the answers it asks for (option orders × conditions × models, at most)
    order_count: int
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    #: times a worker started it (more than one: a worker stopped and another took it over)
    attempts: int = 0
    #: why it failed (a failing upstream service after every retry)
    error: str | None = None
    result: PositionBiasEvaluation | None = None
