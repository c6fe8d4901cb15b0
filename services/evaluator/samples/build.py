"""Rebuild the built-in samples from the full benchmark files in ``../shared/data``.

Each sample is read with the same importers uploads use, so this also exercises them."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec

from services.evaluator.domain.datasets import FieldMapping, parse_dataset
from shared.contracts.evaluator import EvaluationItem

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2].parent / "shared" / "data"
SIZE = 100


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _read(path: Path, fmt: str, task: str) -> list[EvaluationItem]:
    chunks = _chunks(await asyncio.to_thread(path.read_bytes))
    return await parse_dataset(chunks, fmt, task, FieldMapping())  # type: ignore[arg-type]


async def mmlu_two_per_subject() -> list[EvaluationItem]:
    items = []
    for path in sorted((DATA / "mmlu" / "test").glob("*_test.csv")):
        subject = path.name.removesuffix("_test.csv")
        for index, item in enumerate((await _read(path, "mmlu", "choice"))[:2]):
            item.id = f"mmlu_{subject}_{index}"
            items.append(item)
    return items


def _with_ids(prefix: str, items: list[EvaluationItem]) -> list[EvaluationItem]:
    for index, item in enumerate(items):
        item.id = item.id or f"{prefix}_{index}"
    return items


async def build() -> dict[str, list[EvaluationItem]]:
    return {
        "gsm8k": _with_ids(
            "gsm8k", (await _read(DATA / "gsm8k/test.jsonl", "jsonl", "math"))[:SIZE]
        ),
        "simpleqa": _with_ids(
            "simpleqa",
            (await _read(DATA / "simpleqa/simple_qa_test_set.csv", "csv", "factual"))[:SIZE],
        ),
        "truthfulqa": _with_ids(
            "truthfulqa", (await _read(DATA / "truthfulqa/TruthfulQA.csv", "csv", "factual"))[:SIZE]
        ),
        "math500": (await _read(DATA / "math500/MATH_500_test.csv", "csv", "math"))[:SIZE],
        "mmlu": await mmlu_two_per_subject(),
        "squad_it": (await _read(DATA / "squad_it/SQuAD_it-test.json", "squad", "factual"))[:SIZE],
    }


def main() -> int:
    for name, items in asyncio.run(build()).items():
        lines = [msgspec.json.encode(item).decode() for item in items]
        (HERE / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(items)} items")
    return 0


if __name__ == "__main__":
    sys.exit(main())
