"""Rebuild the built-in samples from the full public benchmark files.

``python -m steadfast.services.evaluator.samples.build SOURCE``, where SOURCE is a directory
laid out as the upstream projects publish their files: ``gsm8k/test.jsonl``,
``simpleqa/simple_qa_test_set.csv``, ``truthfulqa/TruthfulQA.csv``,
``math500/MATH_500_test.csv``, ``mmlu/test/*_test.csv``, ``squad_it/SQuAD_it-test.json``
(sources and licences in ``LICENSES.md``). Each sample is read with the same importers uploads
use, so this also exercises them."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec

from steadfast.services.evaluator.domain.dataset_formats import parse_dataset
from steadfast.services.evaluator.domain.dataset_records import FieldMapping
from steadfast.shared.contracts.evaluator import EvaluationItem

HERE = Path(__file__).resolve().parent
SIZE = 100
SOURCE_FILES = (
    "gsm8k/test.jsonl",
    "simpleqa/simple_qa_test_set.csv",
    "truthfulqa/TruthfulQA.csv",
    "math500/MATH_500_test.csv",
    "mmlu/test",
    "squad_it/SQuAD_it-test.json",
)


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _read(path: Path, fmt: str, task: str) -> list[EvaluationItem]:
    chunks = _chunks(await asyncio.to_thread(path.read_bytes))
    return await parse_dataset(chunks, fmt, task, FieldMapping())  # type: ignore[arg-type]


async def mmlu_two_per_subject(source: Path) -> list[EvaluationItem]:
    items = []
    for path in sorted((source / "mmlu" / "test").glob("*_test.csv")):
        subject = path.name.removesuffix("_test.csv")
        for index, item in enumerate((await _read(path, "mmlu", "choice"))[:2]):
            item.id = f"mmlu_{subject}_{index}"
            items.append(item)
    return items


def _with_ids(prefix: str, items: list[EvaluationItem]) -> list[EvaluationItem]:
    for index, item in enumerate(items):
        item.id = item.id or f"{prefix}_{index}"
    return items


async def build(source: Path) -> dict[str, list[EvaluationItem]]:
    return {
        "gsm8k": _with_ids(
            "gsm8k", (await _read(source / "gsm8k/test.jsonl", "jsonl", "math"))[:SIZE]
        ),
        "simpleqa": _with_ids(
            "simpleqa",
            (await _read(source / "simpleqa/simple_qa_test_set.csv", "csv", "factual"))[:SIZE],
        ),
        "truthfulqa": _with_ids(
            "truthfulqa",
            (await _read(source / "truthfulqa/TruthfulQA.csv", "csv", "factual"))[:SIZE],
        ),
        "math500": (await _read(source / "math500/MATH_500_test.csv", "csv", "math"))[:SIZE],
        "mmlu": await mmlu_two_per_subject(source),
        "squad_it": (await _read(source / "squad_it/SQuAD_it-test.json", "squad", "factual"))[
            :SIZE
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="directory of the full benchmark files")
    source = parser.parse_args(argv).source
    missing = [name for name in SOURCE_FILES if not (source / name).exists()]
    if missing:
        parser.error(f"{source} lacks {', '.join(missing)}")
    for name, items in asyncio.run(build(source)).items():
        lines = [msgspec.json.encode(item).decode() for item in items]
        (HERE / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(items)} items")
    return 0


if __name__ == "__main__":
    sys.exit(main())
