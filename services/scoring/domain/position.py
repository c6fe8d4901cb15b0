"""Positional-bias metrics of docs/method.md §2.2, vectorised with numpy.

Unit: one (model, condition, item). Its passes are told apart by where the correct option stood:
pass 1 has it at A, pass 2 at B (k options: one pass per cyclic permutation). A complete pair
(letter of pass 1, letter of pass 2) is AB (consistent, correct), BA (consistent, wrong), AA
(primacy) or BB (recency); pairs with an invalid reply are left out of n and counted in
invalid_rate = invalid replies / all replies.

For k options the same per-unit formulas are used on complete units: acc_correct_first and
acc_correct_second are the recalls with the correct option at A and at B (so PF stays
acc_correct_second − acc_correct_first), PC is the share whose chosen option (by content) is the
same in every permutation; recall_std is the standard deviation over positions of the recall with
the correct option at that position, fluctuation_rate the share of items (with at least two valid
replies) whose chosen option changes across permutations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steadfast.services.scoring.domain.bootstrap import (
    bootstrap_ratios,
    model_rng,
    percentile_intervals,
)
from steadfast.services.scoring.domain.columns import Coded, IntArray, cell_index, first_duplicate
from steadfast.services.scoring.domain.questions import BoolArray
from steadfast.shared.contracts.scoring import (
    MetricValue,
    ModelMetrics,
    PairCounts,
    PositionBiasOptions,
    PositionBiasResponse,
    PositionRecord,
)
from steadfast.shared.errors import Unprocessable

FloatArray = NDArray[np.float64]

METRIC_NAMES = (
    "PF",
    "abs_PF",
    "PC",
    "acc_correct_first",
    "acc_correct_second",
    "invalid_rate",
    "n_pairs",
    "recall_std",
    "fluctuation_rate",
)
#: ratio columns bootstrapped directly; abs_PF, n_pairs and recall_std derive from them
_RATIOS = ("PF", "PC", "acc_correct_first", "acc_correct_second", "invalid_rate", "fluctuation")
MISSING, INVALID_REPLY = -2, -1


def letter_index(letter: str) -> int:
    return ord(letter) - ord("A")


@dataclass(frozen=True)
class PositionColumns:
    """The position-bias records as columns: coded model, item and condition, with the
    correct and chosen positions and the option count of each."""

    model: Coded
    item: Coded
    condition: Coded
    correct: IntArray  # position (0 = A) of the correct option in each record's order
    choice: IntArray  # position chosen, INVALID_REPLY when the reply was invalid
    n_options: IntArray

    def __len__(self) -> int:
        return len(self.correct)


def columns_from_records(records: Sequence[PositionRecord]) -> PositionColumns:
    count = len(records)
    for index, record in enumerate(records):
        for name, letter in (("correct", record.correct), ("choice", record.choice)):
            if letter is not None and letter_index(letter) >= record.n_options:
                raise Unprocessable(
                    f"{name} {letter!r} is beyond the item's {record.n_options} options",
                    field=f"records[{index}].{name}",
                    title="Letter out of range",
                )
    return PositionColumns(
        model=Coded.of([record.model for record in records]),
        item=Coded.of([record.item_id for record in records]),
        condition=Coded.of([record.condition for record in records]),
        correct=np.fromiter((letter_index(r.correct) for r in records), np.int64, count),
        choice=np.fromiter(
            (INVALID_REPLY if r.choice is None else letter_index(r.choice) for r in records),
            np.int64,
            count,
        ),
        n_options=np.fromiter((r.n_options for r in records), np.int64, count),
    )


@dataclass(frozen=True)
class Units:
    """One row per (model, condition, item), sorted by model, condition, item."""

    model: IntArray
    condition: IntArray  # -1 when the records carry none
    item: IntArray
    choice_at: IntArray  # (units × max k): the letter chosen with the correct option at j
    n_options: IntArray
    replies: IntArray
    invalid: IntArray


def unit_table(columns: PositionColumns) -> Units:
    n_conditions = len(columns.condition.names) + 1
    n_items = len(columns.item.names)
    group = columns.model.codes * n_conditions + columns.condition.codes + 1
    unit, cells = cell_index(group, columns.item.codes, n_items)
    width = int(columns.n_options.max())
    slots = unit * width + columns.correct
    if int(cell_index(unit, columns.correct, width)[0].max()) + 1 != len(unit):
        row = first_duplicate(slots)
        raise Unprocessable(
            f"records[{row}] repeats the (item_id, model, condition, correct) of an earlier record",
            field=f"records[{row}]",
            title="Duplicate record",
        )
    n_units = len(cells)
    choice_at = np.full(n_units * width, MISSING, dtype=np.int64)
    choice_at[slots] = columns.choice
    n_options = np.zeros(n_units, dtype=np.int64)
    # the largest option count given for a unit: write the counts in increasing order
    for count in np.flatnonzero(np.bincount(columns.n_options)):
        n_options[unit[columns.n_options == count]] = count
    group_of_unit = cells // n_items
    return Units(
        model=group_of_unit // n_conditions,
        condition=group_of_unit % n_conditions - 1,
        item=cells % n_items,
        choice_at=choice_at.reshape(n_units, width),
        n_options=n_options,
        replies=np.bincount(unit, minlength=n_units),
        invalid=np.bincount(unit[columns.choice == INVALID_REPLY], minlength=n_units),
    )


@dataclass(frozen=True)
class UnitValues:
    """Per unit (model, condition, item): the metric ratios' parts, recall by position, the
    reply pairs, and whether every pass was answered."""

    numerators: FloatArray  # (units × _RATIOS)
    denominators: FloatArray
    recall_hits: FloatArray  # (units × positions)
    recall_base: FloatArray
    pairs: IntArray  # (units × 4): AB, BA, AA, BB
    complete: BoolArray  # every pass of the unit answered


def unit_values(units: Units) -> UnitValues:
    width = units.choice_at.shape[1]
    positions = np.arange(width)
    in_item = positions[None, :] < units.n_options[:, None]
    answered = units.choice_at >= 0
    complete = np.all(answered | ~in_item, axis=1)
    offsets = np.where(answered, (units.choice_at - positions) % units.n_options[:, None], -1)
    ordered = np.sort(offsets, axis=1)
    new_value = ordered >= 0
    new_value[:, 1:] &= ordered[:, 1:] != ordered[:, :-1]
    distinct = new_value.sum(axis=1)
    first, second = units.choice_at[:, 0], units.choice_at[:, 1]
    correct_first, correct_second = first == 0, second == 1
    comparable = answered.sum(axis=1) >= 2
    complete_f = complete.astype(np.float64)
    numerators = np.column_stack(
        [
            (correct_second.astype(np.float64) - correct_first) * complete,
            (distinct == 1) & complete,
            correct_first & complete,
            correct_second & complete,
            units.invalid,
            (distinct > 1) & comparable,
        ]
    ).astype(np.float64)
    denominators = np.column_stack(
        [complete_f, complete_f, complete_f, complete_f, units.replies, comparable]
    ).astype(np.float64)
    hits = (units.choice_at == positions) & complete[:, None] & in_item
    base = complete[:, None] & in_item
    pair_kind = (
        np.column_stack(
            [
                correct_first & correct_second,
                (first == 1) & (second == 0),
                (first == 0) & (second == 0),
                (first == 1) & (second == 1),
            ]
        )
        & (complete & (units.n_options == 2))[:, None]
    )
    return UnitValues(
        complete=complete,
        numerators=numerators,
        denominators=denominators,
        recall_hits=hits.astype(np.float64),
        recall_base=base.astype(np.float64),
        pairs=pair_kind.astype(np.int64),
    )


def _interval(samples: FloatArray) -> tuple[float | None, float | None]:
    low, high = percentile_intervals(samples[:, None])
    return (None, None) if np.isnan(low[0]) else (float(low[0]), float(high[0]))


def _metric(total_num: float, total_den: float, samples: FloatArray) -> MetricValue:
    low, high = _interval(samples) if total_den > 0 else (None, None)
    return MetricValue(
        value=total_num / total_den if total_den > 0 else None,
        n=round(total_den),
        ci_low=low,
        ci_high=high,
    )


def _absolute(pf: MetricValue, samples: FloatArray) -> MetricValue:
    if pf.value is None:
        return MetricValue(value=None, n=pf.n)
    low, high = _interval(np.abs(samples))
    return MetricValue(value=abs(pf.value), n=pf.n, ci_low=low, ci_high=high)


def _recall_std(recalls: FloatArray) -> FloatArray:
    """Population standard deviation over the positions that have a recall, per row."""
    with np.errstate(invalid="ignore"):
        present = ~np.isnan(recalls)
        counted = present.sum(axis=1)
        mean = np.where(present, recalls, 0.0).sum(axis=1) / np.maximum(counted, 1)
        spread = np.where(present, (recalls - mean[:, None]) ** 2, 0.0).sum(axis=1)
        return np.where(counted >= 2, np.sqrt(spread / np.maximum(counted, 1)), np.nan)


def summarize_units(
    values: UnitValues,
    rows: IntArray,
    items: IntArray,
    resamples: int,
    rng: np.random.Generator,
) -> tuple[dict[str, MetricValue], dict[str, MetricValue]]:
    """The metrics over the given units, and the recall by position of the correct option. The
    interval resamples questions (``items``, one per row): an item's units in several conditions
    are drawn together, not as independent questions."""
    width = values.recall_hits.shape[1]
    num = np.hstack([values.numerators[rows], values.recall_hits[rows]])
    den = np.hstack([values.denominators[rows], values.recall_base[rows]])
    totals_num, totals_den = num.sum(axis=0), den.sum(axis=0)
    samples = bootstrap_ratios(*_summed_by(items, num, den), resamples, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(
            totals_den > 0, totals_num / np.where(totals_den > 0, totals_den, 1), np.nan
        )
    ratio = {name: index for index, name in enumerate(_RATIOS)}
    n_ratio = len(_RATIOS)

    def column(name: str) -> MetricValue:
        index = ratio[name]
        return _metric(float(totals_num[index]), float(totals_den[index]), samples[:, index])

    pf = column("PF")
    complete = float(totals_den[ratio["PF"]])
    recall_now = recall[None, n_ratio:]
    std_value = _recall_std(recall_now)[0]
    std_low, std_high = _interval(_recall_std(samples[:, n_ratio:]))
    metrics = {
        "PF": pf,
        "abs_PF": _absolute(pf, samples[:, ratio["PF"]]),
        "PC": column("PC"),
        "acc_correct_first": column("acc_correct_first"),
        "acc_correct_second": column("acc_correct_second"),
        "invalid_rate": column("invalid_rate"),
        "n_pairs": MetricValue(value=complete, n=round(complete)),
        "recall_std": MetricValue(
            value=None if np.isnan(std_value) else float(std_value),
            n=round(complete),
            ci_low=std_low if not np.isnan(std_value) else None,
            ci_high=std_high if not np.isnan(std_value) else None,
        ),
        "fluctuation_rate": column("fluctuation"),
    }
    by_position = {
        chr(ord("A") + j): _metric(
            float(totals_num[n_ratio + j]), float(totals_den[n_ratio + j]), samples[:, n_ratio + j]
        )
        for j in range(width)
        if totals_den[n_ratio + j] > 0
    }
    return metrics, by_position


def _summed_by(groups: IntArray, num: FloatArray, den: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The rows of ``num`` and ``den`` summed within each group (one row per group present)."""
    _, inverse = np.unique(groups, return_inverse=True)
    stacked = np.hstack([num, den]).astype(np.float64)
    total = np.zeros((int(inverse.max()) + 1 if len(inverse) else 0, stacked.shape[1]))
    np.add.at(total, inverse, stacked)
    return total[:, : num.shape[1]], total[:, num.shape[1] :]


