"""The flip rate of every strategy, measured through the evaluator in chunks kept across runs.

One evaluation per chunk of items: models = the plain route and ``<strategy>:<route>`` for each
strategy (the gateway answers those names with the strategy, default options), K paraphrases per
item written by the model through the perturb service (lexical filter — and, for maths, the
numbers check — only: no judge, no embedding check), the same paraphrases for every model, the
task instruction in a system message as in the accuracy part (a strategy rewrites the user
message, and should rewrite the question, not the instruction). Each
(item, model)'s graded variants are appended to the flip record, so the full size can be measured
over many runs (a day of CPU here); the flip rate is docs/method.md §1.4's, computed by the scoring
service's own code over the items every strategy has a record for:
#(original correct ∧ majority not correct) / #(original correct).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from bench.self_paraphrase.items import PLAIN, Item, model_name, prompts_part
from steadfast.client import AsyncClient
from steadfast.services.scoring.domain.consistency import consistency_metrics
from steadfast.services.scoring.domain.questions import columns_from_records
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.evaluator import (
    EvaluationCreate,
    EvaluationItem,
    InstructionRole,
    ItemResult,
    MetricSettings,
)
from steadfast.shared.contracts.proxy import StrategyOptions
from steadfast.shared.contracts.scoring import ConsistencyOptions, ConsistencyRecord, Gold
from steadfast.shared.contracts.verify import VerifyOptions, VerifyStages

#: the paraphrase sets' rule as named on the command line → its part of a record key: records
#: before 2026-12-01's fix of perturb have none (their sets without toned paraphrases stopped at
#: the plain target, 4 of 5) and are reported only when asked for
SET_RULES: dict[str, str | None] = {"k-plain": "k-plain", "plain-target": None}
CURRENT_SET_RULE = "k-plain"

#: (the rate, or None when its denominator is 0; the denominator)
Rate = tuple[float | None, int]


@dataclass(frozen=True)
class Consistency:
    """A strategy's docs/method.md §1.4 rates over the flip record's items."""

    #: over the items whose original is correct
    flip: Rate
    #: share of the items whose paraphrases got different labels, over every item
    conflict: Rate


@dataclass(frozen=True)
class FlipSettings:
    """What a recorded flip measurement depends on (part of every record key)."""

    route: str
    strategies: tuple[str, ...]
    flip_k: int
    max_tokens: dict[Task, int]
    #: candidates per item: the 1.5B keeps 1 in 4 to 1 in 20 of its GSM8K rewordings (most are
    #: near copies or drop a number), so 4 × k left most sets short
    max_candidates: int = 40
    #: long enough that the cap, not the load of the machine, ends a paraphrase set
    paraphrase_budget_s: float = 900.0
    #: as in the accuracy part: the instruction in a system message, so that a strategy, which
    #: rewrites the user message, rewrites the question and not the instruction
    instruction_role: InstructionRole = "system"
    #: the paraphrase sets' rule (:data:`SET_RULES`): k plain paraphrases, no toned ones
    sets: str | None = SET_RULES[CURRENT_SET_RULE]

    def key(self, strategy: str, item: Item) -> str:
        # an evaluator model "<strategy>:<route>" runs the strategy with its default options
        k = 0 if strategy == PLAIN else StrategyOptions().k
        return (
            f"{self.route}|{strategy}|k={k}|flip_k={self.flip_k}"
            f"|candidates={self.max_candidates}/{self.paraphrase_budget_s:g}s"
            f"|instruction={self.instruction_role}{f'|sets={self.sets}' if self.sets else ''}"
            f"|max_tokens={self.max_tokens[item.task]}{prompts_part(strategy)}|{item.id}"
        )

    def models(self) -> dict[str, str]:
        """``{evaluator model name: strategy}``."""
        return {model_name(strategy, self.route): strategy for strategy in self.strategies}


class FlipRecord:
    """Every (item, strategy)'s graded variants, one JSON line each, kept across runs."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.variants: dict[str, list[ConsistencyRecord]] = {}
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.variants[row["key"]] = msgspec.convert(
                        row["records"], list[ConsistencyRecord]
                    )

    def add(self, key: str, records: list[ConsistencyRecord]) -> None:
        self.variants[key] = records
        if self.path is not None:
            line = {"key": key, "records": msgspec.to_builtins(records)}
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")

    def missing(self, settings: FlipSettings, items: Sequence[Item]) -> list[Item]:
        return [
            item
            for item in items
            if any(settings.key(s, item) not in self.variants for s in settings.strategies)
        ]


