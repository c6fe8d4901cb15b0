"""Wire contracts of the evaluator — the public API (``/v1/evaluate``, ``/v1/evaluations``,
``/v1/datasets``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from steadfast.shared.contracts.base import (
    STORABLE_TEXT,
    Contract,
    LanguageCode,
    RouteName,
    StoredCount,
    StoredSeed,
    Task,
)
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.gateway import ModelCalls
from steadfast.shared.contracts.perturb import (
    MAX_GIVEN_PARAPHRASES,
    CandidateScores,
    GivenParaphraseIn,
    Provenance,
    SamplesPerRequest,
)
from steadfast.shared.contracts.scoring import Label, Letter, MetricValue
from steadfast.shared.contracts.verify import Share, VerifyOptions

ModelName = RouteName
Identifier = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=STORABLE_TEXT)]
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
VariantKind = Literal["original", "plain", "toned"]
ItemStatus = Literal["pending", "complete", "partial", "failed"]


#: where the evaluator puts the task instruction (see ``EvaluationSettings.instruction_role``)
InstructionRole = Literal["user", "system"]

#: which paraphrases the audit re-checks before the metrics (docs/method.md §1.4 "Audit"): those
#: whose answer disagrees with the original's or the set's majority, every one, or none
AuditMode = Literal["disagreements", "all", "off"]


class EvaluationItem(Contract, kw_only=True):
    """One question with its optional gold answer (any of the gold fields)."""

    id: Identifier | None = None
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000, pattern=STORABLE_TEXT)]
    #: acceptable answers (factual)
    answers: list[str] | None = None
    #: the final answer (math) or the single acceptable answer (factual)
    answer: str | None = None
    #: answers that must not count as correct (TruthfulQA)
    incorrect_answers: list[str] | None = None
    #: options of a multiple-choice item, shown as A, B, C...
    options: Annotated[list[str], msgspec.Meta(min_length=2, max_length=26)] | None = None
    correct_option: Letter | None = None
    #: a passage the question is about (reading comprehension); not paraphrased
    context: Annotated[str, msgspec.Meta(max_length=50000, pattern=STORABLE_TEXT)] | None = None
    #: this item's task, when an evaluation mixes tasks (default: the evaluation's)
    task: Task | None = None
    #: the language the item is asked and paraphrased in (default: the evaluation's
    #: ``language``, else detected from the question and its context)
    language: LanguageCode | None = None
    #: paraphrases of the question brought with it (texts, or objects with ``text`` and
    #: optional ``kind``/``tone``): used instead of generated ones, verified like them unless
    #: the evaluation's ``verify_given`` is false; the item's set is every one that passes
    paraphrases: (
        Annotated[
            list[GivenParaphraseIn], msgspec.Meta(min_length=1, max_length=MAX_GIVEN_PARAPHRASES)
        ]
        | None
    ) = None


#: docs/method.md §1.1: up to k (default 10) paraphrases per question
DEFAULT_PARAPHRASES = 10


class MetricSettings(Contract, kw_only=True):
    """docs/method.md §1.4 options; every report states the ones it used."""

    drop_majority_ties: bool = False
    strict_threshold: Share = 1.0
    bootstrap: Annotated[int, msgspec.Meta(ge=0, le=100000)] = 1000


class EvaluationSettings(Contract, kw_only=True):
    """What to evaluate and how; shared by ``/v1/evaluate`` and ``/v1/evaluations``."""

    #: one model (gateway route) ...
    model: ModelName | None = None
    #: ... or several, compared on identical paraphrases
    models: Annotated[list[ModelName], msgspec.Meta(max_length=20)] | None = None
    task: Task = "factual"
    #: the language of the items (each item may name its own): the model under test is asked,
    #: and paraphrases are written, in it; unset: detected per item. Answer prompts exist in
    #: English and Italian; an item in another language is asked with the English prompt
    language: LanguageCode | None = None
    #: paraphrases per question
    k: Annotated[int, msgspec.Meta(ge=1, le=50)] = DEFAULT_PARAPHRASES
    #: gateway route that writes the paraphrases
    generator: ModelName = "local"
    #: seed of the paraphrase generator (a fixed seed makes a re-run cost no model calls)
    seed: StoredSeed = 0
    #: paraphrase generation budget per question (docs/method.md §1.1: 120 candidates, 75 s)
    max_candidates: Annotated[int, msgspec.Meta(ge=1, le=2000)] = 120
    time_budget_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 75.0
    #: a job's paraphrase sets share their time: what a set leaves of ``time_budget_s`` when it
    #: ends early (complete, or at its candidate cap) is lent to the sets after it, each taking
    #: at most ``time_budget_s`` more (in jobs, per evaluator process; not in ``/v1/evaluate``)
    share_time_budget: bool = False
    #: candidates asked for per generation round (docs/method.md §1.1: about 14 plain and 8
    #: toned); with no toned candidates (0) the set is k plain paraphrases
    plain_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 14
    toned_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 8
    #: candidates one generator call writes (a numbered list in one style)
    candidates_per_call: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5
    samples_per_request: SamplesPerRequest = 1
    verify: VerifyOptions = msgspec.field(default_factory=VerifyOptions)
    #: false: the paraphrases items bring are taken as they are, not verified (repeats of the
    #: question or of each other are still dropped)
    verify_given: bool = True
    grader: Literal["reference", "llm"] = "reference"
    #: judges of the llm grader (factual answers), their majority verdict wins (default: the
    #: scoring service's, ``local``); at most 9, checked when a request is submitted (not here:
    #: stored settings are read back through this type, and earlier versions stored more)
    judge_models: list[ModelName] | None = None
    metrics: MetricSettings = msgspec.field(default_factory=MetricSettings)
    #: cap on the answer length of the model under test
    max_tokens: Annotated[int, msgspec.Meta(ge=1, le=32768)] | None = None
    system_prompt: Annotated[str, msgspec.Meta(max_length=20000)] | None = None
    #: where the task instruction goes: "user" (docs/method.md §1.2), with the question in one user
    #: message; "system", in a system message (after ``system_prompt``, before an item's
    #: context), the user message then holding the question alone (with its options) — what a
    #: self-paraphrase model (``<strategy>:<route>``), which rewrites the last user message,
    #: needs to reword the question and not the instruction or the passage. Unset: "system"
    #: for every model when one of them is a self-paraphrase model, else "user"
    instruction_role: InstructionRole | None = None
    #: the audit (docs/method.md §1.4): a paraphrase whose answer disagrees (``disagreements``), or
    #: every one (``all``: an unbiased set, more calls), is verified again with a stricter check
    #: before the metrics, and removed from its set for every model if it fails
    audit: AuditMode = "disagreements"
    #: the route asked the audit's second question (default: the judge's)
    audit_judge: ModelName | None = None
    #: how one model's factual answers to a question's wordings are compared for agreement and
    #: value-level consistency: ``semantic`` by meaning (cheap steps, then ``answer_judge`` for
    #: what they leave undecided), ``normalized``/``exact`` by normalised text (no judge);
    #: maths and choice answers are always compared by their exact value
    grouping: Literal["semantic", "normalized", "exact"] = "semantic"
    #: the route judging whether two answers say the same thing (default: the generator's)
    answer_judge: ModelName | None = None
    #: ask the models under test every question again: no answer stored by an earlier
    #: evaluation and none from the gateway's response cache (monitors' runs: a model changed
    #: behind its name must show in the numbers)
    fresh_answers: bool = False


class EvaluateRequest(EvaluationSettings, kw_only=True):
    """A synchronous evaluation of a few questions."""

    items: Annotated[list[EvaluationItem], msgspec.Meta(min_length=1)]


class EvaluationCreate(EvaluationSettings, kw_only=True):
    """A persisted evaluation job: inline ``items`` or a ``dataset_id``."""

    name: Annotated[str, msgspec.Meta(max_length=200, pattern=STORABLE_TEXT)] | None = None
    items: list[EvaluationItem] | None = None
    dataset_id: Identifier | None = None
    #: evaluate only the first ``limit`` items of the dataset
    limit: StoredCount | None = None
    #: reuse the paraphrase sets of this earlier evaluation (matched by question text)
    reuse_paraphrases_from: Identifier | None = None


class VariantAnswer(Contract, kw_only=True):
    """One model's answer to one wording of a question, with its label and normalised value."""

    model: str
    text: str | None = None
    label: Label | None = None
    #: the normalised answer value the agreement is computed on
    value: str | None = None
    error: str | None = None


