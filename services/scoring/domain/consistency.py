"""Per-model paraphrase-consistency metrics of docs/method.md §1.4 with 95% bootstrap intervals
over questions, plus the per-slot accuracy range, flips by paraphrase kind/tone, counts and the
per-question rows. The per-question values come from :mod:`.questions` and :mod:`.values`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from steadfast.services.scoring.domain.bootstrap import model_rng, ratio_intervals
from steadfast.services.scoring.domain.columns import (
    CORRECT,
    INVALID,
    LABELS,
    VALID_LABELS,
    IntArray,
    segment_starts,
)
from steadfast.services.scoring.domain.questions import (
    EXCLUSIONS,
    MISSING,
    BoolArray,
    ConsistencyColumns,
    FloatArray,
    Questions,
    columns_from_records,
    question_table,
)
from steadfast.services.scoring.domain.values import ValueQuestions, value_matrices, value_table
from steadfast.shared.contracts.scoring import (
    METRIC_NAMES,
    ConsistencyOptions,
    ConsistencyResponse,
    GroupFlips,
    ItemConsistency,
    Label,
    MetricValue,
    ModelCounts,
    ModelMetrics,
    SlotAccuracy,
)

__all__ = [
    "METRIC_NAMES",
    "VALUE_METRIC_NAMES",
    "ConsistencyColumns",
    "columns_from_records",
    "consistency_metrics",
    "metric_matrices",
    "question_table",
]

VALUE_METRIC_NAMES = (
    "value_mismatch_rate",
    "value_iid_mismatch",
    "value_mode_share",
    "value_normalized_entropy",
    "value_conflict_rate",
    "value_distinct",
)
_EPSILON = 1e-9


def metric_matrices(table: Questions, strict_threshold: float) -> tuple[FloatArray, FloatArray]:
    """(numerator, denominator) per question for every METRIC_NAMES entry, 0 where excluded."""
    used = table.exclusion == MISSING
    orig_correct = table.original == CORRECT
    orig_wrong = ~orig_correct
    majority_correct = table.majority == CORRECT
    correct = table.counts[:, CORRECT]
    any_correct = correct > 0
    conflict = table.mode_share < 1.0
    numerators = [
        orig_correct,
        table.p[:, CORRECT],
        majority_correct,
        table.original != table.majority,
        table.iid_mismatch,
        table.mode_share,
        table.normalized_entropy,
        any_correct,
        orig_correct | any_correct,
        correct >= strict_threshold * table.k - _EPSILON,
        orig_correct & ~majority_correct,
        orig_wrong & majority_correct,
        conflict,
        conflict & orig_correct,
        conflict & orig_wrong,
        any_correct & orig_wrong,
    ]
    # the denominator of a mean is every question that counts, of a conditional rate a subset
    counted_correct, counted_wrong = used & orig_correct, used & orig_wrong
    subsets = {"flip_rate": counted_correct, "recovery_rate": counted_wrong}
    subsets["conflict_rate_given_orig_correct"] = counted_correct
    subsets["conflict_rate_given_orig_not_correct"] = counted_wrong
    subsets["A_any_given_orig_not_correct"] = counted_wrong
    # column-major: each metric's column is written and summed contiguously
    num = np.empty((len(used), len(METRIC_NAMES)), order="F")
    den = np.empty((len(used), len(METRIC_NAMES)), order="F")
    for index, (name, values) in enumerate(zip(METRIC_NAMES, numerators, strict=True)):
        den[:, index] = subsets.get(name, used)
        num[:, index] = values
    num *= den
    return num, den


def summarize(
    names: Sequence[str],
    numerators: FloatArray,
    denominators: FloatArray,
    resamples: int,
    rng: np.random.Generator,
) -> dict[str, MetricValue]:
    """Ratio metrics over the rows given, with bootstrap intervals over the rows that count."""
    totals_num, totals_den = numerators.sum(axis=0), denominators.sum(axis=0)
    if resamples:
        counted = denominators.any(axis=1)
        low, high = ratio_intervals(numerators[counted], denominators[counted], resamples, rng)
    else:
        low = high = np.full(len(names), np.nan)
    result = {}
    for index, name in enumerate(names):
        total = float(totals_den[index])
        result[name] = MetricValue(
            value=float(totals_num[index] / total) if total > 0 else None,
            n=round(total),
            ci_low=None if np.isnan(low[index]) or total == 0 else float(low[index]),
            ci_high=None if np.isnan(high[index]) or total == 0 else float(high[index]),
        )
    return result


def _per_model(
    columns: ConsistencyColumns,
    table: Questions,
    names: Sequence[str],
    matrices: tuple[FloatArray, FloatArray],
    options: ConsistencyOptions,
    salt: str = "",
) -> ModelMetrics:
    starts = segment_starts(table.model, len(columns.model.names))
    ends = [*starts[1:], len(table.model)]
    numerators, denominators = matrices
    return {
        model: summarize(
            names,
            numerators[start:end],
            denominators[start:end],
            options.bootstrap,
            model_rng(options.seed, model, salt),
        )
        for model, start, end in zip(columns.model.names, starts, ends, strict=True)
    }


def _counts(columns: ConsistencyColumns, table: Questions) -> dict[str, ModelCounts]:
    n_models = len(columns.model.names)

    def per_model(mask: BoolArray, weights: IntArray | None = None) -> IntArray:
        chosen = None if weights is None else weights[mask]
        counted = np.bincount(table.model[mask], weights=chosen, minlength=n_models)
        return counted.astype(np.int64)

    everything = np.ones(len(table.model), dtype=bool)
    questions = per_model(everything)
    invalid = per_model(everything, table.invalid)
    excluded = {name: per_model(table.exclusion == code) for code, name in enumerate(EXCLUSIONS)}
    used = per_model(table.exclusion == MISSING)
    not_skipped = (table.exclusion == MISSING) | (table.exclusion == EXCLUSIONS.index("tie"))
    ties = per_model(table.tie & not_skipped)
    skipped = questions - used - excluded["tie"]
    return {
        model: ModelCounts(
            questions=int(questions[m]),
            used=int(used[m]),
            invalid_answers=int(invalid[m]),
            skipped=int(skipped[m]),
            skipped_original_invalid=int(excluded["original_invalid"][m]),
            skipped_original_missing=int(excluded["original_missing"][m]),
            skipped_no_valid_paraphrase=int(excluded["no_valid_paraphrase"][m]),
            majority_ties=int(ties[m]),
            dropped_ties=int(excluded["tie"][m]),
        )
        for m, model in enumerate(columns.model.names)
    }


def _tally(keys: IntArray, rows: BoolArray, size: int) -> IntArray:
    """``np.bincount(keys[rows], minlength=size)`` without copying the selected rows: the
    others go to one extra bin that is dropped."""
    return np.bincount(np.where(rows, keys, size), minlength=size + 1)[:size]


def _counted_paraphrases(columns: ConsistencyColumns, table: Questions) -> BoolArray:
    """Valid paraphrase answers of the questions that count."""
    counted = (table.exclusion == MISSING)[table.record_question]
    return counted & (columns.variant > 0) & (columns.label != INVALID)


#: cells (questions × columns) the bootstrapped matrices may have; breakdowns beyond it are
#: tallied per model instead, with no interval (memory)
_MAX_BREAKDOWN_CELLS = 20_000_000

#: a rate with no answers to count
_NO_ANSWERS = MetricValue(value=None, n=0)


@dataclass(frozen=True)
class _Breakdown:
    """A rate per group (a paraphrase slot, kind or tone), counted per question: column g of
    ``numerators`` and ``denominators`` counts group g's answers of each question, so the
    bootstrap keeps a question's answers together."""

    metric: str
    groups: list[str]
    numerators: FloatArray
    denominators: FloatArray

    @property
    def names(self) -> list[str]:
        return [f"{self.metric}/{group}" for group in self.groups]