def position_bias_metrics(
    columns: PositionColumns, options: PositionBiasOptions
) -> PositionBiasResponse:
    units = unit_table(columns)
    values = unit_values(units)
    models: ModelMetrics = {}
    recall: dict[str, dict[str, MetricValue]] = {}
    pairs: dict[str, PairCounts] = {}
    incomplete: dict[str, int] = {}
    by_condition: dict[str, ModelMetrics] = {}
    for m, model in enumerate(columns.model.names):
        rows = np.flatnonzero(units.model == m)
        incomplete[model] = int((~values.complete[rows]).sum())
        rng = model_rng(options.seed, model, "position")
        models[model], recall[model] = summarize_units(
            values, rows, units.item[rows], options.bootstrap, rng
        )
        AB, BA, AA, BB = (int(total) for total in values.pairs[rows].sum(axis=0))
        pairs[model] = PairCounts(AB=AB, BA=BA, AA=AA, BB=BB)
        for c, condition in enumerate(columns.condition.names):
            subset = rows[units.condition[rows] == c]
            if len(subset):
                rng = model_rng(options.seed, f"{model}|{condition}", "position")
                metrics, _ = summarize_units(
                    values, subset, units.item[subset], options.bootstrap, rng
                )
                by_condition.setdefault(condition, {})[model] = metrics
    return PositionBiasResponse(
        models=models,
        by_condition=by_condition,
        pairs=pairs,
        recall_by_position=recall,
        incomplete_items=incomplete,
        settings=options,
    )
