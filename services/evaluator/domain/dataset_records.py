"""One source record as an evaluation item: the field mapping of an upload, the field names
the public benchmarks use, and the errors that name a record's line and field."""

from __future__ import annotations

import itertools
import json
import re
import string
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem

if TYPE_CHECKING:
    from steadfast.services.evaluator.domain.dataset_formats import DatasetFormat


LETTERS = string.ascii_uppercase

QUESTION_FIELDS = ("question", "problem", "Question", "input", "prompt", "query")
ANSWER_LIST_FIELDS = ("answers", "Correct Answers", "correct_answers", "aliases")
ANSWER_FIELDS = ("answer", "Best Answer", "best_answer", "final_answer", "target", "Answer")
INCORRECT_FIELDS = ("incorrect_answers", "Incorrect Answers")
ID_FIELDS = ("id", "ID", "qid", "unique_id", "question_id")
OPTION_FIELDS = ("choices", "options")
#: option columns: "A", "B", ... (first: choice tasks only), "option_a" / "option_A", ...
OPTION_COLUMNS = [
    [f"{prefix}{letter}" for letter in letters]
    for prefix, letters in [
        ("", LETTERS),
        *((p, case) for p in ("option_", "choice_") for case in (LETTERS.lower(), LETTERS)),
    ]
]
CORRECT_OPTION_FIELDS = ("correct_option", "answer_index", "label")
CONTEXT_FIELDS = ("context", "passage")
PARAPHRASE_FIELDS = ("paraphrases",)
_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$")


@dataclass
class FieldMapping:
    """Names of the source fields; None picks the first of the common names present."""

    question: str | None = None
    answer: str | None = None
    answers: str | None = None
    id: str | None = None
    #: separator of answer lists given as one text ("a; b; c")
    list_separator: str = ";"

    def named(self) -> dict[str, str]:
        """The source fields named explicitly, by the item field each gives."""
        names = {"question": self.question, "answer": self.answer}
        names |= {"answers": self.answers, "id": self.id}
        return {target: name for target, name in names.items() if name is not None}

    def require_present(self, present: Collection[str], absence: str) -> None:
        """Raises :class:`MappingInvalid` for each named field not in ``present``."""
        missing = {t: f"{absence} {n!r}" for t, n in self.named().items() if n not in present}
        if missing:
            raise MappingInvalid(missing)

    def require_unset(self, fmt: DatasetFormat) -> None:
        reason = f"the {fmt} format has fixed fields: no mapping applies"
        if self.named():
            raise MappingInvalid(dict.fromkeys(self.named(), reason))


class MappingInvalid(Exception):
    """Named source fields the upload cannot use: the reason, by the item field mapped."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(f"{target}: {reason}" for target, reason in reasons.items()))


@dataclass
class LineError:
    """One error of an upload: the line (or JSON path) and the field it is about."""

    #: None in a JSON document, where ``field`` is the path to the value
    line: int | None
    field: str
    message: str

    @property
    def where(self) -> str:
        return self.field if self.line is None else f"line {self.line}: {self.field}"


class DatasetInvalid(Exception):
    """The upload has errors; each names its line and field."""

    def __init__(self, errors: list[LineError], total: int | None = None) -> None:
        self.errors = errors
        self.total = total if total is not None else len(errors)
        super().__init__("; ".join(f"{e.where}: {e.message}" for e in errors))


def _invalid(line: int | None, field: str, message: str) -> DatasetInvalid:
    return DatasetInvalid([LineError(line, field, message)])


def _pick(record: dict[str, Any], wanted: str | None, candidates: Iterable[str]) -> Any:
    if wanted is not None:
        return record.get(wanted)
    for name in candidates:
        if record.get(name) not in (None, ""):
            return record[name]
    return None


def _text_list(value: Any, separator: str, field: str, line: int | None) -> list[str] | None:
    if value in (None, ""):
        return None
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            decoded = json.loads(text)
            if isinstance(decoded, list):
                return [str(v).strip() for v in decoded if str(v).strip()]
        except json.JSONDecodeError:
            pass
        except RecursionError as exc:
            raise _invalid(line, field, TOO_DEEP) from exc
    return [part.strip() for part in text.split(separator) if part.strip()]


def _paraphrases(record: dict[str, Any], separator: str, line: int | None) -> list[Any] | None:
    """The paraphrases an item brings: a list (JSON Lines: texts or objects with ``text``,
    ``kind``, ``tone``), or a text holding a JSON list (a CSV cell) or texts joined by the list
    separator; the item's type checks each."""
    value = _pick(record, None, PARAPHRASE_FIELDS)
    if isinstance(value, list):
        return value or None
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            decoded = json.loads(value)
        except json.JSONDecodeError:
            decoded = None  # not a list after all: texts joined by the separator
        except RecursionError as exc:
            raise _invalid(line, "paraphrases", TOO_DEEP) from exc
        if isinstance(decoded, list):
            return decoded or None
    # a blank cell, or one of separators only, brings none
    return _text_list(value, separator, "paraphrases", line) or None


