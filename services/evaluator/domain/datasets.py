"""Reading datasets: JSONL and CSV uploads with field mapping, the formats of the public
benchmarks (GSM8K, SimpleQA, TruthfulQA, MATH-500, MMLU, SQuAD). The built-in samples, built
with these, are in ``steadfast.services.evaluator.samples``."""

from __future__ import annotations

import asyncio
import codecs
import csv
import io
import itertools
import json
import re
import string
from collections.abc import AsyncIterator, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from steadfast.services.evaluator.domain.pipeline import item_id
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem

DatasetFormat = Literal["jsonl", "csv", "mmlu", "squad"]
MAX_ERRORS = 20
#: the largest body the upload route admits; the configured limit (smaller) is enforced while
#: streaming
UPLOAD_CEILING = 1024 * 1024 * 1024
LETTERS = string.ascii_uppercase
NO_SQUAD_QUESTIONS = "no questions found (expected SQuAD JSON)"

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

# A CSV field is bounded by the upload limit, not by the csv module's 128 KiB default (a long
# passage is a valid context); items then check their own field lengths.
csv.field_size_limit(UPLOAD_CEILING)


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


@dataclass
class ParsedDataset:
    items: list[EvaluationItem] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    error_total: int = 0
    #: where the item with each id is, by the id the evaluation will know it by
    places: dict[str, str] = field(default_factory=dict)

    def add_error(self, error: LineError) -> None:
        self.error_total += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(error)

    def add_item(self, item: EvaluationItem, line: int | None, id_field: str) -> None:
        """The item, or an error when its id (given, or ``item-N`` by position) is taken."""
        key = item_id(item, len(self.items))
        self.items.append(item)  # in its place even when rejected: later positions stay true
        if key in self.places:
            self.add_error(LineError(line, id_field, _id_clash(item, key, self.places[key])))
            return
        place = f"on line {line}" if line is not None else f"at {id_field.removesuffix('.id')}"
        self.places[key] = place if item.id else f"{place} (numbered by its position)"

    def result(self) -> list[EvaluationItem]:
        if self.errors:
            raise DatasetInvalid(self.errors, self.error_total)
        if not self.items:
            raise DatasetInvalid([LineError(0, "body", "the dataset has no items")])
        return self.items


def _id_clash(item: EvaluationItem, key: str, earlier: str) -> str:
    if item.id is None:
        return (
            f"this item has no id and is numbered {key!r} by position: the id of the item {earlier}"
        )
    return f"duplicate id {key!r}: the item {earlier} has it too"


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


async def lines_of(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[int, str]]:
    """Numbered text lines of a streamed body, as the chunks arrive; raises
    :class:`DatasetInvalid` at the first line that is not UTF-8."""
    pending = bytearray()
    number = 0
    async for chunk in chunks:
        searched = len(pending)  # the pending bytes hold no newline: look in the new ones only
        pending += chunk
        end = pending.find(b"\n", searched)
        while end != -1:
            number += 1
            yield number, _decoded(pending[:end], number)
            del pending[: end + 1]
            end = pending.find(b"\n")
    if pending:
        yield number + 1, _decoded(pending, number + 1)


def _decoded(raw: bytes | bytearray, number: int) -> str:
    if number == 1:  # not the utf-8-sig codec: its error positions skip the BOM
        raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start]
        message = f"not UTF-8 (byte 0x{byte:02X} at position {exc.start}): save the file as UTF-8"
        raise _invalid(number, "line", message) from None


#: a JSON value nested deeper than the parser's recursion limit
TOO_DEEP = "not valid JSON: nested too deep"


async def parse_jsonl(
    lines: AsyncIterator[tuple[int, str]], task: Task, mapping: FieldMapping
) -> list[EvaluationItem]:
    parsed = ParsedDataset()
    named = set(mapping.named().values())
    present: set[str] = set()
    async for number, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.add_error(LineError(number, "line", f"not valid JSON: {exc.msg}"))
            continue
        except RecursionError:
            parsed.add_error(LineError(number, "line", TOO_DEEP))
            continue
        if not isinstance(record, dict):
            parsed.add_error(LineError(number, "line", "expected a JSON object"))
            continue
        present |= named.intersection(record)
        _add(parsed, record, task, mapping, number)
    mapping.require_present(present, "no record has a field")
    return parsed.result()


def _add(
    parsed: ParsedDataset, record: dict[str, Any], task: Task, mapping: FieldMapping, line: int
) -> None:
    try:
        item = record_to_item(record, task, mapping, line)
    except DatasetInvalid as invalid:
        for error in invalid.errors:
            parsed.add_error(error)
        return
    parsed.add_item(item, line, mapping.id or "id")


async def _collect(lines: AsyncIterator[tuple[int, str]]) -> list[str]:
    return [line async for _, line in lines]


async def _csv_rows(
    lines: AsyncIterator[tuple[int, str]], parsed: ParsedDataset
) -> Iterator[tuple[int, list[str]]]:
    """The non-blank rows with the line each ends on; a CSV syntax error ends them, reported."""
    reader = csv.reader(io.StringIO("\n".join(await _collect(lines))), strict=True)
    return _rows_until_broken(reader, parsed)


def _rows_until_broken(reader: Any, parsed: ParsedDataset) -> Iterator[tuple[int, list[str]]]:
    while True:
        opened = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            parsed.add_error(_csv_error(exc, opened, reader.line_num))
            return
        if row:
            yield reader.line_num, row


