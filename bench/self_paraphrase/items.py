"""The bundled items the bench asks, and the names of the strategies it compares."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from steadfast.services.gateway.strategies.prompts import STRATEGY_PROMPT_VERSIONS
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.scoring import Gold

REPO = Path(__file__).resolve().parents[2]
#: 100-record normalised subsets of SimpleQA and GSM8K (sources and licences: its README)
FIXTURES = REPO / "bench" / "data"
DATASETS: dict[str, tuple[Task, str]] = {
    "gsm8k": ("math", "math_gsm8k_test.jsonl"),
    "simpleqa": ("factual", "factual_simpleqa.jsonl"),
}
PLAIN = "plain"
STRATEGIES = (PLAIN, "single-prompt", "canonicalize", "paraphrase-vote")


@dataclass
class Item:
    id: str
    dataset: str
    task: Task
    question: str
    gold: Gold


def load_items(dataset: str, count: int) -> list[Item]:
    task, file_name = DATASETS[dataset]
    items: list[Item] = []
    with (FIXTURES / file_name).open(encoding="utf-8") as lines:
        for line in lines:
            if len(items) == count:
                break
            record = json.loads(line)
            gold = (
                Gold(answer=record["answer"]) if task == "math" else Gold(answers=record["answers"])
            )
            items.append(Item(record["id"], dataset, task, record["question"], gold))
    return items


def prompts_part(strategy: str) -> str:
    """The part of a record key that names the version of the strategy's own prompts."""
    return "" if strategy == PLAIN else f"|prompts={STRATEGY_PROMPT_VERSIONS[strategy]}"


def model_name(strategy: str, route: str) -> str:
    """The gateway model that answers as ``strategy``: the route, or ``<strategy>:<route>``."""
    return route if strategy == PLAIN else f"{strategy}:{route}"
