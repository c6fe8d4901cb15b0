"""Wire contracts of the evaluator's studies (``/v1/studies``): several data sets × several
models × both protocols, run as one study and read as one report."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import Contract
from steadfast.shared.contracts.evaluator import EvaluationCreate, JobStatus, ModelName
from steadfast.shared.contracts.monitors import MonitorValue
from steadfast.shared.contracts.position import PositionBiasEvaluate

StudyProtocol = Literal["consistency", "position-bias"]
StudyStatusName = Literal["running", "succeeded", "partial", "failed"]
#: a study's or a part's name: one line of text (shown, escaped, in the report)
StudyName = Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern="^[^\\x00-\\x1f]+$")]
#: the most parts one study runs
MAX_STUDY_PARTS = 50
#: the consistency metrics a study report shows, per model (docs/method.md §1.4)
CONSISTENCY_COLUMNS = (
    "A_orig",
    "A_expected",
    "A_majority",
    "A_any",
    "A_strict",
    "flip_rate",
    "conflict_rate",
)
#: the positional-bias metrics a study report shows, per model and condition (§2.2)
POSITION_COLUMNS = ("PF", "abs_PF", "PC", "acc_correct_first", "acc_correct_second", "invalid_rate")


class StudyPart(Contract, kw_only=True):
    """One data set under one protocol: an evaluation (``consistency``) or a positional-bias
    job (``position-bias``), run as the persisted job it is on its own. The study's ``models``
    replace the part's own."""

    name: StudyName
    protocol: StudyProtocol = "consistency"
    evaluation: EvaluationCreate | None = None
    position_bias: PositionBiasEvaluate | None = None


class StudyCreate(Contract, kw_only=True):
    """``POST /v1/studies``: the models every part asks, and the parts."""

    name: StudyName
    #: the models every part asks (gateway routes)
    models: Annotated[list[ModelName], msgspec.Meta(min_length=1, max_length=20)]
    parts: Annotated[list[StudyPart], msgspec.Meta(min_length=1, max_length=MAX_STUDY_PARTS)]


class Progress(Contract, kw_only=True):
    """Units of work done, out of the total."""

    done: int = 0
    total: int = 0


class StudyPartStatus(Contract, kw_only=True):
    """One part's job, status and progress."""

    name: str
    protocol: StudyProtocol
    #: the evaluation or positional-bias job that runs the part
    job_id: str
    status: JobStatus
    progress: Progress
    #: why the part failed, or a note that it finished with failures
    error: str | None = None


class StudyStatus(Contract, kw_only=True):
    """A study's status and progress over all its parts."""

    id: str
    name: str
    #: ``partial``: every part ended, some of them failed
    status: StudyStatusName
    models: list[str]
    created_at: str
    progress: Progress
    parts: list[StudyPartStatus]


class StudyAccepted(Contract, kw_only=True):
    """The reply to a started study: its id and status."""

    id: str
    status: StudyStatusName


class StudyPage(Contract, kw_only=True):
    """The studies, newest first."""

    studies: list[StudyStatus]
    total: int


class StudyConsistency(Contract, kw_only=True):
    """A consistency part's table: per model, the metrics of ``CONSISTENCY_COLUMNS``."""

    models: dict[str, dict[str, MonitorValue]]
    #: how the paraphrases were made and checked: k, stages, judge and threshold, audit
    settings: dict[str, str | int | float | bool | None]
    verification: list[str] = msgspec.field(default_factory=list)


class StudyPosition(Contract, kw_only=True):
    """A positional-bias part's tables: per condition (``all`` for every condition), per
    model, the metrics of ``POSITION_COLUMNS`` and the share of invalid replies."""

    by_condition: dict[str, dict[str, dict[str, MonitorValue]]]
    settings: dict[str, str | int | float | bool | None]


class StudyPartReport(Contract, kw_only=True):
    """One part of a study report: its job, dataset and languages, and its table."""

    name: str
    protocol: StudyProtocol
    job_id: str
    status: JobStatus
    dataset: str | None = None
    #: the languages the models were asked in, with their items: ``"it (10 items)"``
    language: str | None = None
    error: str | None = None
    consistency: StudyConsistency | None = None
    position_bias: StudyPosition | None = None


class StudyReport(Contract, kw_only=True):
    """The report of a study: every part's tables, per data set and protocol."""

    id: str
    name: str
    status: StudyStatusName
    models: list[str]
    generated_at: str
    parts: list[StudyPartReport]