def _csv_error(exc: csv.Error, opened: int, reached: int) -> LineError:
    if str(exc) == "unexpected end of data":  # the strict reader's word for an unclosed quote
        return LineError(opened, "row", "a quoted field opens here and is never closed")
    return LineError(reached, "row", f"not valid CSV: {exc}")


async def parse_csv(
    lines: AsyncIterator[tuple[int, str]], task: Task, mapping: FieldMapping
) -> list[EvaluationItem]:
    parsed = ParsedDataset()
    rows = await _csv_rows(lines, parsed)
    _, header = next(rows, (0, []))
    if not header:
        if parsed.errors:
            return parsed.result()
        raise _invalid(1, "header", "the CSV has no header row")
    mapping.require_present(header, "the CSV header has no column")
    for number, row in rows:
        _add(parsed, dict(zip(header, row, strict=False)), task, mapping, number)
    return parsed.result()


async def parse_mmlu(lines: AsyncIterator[tuple[int, str]]) -> list[EvaluationItem]:
    """MMLU's headerless CSV: question, A, B, C, D, answer letter."""
    parsed = ParsedDataset()
    for number, row in await _csv_rows(lines, parsed):
        if len(row) < 4:
            parsed.add_error(LineError(number, "row", "expected question, options, answer"))
            continue
        record = {"question": row[0], "choices": row[1:-1], "correct_option": row[-1]}
        _add(parsed, record, "choice", FieldMapping(), number)
    return parsed.result()


async def parse_squad(lines: AsyncIterator[tuple[int, str]]) -> list[EvaluationItem]:
    """SQuAD v1.1 JSON (SQuAD-it): each question with its paragraph as context. Errors name
    the value's path (``data[0].paragraphs[2].qas[1].question``): JSON has no useful lines.
    Read in a thread: a SQuAD file is one JSON document of tens of megabytes."""
    return await asyncio.to_thread(_squad_items, "\n".join(await _collect(lines)))


def _squad_items(text: str) -> list[EvaluationItem]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(exc.lineno, "body", f"not valid JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise _invalid(1, "body", TOO_DEEP) from exc
    if not isinstance(document, dict):
        raise _invalid(1, "data", NO_SQUAD_QUESTIONS)
    parsed = ParsedDataset()
    for article_at, article in _objects(document, "data", "", parsed):
        for paragraph_at, paragraph in _objects(article, "paragraphs", article_at, parsed):
            for qa_at, qa in _objects(paragraph, "qas", paragraph_at, parsed):
                _add_squad_question(parsed, qa, qa_at, paragraph, paragraph_at)
    if not parsed.items and not parsed.errors:
        raise _invalid(1, "data", NO_SQUAD_QUESTIONS)
    return parsed.result()


def _objects(
    container: dict[str, Any], key: str, at: str, parsed: ParsedDataset
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects listed under ``key``, each with its path; reports the entries that are not."""
    path = f"{at}.{key}" if at else key
    entries = container.get(key, [])
    if not isinstance(entries, list):
        parsed.add_error(LineError(None, path, "expected a list"))
        return
    for index, entry in enumerate(entries):
        if isinstance(entry, dict):
            yield f"{path}[{index}]", entry
        else:
            parsed.add_error(LineError(None, f"{path}[{index}]", "expected an object"))


def _add_squad_question(
    parsed: ParsedDataset,
    qa: dict[str, Any],
    qa_at: str,
    paragraph: dict[str, Any],
    paragraph_at: str,
) -> None:
    try:
        record = {
            "id": qa.get("id"),
            "question": qa.get("question"),
            "answers": _squad_answers(qa, qa_at) or None,
            "context": paragraph.get("context"),
        }
        item = _located_item(record, qa_at, paragraph_at)
    except DatasetInvalid as invalid:
        for error in invalid.errors:
            parsed.add_error(error)
        return
    parsed.add_item(item, None, f"{qa_at}.id")


def _squad_answers(qa: dict[str, Any], qa_at: str) -> list[str]:
    answers = qa.get("answers", [])
    if not isinstance(answers, list):
        raise _invalid(None, f"{qa_at}.answers", "expected a list")
    texts = []
    for index, answer in enumerate(answers):
        text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            message = "expected an object with the answer's `text`"
            raise _invalid(None, f"{qa_at}.answers[{index}]", message)
        texts.append(text)
    return list(dict.fromkeys(texts))


def _located_item(record: dict[str, Any], qa_at: str, paragraph_at: str) -> EvaluationItem:
    """The record as an item; its errors name their path (the context is the paragraph's)."""
    try:
        return record_to_item(record, "factual", FieldMapping(), None)
    except DatasetInvalid as invalid:
        for error in invalid.errors:
            at = paragraph_at if error.field == "context" else qa_at
            error.field = f"{at}.{error.field}"
        raise


async def parse_dataset(
    chunks: AsyncIterator[bytes], fmt: DatasetFormat, task: Task, mapping: FieldMapping
) -> list[EvaluationItem]:
    lines = lines_of(chunks)
    if fmt == "jsonl":
        return await parse_jsonl(lines, task, mapping)
    if fmt == "csv":
        return await parse_csv(lines, task, mapping)
    mapping.require_unset(fmt)
    if fmt == "mmlu":
        return await parse_mmlu(lines)
    return await parse_squad(lines)


def guess_format(filename: str | None, content_type: str | None) -> DatasetFormat:
    name = (filename or "").lower()
    if name.endswith(".csv") or (content_type or "").startswith("text/csv"):
        return "csv"
    if name.endswith(".json") and not name.endswith(".jsonl"):
        return "squad"
    return "jsonl"
