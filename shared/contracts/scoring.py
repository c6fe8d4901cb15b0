"""Wire contracts of the scoring service — docs/method.md §1.3, §1.4, §2.2."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import Contract, ReportFormat, RouteName, Task
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.verify import Share

Label = Literal["correct", "incorrect", "not_attempted", "invalid"]
Letter = Annotated[str, msgspec.Meta(pattern="^[A-Z]$")]


class Gold(Contract, kw_only=True):
    """The reference answer of a question, in the field its task reads."""

    #: acceptable answers (factual)
    answers: list[str] | None = None
    #: answers that must not count as correct (TruthfulQA)
    incorrect_answers: list[str] | None = None
    #: the final answer (math)
    answer: str | None = None
    #: the correct option letter (choice)
    correct_option: Letter | None = None


class GradeItem(Contract, kw_only=True):
    """One answer to grade against its question's reference answer."""

    #: the original question (the grader sees it even for a paraphrase's answer)
    question: Annotated[str, msgspec.Meta(min_length=1)]
    answer_text: str
    gold: Gold
    #: the options of a choice item; their number bounds the letters accepted (default A–Z)
    options: Annotated[list[str], msgspec.Meta(min_length=2, max_length=26)] | None = None


#: judges of one grade request: a majority of 9 votes is already more than a job can afford
MAX_JUDGES = 9


class GradeRequest(Contract, kw_only=True):
    """``POST /v1/grade``: answers to label correct, incorrect, not attempted or invalid
    (docs/method.md §1.3)."""

    task: Task
    items: Annotated[list[GradeItem], msgspec.Meta(min_length=1, max_length=10000)]
    grader: Literal["reference", "llm"] = "reference"
    #: gateway routes of the LLM judges; their majority verdict wins
    judge_models: Annotated[list[RouteName], msgspec.Meta(max_length=MAX_JUDGES)] = msgspec.field(
        default_factory=lambda: ["local"]
    )
    #: token-F1 at or above this counts as a match (reference grader); above 0, or any answer
    #: sharing no word with the gold one would match
    f1_threshold: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 0.8


class JudgeVote(Contract, kw_only=True):
    """One LLM judge's label for an answer, with its raw reply."""

    model: str
    label: Label
    raw: str


class GradeResult(Contract, kw_only=True):
    """An answer's label, what was read from it, and why."""

    label: Label
    #: what was read from the answer: the final maths answer, the option letter, the normalised
    #: factual answer; None when nothing could be parsed
    parsed: str | None
    reason: str
    #: canonical value for value-level metrics (maths) and answer grouping
    normalized_value: str | None = None
    votes: list[JudgeVote] | None = None


class GradeResponse(Contract, kw_only=True):
    """The labels, in the items' order, and the grader that gave them."""

    results: list[GradeResult]
    grader: Literal["reference", "llm"]
    judge_models: list[str] | None = None


class ConsistencyRecord(Contract, kw_only=True):
    """One model's graded answer to one wording (original or paraphrase) of a question."""

    item_id: Annotated[str, msgspec.Meta(min_length=1)]
    model: Annotated[str, msgspec.Meta(min_length=1)]
    #: 0 = the original question, 1..k = paraphrases
    variant: Annotated[int, msgspec.Meta(ge=0, le=1_000_000_000)]
    label: Label
    #: normalised answer value, for value-level metrics
    value: str | None = None
    tone: str | None = None
    kind: str | None = None


class ConsistencyOptions(Contract, kw_only=True):
    """How the consistency metrics are computed: tie handling, the strict threshold, the
    bootstrap, and whether per-question values are returned."""

    drop_majority_ties: bool = False
    strict_threshold: Share = 1.0
    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000
    seed: int = 0
    per_item: bool = False


class ConsistencyRequest(Contract, kw_only=True):
    """``POST /v1/metrics/consistency``: graded answers to compute docs/method.md §1.4's
    metrics over."""

    records: Annotated[list[ConsistencyRecord], msgspec.Meta(min_length=1)]
    options: ConsistencyOptions = msgspec.field(default_factory=ConsistencyOptions)


#: docs/method.md §1.4 per-model consistency metrics, under exactly these names, in report order
METRIC_NAMES = (
    "A_orig",
    "A_expected",
    "A_majority",
    "mismatch_rate",
    "iid_mismatch",
    "mode_share",
    "normalized_entropy",
    "A_any",
    "A_any_incl_orig",
    "A_strict",
    "flip_rate",
    "recovery_rate",
    "conflict_rate",
    "conflict_rate_given_orig_correct",
    "conflict_rate_given_orig_not_correct",
    "A_any_given_orig_not_correct",
)


class MetricValue(Contract, kw_only=True):
    """A per-model metric: its value (None when the denominator is 0), the count it is computed
    over (its denominator) and the 95% bootstrap interval over questions (None without one)."""

    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None


#: ``{model: {metric name: value}}``
ModelMetrics = dict[str, dict[str, MetricValue]]