class Variant(Contract, kw_only=True):
    """One wording of a question (the original or a paraphrase) and every model's answer to it."""

    #: 0 = the original question, 1..k = paraphrases
    index: int
    text: str
    kind: VariantKind
    tone: str | None = None
    hint: str | None = None
    #: the verification scores the paraphrase passed with (overlap, judge, semantic)
    scores: CandidateScores | None = None
    #: a paraphrase's origin: written by the generator, or given with the item
    provenance: Provenance | None = None
    #: why the audit removed this paraphrase from its set (its answers are in no metric)
    audited_out: str | None = None
    answers: list[VariantAnswer] = msgspec.field(default_factory=list)


class ItemModelResult(Contract, kw_only=True):
    """One model's consistency on one question."""

    model: str
    original_answer: str | None = None
    original_label: Label | None = None
    #: the answer most variants gave, the original included (docs/method.md §1.5's vote; the §1.4
    #: metrics' majority is over the paraphrases alone)
    majority_answer: str | None = None
    #: share of the variants answered with a readable value whose normalised answer equals the
    #: majority's (docs/method.md §1.4 leaves invalid answers out); null with fewer than two of them
    agreement: float | None = None
    answered: int = 0
    #: answered, but no answer value could be read from the reply (left out of ``agreement``)
    unparsed: int = 0
    failed: int = 0
    #: per-question metrics of docs/method.md §1.4 (when gold answers were given)
    metrics: dict[str, Any] | None = None


