"""The self-paraphrase bench's record: answers kept across runs so the full size can be measured
over several sessions."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from bench.self_paraphrase.__main__ import (
    Answer,
    Bench,
    Item,
    Record,
    load_items,
    recorded_rows,
    run_chunks,
    run_strategy,
)
from steadfast.services.gateway.strategies.prompts import STRATEGY_PROMPT_VERSIONS
from steadfast.shared.contracts.scoring import Gold


class CountingBench(Bench):
    """A bench whose model answers without services, counting the calls it makes."""

    def __init__(self, record: Record, k: int = 3, fail: bool = False) -> None:
        super().__init__(
            model="local-small",
            k=k,
            max_tokens={"math": 512, "factual": 128},
            gateway=None,  # type: ignore[arg-type]
            proxy=None,  # type: ignore[arg-type]
            scoring=None,  # type: ignore[arg-type]
            limit=asyncio.Semaphore(2),
            record=record,
        )
        self.asked: list[str] = []
        self.fail = fail

    async def answer(self, strategy: str, item: Item, wording: str) -> Answer:
        self.asked.append(f"{strategy}:{item.id}")
        if self.fail:
            return Answer("", 0, 0.1, 0, label="invalid", error="gateway down")
        return Answer(f"{item.id}-answer", 2, 1.5, 40, agreement=1.0)

    async def grade(self, item: Item, answers: list[Answer], **_: Any) -> None:
        for answer in answers:
            answer.label = answer.label or "correct"


def items(n: int) -> list[Item]:
    return [Item(f"q{i}", "gsm8k", "math", f"{i} + 1?", Gold(answer=str(i + 1))) for i in range(n)]


def test_recorded_answers_are_not_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    first = CountingBench(Record(path))
    asyncio.run(run_strategy(first, "paraphrase-vote", items(2)))
    assert first.asked == ["paraphrase-vote:q0", "paraphrase-vote:q1"]

    again = CountingBench(Record(path))
    row = asyncio.run(run_strategy(again, "paraphrase-vote", items(3)))
    assert again.asked == ["paraphrase-vote:q2"]
    assert [a.item_id for a in row.originals] == ["q0", "q1", "q2"]
    assert row.originals[0].calls == 2 and row.originals[0].label == "correct"


def test_other_settings_and_failures_are_asked_again(tmp_path: Path) -> None:
    path = tmp_path / "recorded.jsonl"
    asyncio.run(run_strategy(CountingBench(Record(path), k=3), "paraphrase-vote", items(1)))
    other_k = CountingBench(Record(path), k=5)
    asyncio.run(run_strategy(other_k, "paraphrase-vote", items(1)))
    assert other_k.asked == ["paraphrase-vote:q0"]

    failing = CountingBench(Record(path), fail=True)
    asyncio.run(run_strategy(failing, "canonicalize", items(1)))
    retried = CountingBench(Record(path))
    asyncio.run(run_strategy(retried, "canonicalize", items(1)))
    assert retried.asked == ["canonicalize:q0"]


def test_every_strategy_answers_a_chunk_of_each_dataset_before_the_next_chunk(
    tmp_path: Path,
) -> None:
    bench = CountingBench(Record(tmp_path / "recorded.jsonl"))
    facts = [Item(f"f{i}", "simpleqa", "factual", f"{i}?", Gold(answers=["x"])) for i in range(1)]
    rows = asyncio.run(run_chunks(bench, ["plain", "canonicalize"], [items(3), facts], 2, 0.0))
    assert bench.asked == [
        "plain:q0",
        "plain:q1",
        "canonicalize:q0",
        "canonicalize:q1",
        "plain:f0",
        "canonicalize:f0",
        "plain:q2",
        "canonicalize:q2",
    ]
    assert [(row.dataset, [a.item_id for a in row.originals]) for row in rows] == [
        ("gsm8k", ["q0", "q1", "q2"]),
        ("gsm8k", ["q0", "q1", "q2"]),
        ("simpleqa", ["f0"]),
        ("simpleqa", ["f0"]),
    ]


def test_a_changed_strategy_prompt_is_asked_again(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "recorded.jsonl"
    asyncio.run(run_strategy(CountingBench(Record(path)), "single-prompt", items(1)))
    asyncio.run(run_strategy(CountingBench(Record(path)), "plain", items(1)))
    monkeypatch.setitem(STRATEGY_PROMPT_VERSIONS, "single-prompt", "self-paraphrase/next")
    later = CountingBench(Record(path))
    asyncio.run(run_strategy(later, "single-prompt", items(1)))
    asyncio.run(run_strategy(later, "plain", items(1)))
    assert later.asked == ["single-prompt:q0"]  # plain answers use no strategy prompt


def test_the_report_compares_the_strategies_on_the_items_all_of_them_answered(
    tmp_path: Path,
) -> None:
    path = tmp_path / "recorded.jsonl"
    bundled = load_items("gsm8k", 3)
    bench = CountingBench(Record(path), k=5)
    asyncio.run(run_strategy(bench, "plain", bundled))
    asyncio.run(run_strategy(bench, "canonicalize", [bundled[0], bundled[2]]))
    args = argparse.Namespace(
        record=str(path),
        model="local-small",
        k=5,
        math_tokens=512,
        factual_tokens=128,
        math=3,
        factual=0,
        strategies=["plain", "canonicalize"],
        flip_k=0,
    )
    rows = recorded_rows(args)
    assert [row.strategy for row in rows] == ["plain", "canonicalize"]
    expected = [bundled[0].id, bundled[2].id]
    assert [[a.item_id for a in row.originals] for row in rows] == [expected, expected]