class SlotAccuracy(Contract, kw_only=True):
    """Accuracy of each paraphrase position j (1..k) over the data set."""

    min: float | None
    max: float | None
    by_slot: dict[str, MetricValue]


class GroupFlips(Contract, kw_only=True):
    """Paraphrase-level changes for one paraphrase kind or tone."""

    #: #(original correct ∧ this paraphrase not correct) / #(original correct)
    flip_rate: MetricValue
    #: #(paraphrase label ≠ original label) / #(paraphrases)
    change_rate: MetricValue


class ModelCounts(Contract, kw_only=True):
    """How many questions of one model count in its metrics, and why the others do not."""

    questions: int
    #: questions the means are taken over
    used: int
    #: answers labelled ``invalid`` (original and paraphrases), left out of p_c and k
    invalid_answers: int
    #: questions skipped: original invalid or missing, or no paraphrase with a valid label
    skipped: int
    skipped_original_invalid: int
    skipped_original_missing: int
    skipped_no_valid_paraphrase: int
    #: questions whose paraphrase majority is tied (dropped when ``drop_majority_ties``)
    majority_ties: int
    dropped_ties: int


class ItemConsistency(Contract, kw_only=True):
    """Per-question values of docs/method.md §1.4 for one (question, model)."""

    item_id: str
    model: str
    #: why the question was skipped or dropped; None when it counts
    excluded: Literal["original_invalid", "original_missing", "no_valid_paraphrase", "tie"] | None
    original_label: Label | None
    k: int
    p: dict[str, float]
    majority_label: Label | None = None
    tie: bool = False
    match: bool | None = None
    iid_mismatch: float | None = None
    mode_share: float | None = None
    entropy: float | None = None
    normalized_entropy: float | None = None
    distinct: int = 0
    invalid: int = 0
    #: value level (when values were given)
    majority_value: str | None = None
    value_tie: bool | None = None
    value_match: bool | None = None
    value_mode_share: float | None = None
    distinct_values: int | None = None


class ConsistencyResponse(Contract, kw_only=True):
    """docs/method.md §1.4's metrics per model, with their counts, per-slot accuracy, flips
    by paraphrase kind and tone, and the settings used."""

    #: ``{model: {A_orig, A_expected, ...: MetricValue}}`` — docs/method.md §1.4 names
    models: ModelMetrics
    counts: dict[str, ModelCounts]
    slot_accuracy: dict[str, SlotAccuracy]
    #: ``{model: {value_mismatch_rate, ...}}`` when answer values were given
    value_level: ModelMetrics | None
    flips_by_kind: dict[str, dict[str, GroupFlips]]
    flips_by_tone: dict[str, dict[str, GroupFlips]]
    settings: ConsistencyOptions
    items: list[ItemConsistency] | None = None


class PositionRecord(Contract, kw_only=True):
    """One model's reply to one option order of a choice item."""

    item_id: Annotated[str, msgspec.Meta(min_length=1)]
    model: Annotated[str, msgspec.Meta(min_length=1)]
    #: "original" / "swapped" for two options; for k options, the permutation's index as text
    order: str
    #: the letter chosen, None when the reply was invalid
    choice: Letter | None
    #: the letter at which the correct option stood in this order; the passes of an item are
    #: told apart by it (pass 1 = correct at A, pass 2 = correct at B)
    correct: Letter
    #: data condition (uncertainty level: low / medium / high)
    condition: str | None = None
    #: options of the item; k > 2 uses cyclic permutations, one record per permutation
    n_options: Annotated[int, msgspec.Meta(ge=2, le=26)] = 2


class PositionBiasOptions(Contract, kw_only=True):
    """How the positional-bias metrics' bootstrap intervals are drawn."""

    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000
    seed: int = 0


class PositionBiasRequest(Contract, kw_only=True):
    """``POST /v1/metrics/position-bias``: replies to compute docs/method.md §2.2's
    positional-bias metrics over."""

    records: Annotated[list[PositionRecord], msgspec.Meta(min_length=1)]
    options: PositionBiasOptions = msgspec.field(default_factory=PositionBiasOptions)


class PairCounts(Contract, kw_only=True):
    """Complete pairs by (letter in the pass with the correct option at A, at B)."""

    AB: int
    BA: int
    AA: int
    BB: int


#: the units each position-bias metric is counted over (its ``n``): they differ, so PC and the
#: fluctuation rate of one model may rest on different items
POSITION_METRIC_SETS: dict[str, str] = {
    "PF": "complete units: every option order answered validly",
    "abs_PF": "complete units",
    "PC": "complete units",
    "acc_correct_first": "complete units",
    "acc_correct_second": "complete units",
    "n_pairs": "complete units",
    "recall_std": "complete units (a recall per position of the correct option)",
    "invalid_rate": "every reply",
    "fluctuation_rate": "units with at least two valid replies, complete or not",
}