class ItemError(Contract, kw_only=True):
    """A step that failed for a question: paraphrasing, answering or grading, and why."""

    item_id: str
    stage: Literal["paraphrase", "answer", "grade"]
    reason: str
    model: str | None = None
    variant: int | None = None


class ParaphraseProvenance(Contract, kw_only=True):
    """Where a question's paraphrase set comes from: the stored set, its generator and
    seed, and how complete it is."""

    set_id: str
    generator: str
    prompt_version: str
    seed: int | None
    semantic_check: str
    complete: bool
    incomplete_reason: str | None = None
    candidates_generated: int = 0
    rejected: int = 0
    #: ``given``: the item brought its paraphrases (``verified`` false: taken unverified)
    source: Provenance = "generated"
    verified: bool = True


class ItemResult(Contract, kw_only=True):
    """One question's results: its wordings, every model's answers and consistency, and its
    errors."""

    id: str
    question: str
    status: ItemStatus
    #: the language the models were asked in (the answer prompt's: ``en`` or ``it``)
    language: str = "en"
    #: the item's own task (unset: it was answered and graded as the evaluation's ``task``)
    task: Task | None = None
    #: the acceptable answers (factual), final answer (math) or option letter (choice)
    gold: list[str] = msgspec.field(default_factory=list)
    variants: list[Variant]
    models: list[ItemModelResult]
    paraphrases: ParaphraseProvenance | None = None
    errors: list[ItemError] = msgspec.field(default_factory=list)


class ModelSummary(Contract, kw_only=True):
    """One model's results over an evaluation: the docs/method.md §1.4 metrics and answer
    counts."""

    model: str
    #: docs/method.md §1.4 metrics under their names (only when gold answers were given)
    metrics: dict[str, MetricValue] = msgspec.field(default_factory=dict)
    #: everything else the scoring service reported (slot range, value level, flips by kind...)
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    answered: int = 0
    unparsed: int = 0
    failed: int = 0
    mean_agreement: float | None = None


class AuditSummary(Contract, kw_only=True):
    """What the audit did before the metrics were computed (docs/method.md §1.4)."""

    mode: AuditMode
    #: paraphrases verified again, and removed from their sets because they failed
    checked: int = 0
    removed: int = 0
    #: paraphrases the audit could not check (their verification failed), kept in the sets
    unchecked: int = 0
    #: the verification calls that failed, with their reasons
    failures: list[str] = msgspec.field(default_factory=list)
    judge_model: str | None = None
    audit_judge_model: str | None = None
    judge_threshold: JudgeThreshold | None = None
    audit_threshold: JudgeThreshold | None = None
    #: the judge calls the audit made (those the response cache answered cost nothing)
    model_calls: ModelCalls = msgspec.field(default_factory=ModelCalls)


