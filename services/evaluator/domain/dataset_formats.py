"""Reading datasets: an upload streamed as numbered lines, in JSON Lines or CSV (each record
made an item by ``dataset_records.py``, which knows the field names of GSM8K, SimpleQA,
TruthfulQA, MATH-500) or in MMLU's or SQuAD's own format. The built-in samples, built with
these, are in ``steadfast.services.evaluator.samples``."""

from __future__ import annotations

import asyncio
import codecs
import csv
import io
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from steadfast.services.evaluator.domain.dataset_records import (
    TOO_DEEP,
    DatasetInvalid,
    FieldMapping,
    LineError,
    _invalid,
    record_to_item,
)
from steadfast.services.evaluator.domain.pipeline import item_id
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import EvaluationItem

DatasetFormat = Literal["jsonl", "csv", "mmlu", "squad"]
MAX_ERRORS = 20
#: the largest body the upload route admits; the configured limit (smaller) is enforced while
#: streaming
UPLOAD_CEILING = 1024 * 1024 * 1024
NO_SQUAD_QUESTIONS = "no questions found (expected SQuAD JSON)"

# A CSV field is bounded by the upload limit, not by the csv module's 128 KiB default (a long
# passage is a valid context); items then check their own field lengths.
csv.field_size_limit(UPLOAD_CEILING)


@dataclass
class ParsedDataset:
    """The items of an upload as they are read, with its errors (the first ones kept, all
    counted) and where each item id was seen."""

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
