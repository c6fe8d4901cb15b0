"""Consistency metrics for 1,000,000 variant records (10,000 questions × 10 models × 10 variants:
the original and 9 paraphrases), against a plain pandas group-by implementation of the same
docs/method.md §1.4 metrics, measured in the same run on the same integer-coded columns.

    python -m bench.scoring [--questions 10000] [--models 10] [--variants 10] [--repeat 3]

Rows: the 16 per-model metrics (numpy vs pandas, results checked equal); the whole response
without the bootstrap (adds value level, slot accuracy, flips by kind); the bootstrap's own cost
(1,000 resamples over questions, every metric of every model); records → columns (the HTTP path's
conversion of decoded records, measured on 100,000 records and scaled).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from steadfast.services.scoring.domain.columns import Coded
from steadfast.services.scoring.domain.consistency import (
    METRIC_NAMES,
    ConsistencyColumns,
    columns_from_records,
    consistency_metrics,
    metric_matrices,
    question_table,
)
from steadfast.services.scoring.domain.position import PositionColumns, position_bias_metrics
from steadfast.shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRecord,
    Label,
    PositionBiasOptions,
)

LABELS: list[Label] = ["correct", "incorrect", "not_attempted", "invalid"]


def synthetic(questions: int, models: int, variants: int, seed: int = 0) -> ConsistencyColumns:
    """Each (question, model) has its own accuracy; 2% of answers are invalid."""
    rng = np.random.default_rng(seed)
    n = questions * models * variants
    model = np.repeat(np.arange(models), questions * variants)
    item = np.tile(np.repeat(np.arange(questions), variants), models)
    variant = np.tile(np.arange(variants), questions * models)
    skill = np.repeat(rng.beta(2, 1.5, questions * models), variants)
    draw = rng.random(n)
    label = np.where(draw < skill, 0, np.where(draw < skill + (1 - skill) * 0.8, 1, 2))
    label[rng.random(n) < 0.02] = 3
    value = np.where(label == 0, 0, rng.integers(1, 4, n)) + item * 4
    kind = np.where(variant % 10 < 7, 0, 1)
    order = rng.permutation(n)  # records arrive in any order
    return ConsistencyColumns(
        model=Coded([f"model-{m:02d}" for m in range(models)], model[order]),
        item=Coded([f"q{i:05d}" for i in range(questions)], item[order]),
        variant=variant[order],
        label=label[order].astype(np.int8),
        value=Coded([str(v) for v in range(questions * 4)], value[order]),
        kind=Coded(["plain", "toned"], np.where(variant[order] == 0, -1, kind[order])),
    )


def position_columns(models: int, items: int, seed: int = 1) -> PositionColumns:
    """Both passes of ``items`` two-option items per model, in three conditions; 2% invalid."""
    rng = np.random.default_rng(seed)
    n = models * items * 2
    model = np.repeat(np.arange(models), items * 2)
    item = np.tile(np.repeat(np.arange(items), 2), models)
    correct = np.tile([0, 1], models * items)
    choice = np.where(rng.random(n) < 0.7, correct, rng.integers(0, 2, n))
    choice[rng.random(n) < 0.02] = -1
    condition = item % 3
    return PositionColumns(
        model=Coded([f"model-{m:02d}" for m in range(models)], model),
        item=Coded([f"i{i:06d}" for i in range(items)], item),
        condition=Coded(["high", "low", "medium"], condition),
        correct=correct,
        choice=choice,
        n_options=np.full(n, 2),
    )


def numpy_core(columns: ConsistencyColumns) -> dict[str, dict[str, float | None]]:
    table = question_table(columns, drop_majority_ties=False)
    numerators, denominators = metric_matrices(table, strict_threshold=1.0)
    starts = np.searchsorted(table.model, np.arange(len(columns.model.names)))
    num = np.add.reduceat(numerators, starts, axis=0)
    den = np.add.reduceat(denominators, starts, axis=0)
    return {
        model: {
            name: float(num[m, j] / den[m, j]) if den[m, j] > 0 else None
            for j, name in enumerate(METRIC_NAMES)
        }
        for m, model in enumerate(columns.model.names)
    }


def pandas_core(frame: pd.DataFrame, names: list[str]) -> dict[str, dict[str, float | None]]:
    """The same metrics the way one would write them with pandas group-bys."""
    keys = ["model", "item"]
    original = frame[frame.variant == 0].set_index(keys)["label"].rename("o")
    paraphrases = frame[(frame.variant > 0) & (frame.label != 3)]
    counts = paraphrases.groupby([*keys, "label"]).size().unstack(fill_value=0)
    counts = counts.reindex(columns=[0, 1, 2], fill_value=0)
    q = counts.join(original, how="outer").fillna({0: 0, 1: 0, 2: 0})
    q["k"] = q[[0, 1, 2]].sum(axis=1)
    q = q[(q.o.notna()) & (q.o != 3) & (q.k > 0)].copy()
    p = q[[0, 1, 2]].div(q.k, axis=0)
    q["majority"] = q[[0, 1, 2]].idxmax(axis=1)  # first maximum: correct > incorrect > n/a
    q["p_correct"] = p[0]
    q["mode_share"] = p.max(axis=1)
    q["iid"] = 1 - (p**2).sum(axis=1)
    logs = np.log(p.where(p > 0, 1.0))
    entropy = -(p * logs).sum(axis=1)
    q["norm_entropy"] = np.where(q.k > 1, entropy / np.log(q.k.clip(lower=2)), 0.0)
    q["oc"] = q.o == 0
    q["mc"] = q.majority == 0
    q["any"] = q[0] > 0
    q["conflict"] = q.mode_share < 1
    by_model = q.groupby(level="model")
    wrong = q[~q.oc].groupby(level="model")
    right = q[q.oc].groupby(level="model")
    frame_out = pd.DataFrame(
        {
            "A_orig": by_model.oc.mean(),
            "A_expected": by_model.p_correct.mean(),
            "A_majority": by_model.mc.mean(),
            "mismatch_rate": by_model.apply(lambda g: (g.o != g.majority).mean()),
            "iid_mismatch": by_model.iid.mean(),
            "mode_share": by_model.mode_share.mean(),
            "normalized_entropy": by_model.norm_entropy.mean(),
            "A_any": by_model["any"].mean(),
            "A_any_incl_orig": by_model.apply(lambda g: (g.oc | g["any"]).mean()),
            "A_strict": by_model.apply(lambda g: (g[0] >= g.k - 1e-9).mean()),
            "flip_rate": right.mc.apply(lambda s: (~s).mean()),
            "recovery_rate": wrong.mc.mean(),
            "conflict_rate": by_model.conflict.mean(),
            "conflict_rate_given_orig_correct": right.conflict.mean(),
            "conflict_rate_given_orig_not_correct": wrong.conflict.mean(),
            "A_any_given_orig_not_correct": wrong["any"].mean(),
        }
    )
    return {
        names[int(m)]: {
            name: None if pd.isna(value) else float(value) for name, value in row.items()
        }
        for m, row in frame_out.iterrows()
    }


def numpy_with_values(columns: ConsistencyColumns) -> dict[str, dict[str, float | None]]:
    """The 16 metrics and the value-level ones, without the bootstrap."""
    response = consistency_metrics(columns, ConsistencyOptions(bootstrap=0))
    assert response.value_level is not None
    return {
        model: {
            name: metric.value
            for name, metric in {**metrics, **response.value_level[model]}.items()
        }
        for model, metrics in response.models.items()
    }


def pandas_with_values(frame: pd.DataFrame, names: list[str]) -> dict[str, dict[str, float | None]]:
    """The 16 metrics plus the same formulas on answer values, with pandas group-bys."""
    result = pandas_core(frame, names)
    keys = ["model", "item"]
    valid = frame[frame.label != 3]
    original = valid[valid.variant == 0].set_index(keys)["value"].rename("o")
    paraphrases = valid[valid.variant > 0]
    counts = paraphrases.groupby([*keys, "value"]).size().rename("c").reset_index()
    grouped = counts.groupby(keys)
    q = pd.DataFrame({"k": grouped.c.sum(), "top": grouped.c.max(), "distinct": grouped.size()})
    counts["p"] = counts.c / grouped.c.transform("sum")
    counts["plogp"] = counts.p * np.log(counts.p)
    counts["p2"] = counts.p**2
    q["entropy"] = -counts.groupby(keys).plogp.sum()
    q["iid"] = 1 - counts.groupby(keys).p2.sum()
    q["top_count"] = (
        counts.assign(is_top=counts.c == grouped.c.transform("max")).groupby(keys).is_top.sum()
    )
    q = q.join(original, how="inner")
    at_original = counts.merge(
        original.reset_index(), left_on=[*keys, "value"], right_on=[*keys, "o"]
    ).set_index(keys)["c"]
    q["original_count"] = at_original.reindex(q.index).fillna(0)
    labels = frame[frame.variant == 0].set_index(keys)["label"]
    label_counts = frame[(frame.variant > 0) & (frame.label != 3)].groupby(keys).size()
    usable = labels[(labels != 3)].index.intersection(label_counts.index)
    q = q.loc[q.index.intersection(usable)]
    q["mode"] = q.top / q.k
    q["norm_entropy"] = np.where(q.k > 1, q.entropy / np.log(q.k.clip(lower=2)), 0.0)
    by_model = q.groupby(level="model")
    table = pd.DataFrame(
        {
            "value_mismatch_rate": by_model.apply(lambda g: (g.original_count != g.top).mean()),
            "value_iid_mismatch": by_model.iid.mean(),
            "value_mode_share": by_model["mode"].mean(),
            "value_normalized_entropy": by_model.norm_entropy.mean(),
            "value_conflict_rate": by_model.apply(lambda g: (g["mode"] < 1).mean()),
            "value_distinct": by_model.distinct.mean(),
        }
    )
    for m, row in table.iterrows():
        result[names[int(m)]].update({name: float(value) for name, value in row.items()})
    return result


def _check_equal(
    ours: dict[str, dict[str, float | None]], theirs: dict[str, dict[str, float | None]]
) -> None:
    for model, metrics in theirs.items():
        for name, value in metrics.items():
            other = ours[model][name]
            if value is None or other is None:
                assert value is None and other is None, (model, name)
            else:
                assert abs(value - other) < 1e-9, (model, name)


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float

    def __sub__(self, other: Timing) -> Timing:
        return Timing(self.wall - other.wall, self.cpu - other.cpu)

    def scaled(self, factor: float) -> Timing:
        return Timing(self.wall * factor, self.cpu * factor)


def timed(function: Callable[[], Any], repeat: int, budget_s: float = 2.0) -> tuple[Timing, Any]:
    """Best of at least ``repeat`` runs, repeated until ``budget_s`` has passed (like timeit's
    autorange), as wall-clock and as this process's CPU time. The machine is shared: the CPU time
    is what other processes disturb least, and the minimum is the least disturbed run."""
    walls: list[float] = []
    cpus: list[float] = []
    result = None
    started = time.perf_counter()
    while len(walls) < repeat or time.perf_counter() - started < budget_s:
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return Timing(min(walls), min(cpus)), result


def records_of(columns: ConsistencyColumns, count: int) -> list[ConsistencyRecord]:
    assert columns.value is not None
    return [
        ConsistencyRecord(
            item_id=columns.item.names[columns.item.codes[i]],
            model=columns.model.names[columns.model.codes[i]],
            variant=int(columns.variant[i]),
            label=LABELS[columns.label[i]],
            value=columns.value.names[columns.value.codes[i]],
        )
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--variants", type=int, default=10)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    columns = synthetic(args.questions, args.models, args.variants)
    n = len(columns)
    assert columns.value is not None
    frame = pd.DataFrame(
        {
            "model": columns.model.codes,
            "item": columns.item.codes,
            "variant": columns.variant,
            "label": columns.label,
            "value": columns.value.codes,
        }
    )
    names = columns.model.names
    numpy_s, numpy_result = timed(lambda: numpy_core(columns), args.repeat)
    pandas_s, pandas_result = timed(lambda: pandas_core(frame, names), args.repeat)
    _check_equal(numpy_result, pandas_result)
    full_s, full_result = timed(lambda: numpy_with_values(columns), args.repeat)
    pandas_full_s, pandas_full = timed(lambda: pandas_with_values(frame, names), args.repeat)
    _check_equal(full_result, pandas_full)
    with_bootstrap = ConsistencyOptions(bootstrap=args.bootstrap)
    boot_total_s, _ = timed(lambda: consistency_metrics(columns, with_bootstrap), 1, 0.0)
    replies = position_columns(args.models, args.questions * args.variants // 2)
    position_s, _ = timed(
        lambda: position_bias_metrics(replies, PositionBiasOptions(bootstrap=0)), args.repeat
    )
    sample = min(n, 100_000)
    records = records_of(columns, sample)
    convert_s, _ = timed(lambda: columns_from_records(records), args.repeat)

    print(
        f"consistency metrics: {n:,} records = {args.questions:,} questions × {args.models} "
        f"models × {args.variants} variants (best of ≥ {args.repeat} runs and ≥ 2 s each; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(f"{'what':<62} {'wall s':>7} {'cpu s':>7} {'× pandas (wall/cpu)':>20}")
    rows: list[tuple[str, Timing, Timing | None]] = [
        ("pandas group-by: 16 docs/method.md §1.4 metrics (baseline)", pandas_s, pandas_s),
        ("numpy: the same 16 metrics (results checked equal)", numpy_s, pandas_s),
        ("pandas group-by: 16 metrics + value level (baseline)", pandas_full_s, pandas_full_s),
        ("numpy: whole response¹, no bootstrap (value level checked equal)", full_s, pandas_full_s),
        (
            f"bootstrap alone ({args.bootstrap} resamples, every metric)",
            boot_total_s - full_s,
            None,
        ),
        ("whole response with bootstrap", boot_total_s, None),
        (
            f"position bias: {len(replies):,} replies, per model and condition, no bootstrap",
            position_s,
            None,
        ),
        (
            f"records → columns (HTTP path; {sample:,} scaled to {n:,})",
            convert_s.scaled(n / sample),
            None,
        ),
    ]
    for label, timing, baseline in rows:
        ratio = ""
        if baseline is not None:
            ratio = f"{baseline.wall / timing.wall:.1f}× / {baseline.cpu / timing.cpu:.1f}×"
        print(f"{label:<62} {timing.wall:>7.3f} {timing.cpu:>7.3f} {ratio:>20}")
    print("¹ also slot accuracy, flips by kind, counts (the pandas baseline does not compute them)")
    for label, met in (
        ("whole response ≤ 2 s (wall) without bootstrap", full_s.wall <= 2.0),
        ("16 metrics ≥ 5× pandas (cpu)", pandas_s.cpu / numpy_s.cpu >= 5),
        ("16 metrics + value level ≥ 5× pandas (cpu)", pandas_full_s.cpu / full_s.cpu >= 5),
    ):
        print(f"target {label}: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