@dataclass(frozen=True)
class _Tally:
    """A rate per group counted per model, for the (model, group) pairs that have answers: a
    breakdown too large to bootstrap, so without an interval."""

    metric: str
    groups: list[str]
    model: IntArray
    group: IntArray
    numerators: FloatArray
    denominators: FloatArray

    def values(self, model: int) -> dict[str, MetricValue]:
        rows = np.flatnonzero(self.model == model)
        return {
            f"{self.metric}/{self.groups[self.group[row]]}": MetricValue(
                value=float(self.numerators[row] / self.denominators[row]),
                n=round(self.denominators[row]),
            )
            for row in rows
        }


#: (name, rows, hits): the share of ``rows`` that are ``hits``
_Rate = tuple[str, BoolArray, BoolArray]


class _BreakdownBuilder:
    """Counts rates per question while the cells they take fit in the budget, per model after
    that; the size is known before any matrix is made."""

    def __init__(self, table: Questions, budget: int) -> None:
        self._table = table
        self._budget = budget

    def build(
        self, rates: Sequence[_Rate], group: tuple[IntArray, list[str]]
    ) -> list[_Breakdown | _Tally]:
        """Rates read together (a kind's flip and change rates) per group of ``group`` (codes
        per record): all with intervals or none."""
        codes, groups = group
        cells = len(self._table.model) * len(groups) * len(rates)
        if cells <= self._budget:
            self._budget -= cells
            return [self._per_question(rate, codes, groups) for rate in rates]
        return [self._per_model(rate, codes, groups) for rate in rates]

    def _per_question(self, rate: _Rate, codes: IntArray, groups: list[str]) -> _Breakdown:
        metric, rows, hits = rate
        n_questions, n_groups = len(self._table.model), len(groups)
        cell = self._table.record_question * n_groups + codes

        def tally(selected: BoolArray) -> FloatArray:
            counted = _tally(cell, selected, n_questions * n_groups)
            return counted.astype(np.float64).reshape(n_questions, n_groups)

        return _Breakdown(metric, groups, tally(rows & hits), tally(rows))

    def _per_model(self, rate: _Rate, codes: IntArray, groups: list[str]) -> _Tally:
        metric, rows, hits = rate
        owner = self._table.model[self._table.record_question].astype(np.int64)
        pairs, pair = np.unique((owner * len(groups) + codes)[rows], return_inverse=True)
        return _Tally(
            metric,
            groups,
            model=pairs // len(groups),
            group=pairs % len(groups),
            numerators=np.bincount(pair, hits[rows], len(pairs)).astype(np.float64),
            denominators=np.bincount(pair, minlength=len(pairs)).astype(np.float64),
        )