def evaluation_of(items: Sequence[Item], settings: FlipSettings) -> EvaluationCreate:
    """One evaluation of a chunk: the plain route and every strategy on the same paraphrases."""
    task = items[0].task
    return EvaluationCreate(
        name=f"bench.self_paraphrase {items[0].dataset}",
        models=list(settings.models()),
        task=task,
        k=settings.flip_k,
        generator=settings.route,
        seed=0,
        max_candidates=settings.max_candidates,
        time_budget_s=settings.paraphrase_budget_s,
        plain_per_round=min(64, 2 * settings.flip_k),
        toned_per_round=0,
        verify=VerifyOptions(
            stages=VerifyStages(lexical=True, numbers=task == "math", judge=False, semantic="off")
        ),
        metrics=MetricSettings(bootstrap=0),
        max_tokens=settings.max_tokens[task],
        instruction_role=settings.instruction_role,
        items=[
            EvaluationItem(id=item.id, question=item.question, **gold_fields(item.gold))
            for item in items
        ],
    )


def gold_fields(gold: Gold) -> dict[str, Any]:
    """The item's gold as the evaluator takes it (maths: ``answer``, factual: ``answers``)."""
    return {"answer": gold.answer, "answers": gold.answers}


def graded_variants(result: ItemResult, model: str) -> list[ConsistencyRecord] | None:
    """One model's graded answers to one item's variants, as the evaluator gives them to the
    scoring service; ``None`` when one of them failed or is not answered yet (a later run asks
    again)."""
    if result.status == "pending":
        return None
    records = []
    for variant in result.variants:
        answers = [answer for answer in variant.answers if answer.model == model]
        if len(answers) != 1 or answers[0].label is None:
            return None
        records.append(
            ConsistencyRecord(
                item_id=result.id,
                model=model,
                variant=variant.index,
                label=answers[0].label,
                value=answers[0].value,
                kind="original" if variant.index == 0 else variant.kind,
                tone=variant.tone,
            )
        )
    return records or None


async def evaluated_items(
    evaluator: AsyncClient, evaluation: EvaluationCreate, timeout_s: float
) -> list[ItemResult]:
    """Run one evaluation to its end and return its per-item results; past ``timeout_s`` it is
    cancelled and what it finished is returned (the rest is asked again by a later run)."""
    # an evaluation a stopped run left behind (--state-dir) would compete for the model; its
    # stored answers are what this one reuses
    page = await evaluator.evaluations(limit=100)
    for earlier in page.evaluations:
        if earlier.name == evaluation.name and earlier.status in ("queued", "running"):
            await evaluator.cancel(earlier.id)
    accepted = await evaluator.create_evaluation(evaluation)
    deadline = time.monotonic() + timeout_s
    status = await evaluator.evaluation(accepted.id)
    timed_out = False
    while status.status in ("queued", "running"):
        if time.monotonic() > deadline:
            await evaluator.cancel(accepted.id)
            print(
                f"  evaluation {accepted.id} did not finish in {timeout_s:.0f} s: cancelled, "
                "its finished items kept",
                file=sys.stderr,
            )
            timed_out = True
            break
        await asyncio.sleep(1.0)
        status = await evaluator.evaluation(accepted.id)
    if status.status != "succeeded" and not timed_out:
        print(f"  evaluation {accepted.id} {status.status}: {status.message}", file=sys.stderr)
        return []
    for error in status.errors:
        print(f"  evaluation error: {error}", file=sys.stderr)
    results: list[ItemResult] = []
    while len(results) < status.item_count:
        page_of_items = await evaluator.items(accepted.id, limit=50, offset=len(results))
        if not page_of_items.items:
            break
        results += page_of_items.items
    return results


