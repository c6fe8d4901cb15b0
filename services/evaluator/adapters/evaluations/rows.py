"""The evaluation store's rows as it hands them out, and the values it is handed to store."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from steadfast.services.evaluator.db.models import OPEN_ANSWER_SQL, evaluations
from steadfast.services.evaluator.records import AnswerRecord, ParaphraseSet
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.perturb import Paraphrase, Verification
from steadfast.shared.contracts.scoring import Label

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = TypeVar("Row", bound="DataclassInstance")

ACTIVE = ("queued", "running")
TERMINAL = ("succeeded", "failed", "cancelled")
#: the open answers of ``answers`` (see OPEN_ANSWER_SQL: literal, for the partial index)
OPEN_ANSWER = sa.text(f"evaluator_answers.{OPEN_ANSWER_SQL}")
#: the language of the items stored before theirs was: every answer prompt was English then
LANGUAGE_BEFORE_STORED = "en"


@dataclass
class EvaluationRow:
    """An evaluation job: what it asks, its status and, when asked for, its results."""

    id: str
    name: str | None
    status: str
    task: str
    models: list[str]
    k: int
    dataset_id: str | None
    item_count: int
    settings: EvaluationSettings
    request_hash: str
    created_at: float
    started_at: float | None
    finished_at: float | None
    message: str | None
    results: dict[str, Any] | None


@dataclass
class ItemRow:
    """An item of an evaluation and its paraphrase stage: status, set, failures so far."""

    row_id: int
    position: int
    item_id: str
    item: EvaluationItem
    status: str
    paraphrase_set_id: str | None
    error: str | None
    attempts: int
    unreachable_attempts: int
    #: the language its models are asked in; None: a row made before that was chosen (English)
    language: str | None = None

    @property
    def asked_in(self) -> str:
        return self.language or LANGUAGE_BEFORE_STORED


@dataclass
class AnswerRow:
    """A claimed answer: its record and the failures of its current stage so far."""

    row_id: int
    record: AnswerRecord
    attempts: int
    unreachable_attempts: int = 0


#: the key of grading an answer text to the item at a position: an answer graded under it
#: before gives its label; None: the item has no gold answer (nothing to grade against)
GradeKeys = Callable[[int, str], "str | None"]


@dataclass(frozen=True)
class PendingAnswer:
    """An answer to ask for: a model's answer to a variant of the item at ``position``, with
    the key of its exact request (an identical request answered before gives its answer)."""

    position: int
    model: str
    variant: int
    prompt: str
    request_key: str


@dataclass(frozen=True)
class NewAnswers:
    """Answers to queue, with how their gradings are keyed; ``fresh``: asked anew even when an
    identical request was answered before (a monitor's run: a changed model must show)."""

    pending: list[PendingAnswer]
    grade_keys: GradeKeys
    fresh: bool = False


@dataclass(frozen=True)
class NewItem:
    """An item an evaluation is created with: its id, the language its models are asked in
    and, when it takes a paraphrase set made earlier instead of a new one, that set."""

    item: EvaluationItem
    item_id: str
    language: str
    reused_set: ParaphraseSet | None = None


@dataclass
class StoredAnswer:
    """An answer that arrived, for the row that asked for it."""

    row_id: int
    text: str
    value: str | None
    cached: bool
    #: graded at once when the item has no gold answer (nothing to grade against) or the
    #: answer is ``label``led without grading
    final: bool
    label: Label | None = None


@dataclass
class StoredGrade:
    """An answer's label, for the row that holds the answer."""

    row_id: int
    #: None for an item without gold answers (nothing to grade against)
    label: str | None
    #: identifies the grading, so an identical one later takes this label (see ``GradeKeys``)
    grade_key: str | None = None


@dataclass
class Failure:
    """A failed attempt at a row's stage, and whether (when) to try again."""

    row_id: int
    reason: str
    stage: str
    #: None: give up; else retry at this time
    retry_at: float | None
    #: counted as a failure to reach the service (``unreachable_attempts``), not ``attempts``
    unreachable: bool = False


def counted(failure: Failure, attempts: int, unreachable_attempts: int) -> dict[str, int]:
    """The attempt counts after ``failure``: one more of its kind. An ordinary failure came
    from a service that answered: an outage after it is waited for afresh."""
    if failure.unreachable:
        return {"attempts": attempts, "unreachable_attempts": unreachable_attempts + 1}
    return {"attempts": attempts + 1, "unreachable_attempts": 0}


def evaluation_columns(results: bool) -> list[sa.Column[Any]]:
    return [column for column in evaluations.c if results or column.key != "results"]


def stored_settings(stored: dict[str, Any]) -> EvaluationSettings:
    """An evaluation's settings as stored; one stored before ``instruction_role`` existed was
    answered with the instruction in the user message (unset now means: resolve it)."""
    return msgspec.convert({"instruction_role": "user", **stored}, EvaluationSettings)


def _from_row(cls: type[Row], row: RowMapping, **converted: Any) -> Row:
    """``cls`` from the row's columns of its fields' names; ``converted`` holds the fields
    whose column is named otherwise or needs converting."""
    names = [field.name for field in dataclasses.fields(cls) if field.name not in converted]
    return cls(**{name: row[name] for name in names}, **converted)


def evaluation_of(row: RowMapping) -> EvaluationRow:
    return _from_row(
        EvaluationRow,
        row,
        models=list(row["models"]),
        settings=stored_settings(row["settings"]),
        results=row.get("results"),  # only selected when asked for
    )


def item_of(row: RowMapping) -> ItemRow:
    item = msgspec.convert(row["item"], EvaluationItem)
    return _from_row(ItemRow, row, row_id=row["id"], item=item)


def answer_record_of(row: RowMapping) -> AnswerRecord:
    return _from_row(AnswerRecord, row)


def paraphrase_set_of(row: RowMapping) -> ParaphraseSet:
    paraphrases = msgspec.convert(row["paraphrases"], list[Paraphrase])
    verification = row["verification"]
    return _from_row(
        ParaphraseSet,
        row,
        paraphrases=paraphrases,
        rejected=list(row["rejected"]),
        verification=msgspec.convert(verification, Verification) if verification else None,
    )