class PositionBiasResponse(Contract, kw_only=True):
    """docs/method.md §2.2's positional-bias metrics per model, overall and per condition."""

    #: ``{model: {PF, abs_PF, PC, acc_correct_first, acc_correct_second, invalid_rate, n_pairs,
    #: recall_std, fluctuation_rate}: MetricValue}`` over every condition
    models: ModelMetrics
    #: ``{condition: {model: {...}}}`` when records carry a condition
    by_condition: dict[str, ModelMetrics]
    pairs: dict[str, PairCounts]
    #: ``{model: {letter: recall}}``: accuracy when the correct option stands at that letter
    recall_by_position: dict[str, dict[str, MetricValue]]
    settings: PositionBiasOptions
    #: ``{model: count}``: items (per condition) with an order not answered, left out of every
    #: metric but ``invalid_rate``
    incomplete_items: dict[str, int] = msgspec.field(default_factory=dict)
    #: what each metric is counted over (its ``n``)
    metric_sets: dict[str, str] = msgspec.field(default_factory=lambda: dict(POSITION_METRIC_SETS))


# --- reports -------------------------------------------------------------------------------

SettingValue = str | int | float | bool | None


class ReportVariant(Contract, kw_only=True):
    """One wording of a question: 0 is the original, 1..k the paraphrases."""

    index: Annotated[int, msgspec.Meta(ge=0)]
    text: str
    #: "original", "plain" or "toned"
    kind: str | None = None
    tone: str | None = None
    #: why the audit removed this paraphrase (its answers are in no metric)
    audited_out: str | None = None
    #: "given" for a paraphrase the item brought (else generated)
    provenance: str | None = None


class ReportAnswer(Contract, kw_only=True):
    """One model's answer to one wording of a question in a report, with its label."""

    model: str
    variant: Annotated[int, msgspec.Meta(ge=0)]
    text: str | None = None
    label: Label | None = None
    value: str | None = None
    #: why there is no answer (the model call failed, ...)
    error: str | None = None


class ReportItem(Contract, kw_only=True):
    """One question of a report: its reference answers, its wordings and every answer."""

    item_id: str
    question: str
    gold: list[str] = msgspec.field(default_factory=list)
    variants: list[ReportVariant] = msgspec.field(default_factory=list)
    answers: list[ReportAnswer] = msgspec.field(default_factory=list)


class ReportFailure(Contract, kw_only=True):
    """A step of a report's run that failed for a question (a paraphrase set, an answer, a
    grade)."""

    item_id: str
    stage: str
    reason: str
    model: str | None = None
    variant: int | None = None


class AuditedVariant(Contract, kw_only=True):
    """A paraphrase the audit removed from its set, and why."""

    item_id: str
    variant: int
    text: str
    reason: str


Caveat = Annotated[str, msgspec.Meta(max_length=1000)]


class ReportTrust(Contract, kw_only=True):
    """How far the paraphrases, and so the rates, can be trusted: how the paraphrases were
    verified (the judge's threshold and the figures it was calibrated on) and what the audit
    removed before the metrics (docs/method.md §1.1, §1.4)."""

    stages: list[str] = msgspec.field(default_factory=list)
    semantic_check: str | None = None
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    judge_thresholds: list[JudgeThreshold] = msgspec.field(default_factory=list)
    #: paraphrase sets the items brought, and those taken unverified
    given_sets: int = 0
    unverified_sets: int = 0
    audit_mode: str | None = None
    audit_judge_model: str | None = None
    audit_threshold: JudgeThreshold | None = None
    audit_checked: int = 0
    audit_removed: int = 0
    audit_unchecked: int = 0
    audit_calls: int = 0
    audit_cached_calls: int = 0
    audited_out: list[AuditedVariant] = msgspec.field(default_factory=list)
    #: what the figures above do not cover (items in a language the judge was not calibrated in)
    caveats: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=1000)]], msgspec.Meta(max_length=20)
    ] = msgspec.field(default_factory=list)


class Report(Contract, kw_only=True):
    """The report document: what the evaluator hands to ``POST /v1/reports/render``.

    Metrics come as the scoring service computed them (``consistency`` with ``per_item`` for the
    agreement distribution and the worst items; ``position_bias``); ``items`` carry the wordings
    and every model's answers; ``settings`` are the settings the run used."""

    title: str = "Steadfast report"
    generated_at: str | None = None
    task: Task | None = None
    dataset: str | None = None
    settings: dict[str, SettingValue] = msgspec.field(default_factory=dict)
    consistency: ConsistencyResponse | None = None
    position_bias: PositionBiasResponse | None = None
    items: list[ReportItem] = msgspec.field(default_factory=list)
    failures: list[ReportFailure] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    trust: ReportTrust | None = None


class ReportRenderRequest(Contract, kw_only=True):
    """``POST /v1/reports/render``: a report document and the format to render it in."""

    report: Report
    format: ReportFormat = "html"
    #: how many of the least consistent items the HTML shows side by side
    worst_items: Annotated[int, msgspec.Meta(ge=0, le=500)] = 12