async def measure_chunk(
    evaluator: AsyncClient,
    items: Sequence[Item],
    settings: FlipSettings,
    record: FlipRecord,
    timeout_s: float,
) -> int:
    """Evaluate the chunk's items that lack a record; record the items every strategy answered
    (all of them on the same paraphrases: a later run would write a new set if the budget, not
    the cap, ended it); return how many (item, strategy) pairs were recorded."""
    missing = record.missing(settings, items)
    if not missing:
        return 0
    by_id = {item.id: item for item in missing}
    recorded = 0
    for result in await evaluated_items(evaluator, evaluation_of(missing, settings), timeout_s):
        graded = {model: graded_variants(result, model) for model in settings.models()}
        if any(records is None for records in graded.values()):
            print(f"  {result.id}: not every strategy answered; asked again next run", flush=True)
            continue
        for model, strategy in settings.models().items():
            key = settings.key(strategy, by_id[result.id])
            records = graded[model]
            if records is not None and key not in record.variants:
                record.add(key, records)
                recorded += 1
    return recorded


async def measure(
    evaluator: AsyncClient,
    datasets: Sequence[Sequence[Item]],
    settings: FlipSettings,
    record: FlipRecord,
    chunk: int,
    timeout_s: float,
    started: float,
) -> None:
    """Chunk after chunk of each dataset, like the accuracy part: stopped at any point, the
    strategies are compared on the same items."""
    for start in range(0, max(len(items) for items in datasets), chunk):
        for items in datasets:
            part = items[start : start + chunk]
            if not part:
                continue
            recorded = await measure_chunk(evaluator, part, settings, record, timeout_s)
            print(
                f"  {part[0].dataset} flip rates: items {start + 1}–{start + len(part)}, "
                f"{recorded} answers sets recorded, at {time.perf_counter() - started:.0f} s",
                flush=True,
            )


#: docs/method.md §1.4 as the scoring service computes it by default, without intervals
CONSISTENCY = ConsistencyOptions(bootstrap=0)


def common_items(record: FlipRecord, items: Sequence[Item], settings: FlipSettings) -> list[Item]:
    """The items every strategy has a record for."""
    return [
        item
        for item in items
        if all(settings.key(s, item) in record.variants for s in settings.strategies)
    ]


def paraphrase_counts(
    record: FlipRecord, items: Sequence[Item], settings: FlipSettings
) -> list[int]:
    """How many paraphrases each common item's set has (k, or fewer when the candidate cap
    ended the set first); every strategy answered the same set."""
    first = settings.strategies[0]
    return [
        sum(variant.variant > 0 for variant in record.variants[settings.key(first, item)])
        for item in common_items(record, items, settings)
    ]


def flip_rates(
    record: FlipRecord, items: Sequence[Item], settings: FlipSettings
) -> tuple[dict[str, Consistency], int]:
    """``{strategy: its flip and conflict rates}`` over the items every strategy has a record
    for (scoring's docs/method.md §1.4 code, no bootstrap), and how many items that is."""
    common = common_items(record, items, settings)
    records = [
        variant
        for item in common
        for strategy in settings.strategies
        for variant in record.variants[settings.key(strategy, item)]
    ]
    if not records:
        return {}, 0
    metrics = consistency_metrics(columns_from_records(records), CONSISTENCY)
    rates: dict[str, Consistency] = {}
    for model, strategy in settings.models().items():
        of_model = metrics.models.get(model, {})
        flip, conflict = of_model.get("flip_rate"), of_model.get("conflict_rate")
        if flip is not None and conflict is not None:
            rates[strategy] = Consistency((flip.value, flip.n), (conflict.value, conflict.n))
    return rates, len(common)