def _breakdowns(
    columns: ConsistencyColumns, table: Questions, rows: BoolArray
) -> dict[str, _Breakdown | _Tally]:
    """Accuracy per paraphrase slot; flip and change rates per paraphrase kind and tone."""
    budget = _MAX_BREAKDOWN_CELLS - len(table.model) * len(METRIC_NAMES)
    builder = _BreakdownBuilder(table, budget)
    if table.width <= len(columns) + 1:
        slots, position = np.arange(table.width), columns.variant
    else:  # sparse variant numbers: count by their distinct values
        slots, position = np.unique(columns.variant, return_inverse=True)
    label = columns.label
    result = builder.build([("slot", rows, label == CORRECT)], (position, list(map(str, slots))))
    original = table.original[table.record_question]
    for kind, group in (("kind", columns.kind), ("tone", columns.tone)):
        if group is None:
            continue
        in_group = rows & (group.codes >= 0)
        flipped = in_group & (original == CORRECT)
        rates = [
            (f"{kind}_flip", flipped, label != CORRECT),
            (f"{kind}_change", in_group, label != original),
        ]
        result += builder.build(rates, (np.maximum(group.codes, 0), list(group.names)))
    return {breakdown.metric: breakdown for breakdown in result}


def _slot_accuracy(metrics: ModelMetrics, slots: _Breakdown | _Tally) -> dict[str, SlotAccuracy]:
    """Accuracy of each paraphrase position j (1..k) over the questions that count."""
    result = {}
    for model, values in metrics.items():
        by_slot = {
            slot: metric
            for slot in slots.groups
            if slot != "0" and (metric := values.get(f"slot/{slot}", _NO_ANSWERS)).n > 0
        }
        shares = [metric.value for metric in by_slot.values() if metric.value is not None]
        result[model] = SlotAccuracy(
            min=min(shares) if shares else None,
            max=max(shares) if shares else None,
            by_slot=by_slot,
        )
    return result


def _flips_by(
    metrics: ModelMetrics, breakdowns: dict[str, _Breakdown | _Tally], kind: str
) -> dict[str, dict[str, GroupFlips]]:
    """Per model and paraphrase kind (or tone): flip rate and change rate of single paraphrases."""
    if f"{kind}_flip" not in breakdowns:
        return {}
    groups = breakdowns[f"{kind}_flip"].groups
    result: dict[str, dict[str, GroupFlips]] = {}
    for model, values in metrics.items():
        result[model] = {}
        for group in groups:
            change = values.get(f"{kind}_change/{group}", _NO_ANSWERS)
            if change.n > 0:
                flip = values.get(f"{kind}_flip/{group}", _NO_ANSWERS)
                result[model][group] = GroupFlips(flip_rate=flip, change_rate=change)
    return result


def _with_breakdowns(
    columns: ConsistencyColumns,
    table: Questions,
    label_matrices: tuple[FloatArray, FloatArray],
    breakdowns: Iterable[_Breakdown | _Tally],
    options: ConsistencyOptions,
) -> ModelMetrics:
    """The label-level metrics and the breakdowns' rates, from one bootstrap per model: the
    breakdowns count only questions the label level counts, so its intervals stay as they are."""
    per_question = [b for b in breakdowns if isinstance(b, _Breakdown)]
    names = [*METRIC_NAMES, *(name for breakdown in per_question for name in breakdown.names)]
    # column-major like the label matrices, so each column sums as it did on its own
    numerators = np.asfortranarray(
        np.hstack([label_matrices[0], *(b.numerators for b in per_question)])
    )
    denominators = np.asfortranarray(
        np.hstack([label_matrices[1], *(b.denominators for b in per_question)])
    )
    metrics = _per_model(columns, table, names, (numerators, denominators), options)
    for tally in (b for b in breakdowns if isinstance(b, _Tally)):
        for m, model in enumerate(columns.model.names):
            metrics[model].update(tally.values(m))
    return metrics