class AnswerGroupingSummary(Contract, kw_only=True):
    """How factual answers were grouped before agreement was counted."""

    clustering: Literal["semantic", "normalised"]
    judge_model: str | None = None
    threshold: float | None = None
    judge_calls: int = 0
    #: answers counted with another answer's value because they say the same thing
    merged: int = 0
    notes: list[str] = msgspec.field(default_factory=list)


class VerificationSummary(Contract, kw_only=True):
    """How the paraphrases were verified, over the evaluation's sets."""

    stages: list[str] = msgspec.field(default_factory=list)
    semantic_check: str | None = None
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    #: the thresholds the judge was held to (one, unless the sets were made at different times)
    judge_thresholds: list[JudgeThreshold] = msgspec.field(default_factory=list)
    #: sets of paraphrases the items brought, and how many of them were taken unverified
    given_sets: int = 0
    unverified_sets: int = 0


class EvaluateResponse(Contract, kw_only=True):
    """The result of ``POST /v1/evaluate``: per-model summaries and per-question results."""

    task: Task
    k: int
    models: list[ModelSummary]
    items: list[ItemResult]
    metric_settings: MetricSettings
    semantic_check: str | None = None
    verification: VerificationSummary | None = None
    audit: AuditSummary | None = None
    answer_grouping: AnswerGroupingSummary | None = None
    elapsed_s: float = 0.0
    #: what could not be done (the metrics, when the scoring service failed: the answers stand)
    notes: list[str] = msgspec.field(default_factory=list)


class StageProgress(Contract, kw_only=True):
    """Progress of one stage of an evaluation job: units done, failed, and in all."""

    done: int = 0
    failed: int = 0
    total: int = 0


class EvaluationProgress(Contract, kw_only=True):
    """An evaluation job's progress per stage (paraphrase, answer, grade) and overall."""

    paraphrase: StageProgress
    answer: StageProgress
    grade: StageProgress
    #: answered variants / all variants, 0..1
    fraction: float = 0.0


class EvaluationTimings(Contract, kw_only=True):
    """When an evaluation job was created, started and finished."""

    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    elapsed_s: float | None = None


class EvaluationStatus(Contract, kw_only=True):
    """An evaluation job's status, progress, timings and first errors."""

    id: str
    status: JobStatus
    name: str | None = None
    task: Task
    models: list[str]
    k: int
    dataset_id: str | None = None
    item_count: int
    progress: EvaluationProgress
    timings: EvaluationTimings
    #: the first errors recorded so far, and how many there are in all
    errors: list[ItemError] = msgspec.field(default_factory=list)
    error_count: int = 0
    #: why the job failed, or a note that it finished with failures
    message: str | None = None


class EvaluationAccepted(Contract, kw_only=True):
    """The reply to a submitted evaluation job: its id and status."""

    id: str
    status: JobStatus


class EvaluationPage(Contract, kw_only=True):
    """A page of evaluation jobs, newest first."""

    evaluations: list[EvaluationStatus]
    total: int
    limit: int
    offset: int


class ItemPage(Contract, kw_only=True):
    """A page of an evaluation's per-question results."""

    items: list[ItemResult]
    total: int
    limit: int
    offset: int


class EvaluationReport(Contract, kw_only=True):
    """The JSON report of a finished evaluation."""

    id: str
    name: str | None
    status: JobStatus
    task: Task
    k: int
    settings: EvaluationSettings
    models: list[ModelSummary]
    items: list[ItemResult]
    errors: list[ItemError]
    timings: EvaluationTimings
    semantic_check: str | None = None
    verification: VerificationSummary | None = None
    audit: AuditSummary | None = None
    answer_grouping: AnswerGroupingSummary | None = None
    message: str | None = None


class DatasetInfo(Contract, kw_only=True):
    """A dataset: a built-in sample or an upload, with its task and item count."""

    id: str
    name: str
    task: Task
    item_count: int
    builtin: bool
    source: str | None = None
    license: str | None = None
    created_at: str | None = None


class DatasetList(Contract, kw_only=True):
    """A page of datasets: the built-in samples first, then uploads, newest first."""

    datasets: list[DatasetInfo]
    total: int = 0
    limit: int = 0
    offset: int = 0


class DatasetItemPage(Contract, kw_only=True):
    """A page of a dataset's items, with the dataset they belong to."""

    dataset: DatasetInfo
    items: list[EvaluationItem]
    total: int
    limit: int
    offset: int
