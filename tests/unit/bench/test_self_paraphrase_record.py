"""The self-paraphrase bench's record: answers kept across runs so the full size can be measured
over several sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bench.self_paraphrase.__main__ import Answer, Bench, Item, Record, run_strategy
from shared.contracts.scoring import Gold


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