def consistency_metrics(
    columns: ConsistencyColumns, options: ConsistencyOptions
) -> ConsistencyResponse:
    """Every docs/method.md §1.4 metric per model, with counts and 95% bootstrap intervals."""
    table = question_table(columns, options.drop_majority_ties)
    label_matrices = metric_matrices(table, options.strict_threshold)
    values = value_table(columns, table)
    breakdowns = _breakdowns(columns, table, _counted_paraphrases(columns, table))
    per_model = _with_breakdowns(columns, table, label_matrices, breakdowns.values(), options)
    if values is not None:
        # bootstrapped over its own questions, so the label level's intervals do not change
        # with whether values were given
        value_metrics = _per_model(
            columns, table, VALUE_METRIC_NAMES, value_matrices(values), options, salt="values"
        )
        for model, metrics in value_metrics.items():
            per_model[model].update(metrics)
    return ConsistencyResponse(
        models={
            model: {name: metrics[name] for name in METRIC_NAMES}
            for model, metrics in per_model.items()
        },
        counts=_counts(columns, table),
        slot_accuracy=_slot_accuracy(per_model, breakdowns["slot"]),
        value_level=None
        if values is None
        else {
            model: {name: metrics[name] for name in VALUE_METRIC_NAMES}
            for model, metrics in per_model.items()
        },
        flips_by_kind=_flips_by(per_model, breakdowns, "kind"),
        flips_by_tone=_flips_by(per_model, breakdowns, "tone"),
        settings=options,
        items=item_rows(columns, table, values) if options.per_item else None,
    )


def _label(code: int) -> Label | None:
    return LABELS[code] if code >= 0 else None


def _majority_values(columns: ConsistencyColumns, table: Questions) -> dict[int, str]:
    """Majority value per question: the most frequent; on a tie the original's value if tied,
    else the tied value seen first (lowest paraphrase index)."""
    assert columns.value is not None
    question, value, variant = table.record_question, columns.value.codes, columns.variant
    rows = np.flatnonzero((columns.label != INVALID) & (value >= 0))
    rows = rows[np.lexsort((variant[rows], question[rows]))]
    seen: dict[int, dict[int, int]] = {}
    original: dict[int, int] = {}
    for row in rows.tolist():
        q = int(question[row])
        if variant[row] == 0:
            original[q] = int(value[row])
        else:
            tallies = seen.setdefault(q, {})
            tallies[int(value[row])] = tallies.get(int(value[row]), 0) + 1
    majority = {}
    for q, tallies in seen.items():
        top = max(tallies.values())
        tied = [code for code, count in tallies.items() if count == top]  # first-seen order
        chosen = original[q] if original.get(q) in tied else tied[0]
        majority[q] = columns.value.names[chosen]
    return majority


def item_rows(
    columns: ConsistencyColumns, table: Questions, values: ValueQuestions | None
) -> list[ItemConsistency]:
    majority_values = _majority_values(columns, table) if values is not None else {}
    rows = []
    for q in range(len(table.model)):
        exclusion = int(table.exclusion[q])
        has_answers = table.k[q] > 0
        value_counts = values is not None and values.k[q] > 0
        rows.append(
            ItemConsistency(
                item_id=columns.item.names[table.item[q]],
                model=columns.model.names[table.model[q]],
                excluded=EXCLUSIONS[exclusion] if exclusion >= 0 else None,  # type: ignore[arg-type]
                original_label=_label(int(table.original[q])),
                k=int(table.k[q]),
                p={LABELS[c]: float(table.p[q, c]) for c in range(VALID_LABELS)},
                majority_label=_label(int(table.majority[q])) if has_answers else None,
                tie=bool(table.tie[q]),
                # a skipped original (invalid or missing) matches nothing
                match=bool(table.original[q] == table.majority[q])
                if has_answers and _label(int(table.original[q])) not in (None, "invalid")
                else None,
                iid_mismatch=float(table.iid_mismatch[q]) if has_answers else None,
                mode_share=float(table.mode_share[q]) if has_answers else None,
                entropy=float(table.entropy[q]) if has_answers else None,
                normalized_entropy=float(table.normalized_entropy[q]) if has_answers else None,
                distinct=int(table.distinct[q]),
                invalid=int(table.invalid[q]),
                majority_value=majority_values.get(q),
                value_tie=bool(values.tie[q]) if values is not None and value_counts else None,
                value_match=bool(values.match[q])
                if values is not None and value_counts and values.original[q] >= 0
                else None,
                value_mode_share=float(values.mode_share[q])
                if values is not None and value_counts
                else None,
                distinct_values=int(values.distinct[q]) if values is not None else None,
            )
        )
    return rows