def _final_answer(task: Task, answer: Any) -> str | None:
    if answer in (None, ""):
        return None
    text = str(answer).strip()
    if task == "math":  # GSM8K gives the rationale ending in "#### 72"
        match = _GSM8K_FINAL.search(text)
        if match:
            return match.group(1).replace(",", "")
    return text


def _option_index(value: Any) -> int | None:
    """The 0-based option an index (2, "2") or a letter ("C", "c") names; None for others."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.isascii() and text.isdecimal():
        return int(text)
    if len(text) == 1 and text.isascii() and text.isalpha():
        return LETTERS.index(text.upper())
    return None


def _correct_option(
    record: dict[str, Any], options: list[str] | None, line: int | None
) -> str | None:
    name = next((n for n in CORRECT_OPTION_FIELDS if record.get(n) not in (None, "")), None)
    if name is None:
        return _answer_as_option(record, options)
    count = len(options) if options else len(LETTERS)
    index = _option_index(record[name])
    if index is None or not 0 <= index < count:
        expected = f"an option letter A-{LETTERS[count - 1]} or index 0-{count - 1}"
        raise _invalid(line, name, f"expected {expected}, got {record[name]!r}")
    return LETTERS[index]


def _answer_as_option(record: dict[str, Any], options: list[str] | None) -> str | None:
    """With options and no correct-option field, the answer field names the option (Hugging
    Face's MMLU: ``"answer": 1``), by index, letter or its text; None when it names none."""
    answer = _pick(record, None, ANSWER_FIELDS)
    if not options or answer in (None, ""):
        return None
    texts = [option.strip().casefold() for option in options]
    if isinstance(answer, str) and answer.strip().casefold() in texts:
        return LETTERS[texts.index(answer.strip().casefold())]
    index = _option_index(answer)
    return LETTERS[index] if index is not None and 0 <= index < len(options) else None


def _options(
    record: dict[str, Any], separator: str, task: Task, line: int | None
) -> list[str] | None:
    """The options of a choice item: a list (JSON), or a text holding a JSON list or at least
    two options joined by the list separator (a CSV cell); else option columns from A on, as
    long as they go on: ``option_a``, ``choice_a``, ... always, bare ``A``, ``B``, ... only
    for a choice task (elsewhere they may be anything)."""
    listed = _pick(record, None, OPTION_FIELDS)
    if isinstance(listed, list):
        return [str(option) for option in listed]
    options = _text_list(listed, separator, "options", line)
    if options is not None and len(options) >= 2:
        return options
    choice = (record.get("task") or task) == "choice"
    for columns in OPTION_COLUMNS if choice else OPTION_COLUMNS[1:]:
        given = list(itertools.takewhile(lambda n: record.get(n) not in (None, ""), columns))
        if len(given) >= 2:
            return [str(record[n]).strip() for n in given]
    return None


def _question(record: dict[str, Any], mapping: FieldMapping, line: int | None) -> str:
    question = _pick(record, mapping.question, QUESTION_FIELDS)
    if not isinstance(question, str) or not question.strip():
        raise _invalid(line, mapping.question or "question", "missing or empty question")
    return question.strip()


def record_to_item(
    record: dict[str, Any], task: Task, mapping: FieldMapping, line: int | None
) -> EvaluationItem:
    """One source record as an item; raises :class:`DatasetInvalid` naming the line."""
    listed_answers = _pick(record, mapping.answers, ANSWER_LIST_FIELDS)
    answers = _text_list(listed_answers, mapping.list_separator, mapping.answers or "answers", line)
    options = _options(record, mapping.list_separator, task, line)
    identifier = _pick(record, mapping.id, ID_FIELDS)
    raw = {
        "id": str(identifier) if identifier not in (None, "") else None,
        "question": _question(record, mapping, line),
        "answers": answers,
        "answer": _final_answer(task, _pick(record, mapping.answer, ANSWER_FIELDS)),
        "incorrect_answers": _text_list(
            _pick(record, None, INCORRECT_FIELDS), mapping.list_separator, "incorrect_answers", line
        ),
        "options": options,
        "context": _pick(record, None, CONTEXT_FIELDS),
        "task": record.get("task") or None,
        "paraphrases": _paraphrases(record, mapping.list_separator, line),
    }
    try:
        item = msgspec.convert(raw, EvaluationItem)
    except msgspec.ValidationError as exc:
        raise _invalid(line, _field_of(exc), str(exc)) from exc
    # checked once the options are, so that its range is theirs; always a letter A-Z
    item.correct_option = _correct_option(record, item.options, line)
    return item


def _field_of(exc: msgspec.ValidationError) -> str:
    match = re.search(r"at `\$\.?([^`]*)`", str(exc))
    return match.group(1) if match else "record"


#: a JSON value nested deeper than the parser's recursion limit
TOO_DEEP = "not valid JSON: nested too deep"
