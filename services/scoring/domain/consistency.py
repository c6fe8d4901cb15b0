"""Paraphrase-consistency metrics of METHOD.md §1.4, vectorised with numpy.

Unit: one (question, model). o = label of the original (variant 0), p_c = share of the valid
paraphrase labels equal to c. ``invalid`` answers are left out of p_c and k and counted; a question
whose original is invalid (or missing) or that has no valid paraphrase is skipped and counted.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from services.scoring.domain.bootstrap import ratio_intervals
from services.scoring.domain.columns import (
    CORRECT,
    INVALID,
    LABELS,
    VALID_LABELS,
    Coded,
    IntArray,
    cell_index,
    first_duplicate,
    label_codes,
    segment_starts,
)
from shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRecord,
    ConsistencyResponse,
    GroupFlips,
    ItemConsistency,
    Label,
    MetricValue,
    ModelCounts,
    ModelMetrics,
    SlotAccuracy,
)
from shared.problems import ProblemError

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: METHOD §1.4 per-model metrics, in report order
METRIC_NAMES = (
    "A_orig",
    "A_expected",
    "A_majority",
    "mismatch_rate",
    "iid_mismatch",
    "mode_share",
    "normalized_entropy",
    "A_any",
    "A_any_incl_orig",
    "A_strict",
    "flip_rate",
    "recovery_rate",
    "conflict_rate",
    "conflict_rate_given_orig_correct",
    "conflict_rate_given_orig_not_correct",
    "A_any_given_orig_not_correct",
)
VALUE_METRIC_NAMES = (
    "value_mismatch_rate",
    "value_iid_mismatch",
    "value_mode_share",
    "value_normalized_entropy",
    "value_conflict_rate",
    "value_distinct",
)
EXCLUSIONS = ("original_missing", "original_invalid", "no_valid_paraphrase", "tie")
MISSING = -1
_EPSILON = 1e-9


@dataclass(frozen=True)
class ConsistencyColumns:
    """The records as columns; ``model``/``item``/``value``/``kind``/``tone`` are codes."""

    model: Coded
    item: Coded
    variant: IntArray
    label: NDArray[np.int8]
    value: Coded | None = None
    kind: Coded | None = None
    tone: Coded | None = None

    def __len__(self) -> int:
        return len(self.variant)


def columns_from_records(records: Sequence[ConsistencyRecord]) -> ConsistencyColumns:
    return ConsistencyColumns(
        model=Coded.of([record.model for record in records]),
        item=Coded.of([record.item_id for record in records]),
        variant=np.fromiter((r.variant for r in records), dtype=np.int64, count=len(records)),
        label=label_codes(record.label for record in records),
        value=Coded.optional([record.value for record in records]),
        kind=Coded.optional([record.kind for record in records]),
        tone=Coded.optional([record.tone for record in records]),
    )


@dataclass(frozen=True)
class Questions:
    """Per-question arrays (one row per (model, question), sorted by model then item id)."""

    record_question: IntArray  # question row of each record
    record_slot: IntArray  # question row * width + variant, of each record
    width: int  # highest variant + 1
    model: IntArray
    item: IntArray
    original: IntArray  # label code of the original, MISSING when absent
    counts: IntArray  # (questions × 3) valid paraphrase labels by code
    k: IntArray
    invalid: IntArray  # invalid answers, original included
    majority: IntArray
    tie: BoolArray
    p: FloatArray
    iid_mismatch: FloatArray
    mode_share: FloatArray
    entropy: FloatArray
    normalized_entropy: FloatArray
    distinct: IntArray
    exclusion: IntArray  # index into EXCLUSIONS, MISSING when the question counts


def _normalized(entropy: FloatArray, k: IntArray) -> FloatArray:
    """entropy / ln k, 0 when k ≤ 1 (METHOD §1.4: divided by ln k as the study did)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k > 1, entropy / np.log(np.maximum(k, 2)), 0.0)


def _check_unique_variants(question: IntArray, variant: IntArray, n_questions: int) -> IntArray:
    """Each record's slot ``question * width + variant``; 422 naming a repeated one."""
    width = int(variant.max()) + 1
    slot = question * width + variant
    if n_questions * width <= 8 * len(slot) + 1024:
        repeated = bool(np.bincount(slot, minlength=n_questions * width).max() > 1)
    else:
        repeated = len(np.unique(slot)) < len(slot)
    if repeated:
        row = first_duplicate(slot)
        raise ProblemError(
            422,
            "Duplicate record",
            f"records[{row}] repeats the (item_id, model, variant) of an earlier record",
            field=f"records[{row}]",
        )
    return slot


def question_table(columns: ConsistencyColumns, drop_majority_ties: bool) -> Questions:
    n_items = len(columns.item.names)
    question, cells = cell_index(columns.model.codes, columns.item.codes, n_items)
    n = len(cells)
    slot = _check_unique_variants(question, columns.variant, n)
    # one pass: per question, labels of the paraphrases (0..3) and of the original (4..7)
    is_original = columns.variant == 0
    tally = np.bincount(question * 8 + is_original * 4 + columns.label, minlength=n * 8)
    tally = tally.reshape(n, 8)
    correct, incorrect, declined = tally[:, 0], tally[:, 1], tally[:, 2]
    counts = tally[:, :VALID_LABELS]
    original = np.full(n, MISSING, dtype=np.int64)
    for code in (INVALID, 2, 1, CORRECT):
        original[tally[:, 4 + code] > 0] = code
    k = correct + incorrect + declined
    top = np.maximum(np.maximum(correct, incorrect), declined)
    safe_k = np.maximum(k, 1)
    shares = [correct / safe_k, incorrect / safe_k, declined / safe_k]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = 0.0 - sum(
            np.where(share > 0, share * np.log(np.where(share > 0, share, 1.0)), 0.0)
            for share in shares
        )
    n_top = (correct == top).astype(np.int64) + (incorrect == top) + (declined == top)
    tie = (n_top > 1) & (k > 0)
    # the first maximum in the order correct > incorrect > not_attempted
    majority = np.where(correct == top, CORRECT, np.where(incorrect == top, 1, 2))
    exclusion = np.full(n, MISSING, dtype=np.int64)
    if drop_majority_ties:
        exclusion[tie] = EXCLUSIONS.index("tie")
    exclusion[k == 0] = EXCLUSIONS.index("no_valid_paraphrase")
    exclusion[original == INVALID] = EXCLUSIONS.index("original_invalid")
    exclusion[original == MISSING] = EXCLUSIONS.index("original_missing")
    return Questions(
        record_question=question,
        record_slot=slot,
        width=int(columns.variant.max()) + 1,
        model=cells // n_items,
        item=cells % n_items,
        original=original,
        counts=counts,
        k=k,
        invalid=tally[:, INVALID] + tally[:, 4 + INVALID],
        majority=majority,
        tie=tie,
        p=np.column_stack(shares),
        iid_mismatch=1.0 - (shares[0] ** 2 + shares[1] ** 2 + shares[2] ** 2),
        mode_share=top / safe_k,
        entropy=np.asarray(entropy, dtype=np.float64),
        normalized_entropy=_normalized(np.asarray(entropy, dtype=np.float64), k),
        distinct=(correct > 0).astype(np.int64) + (incorrect > 0) + (declined > 0),
        exclusion=exclusion,
    )


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
    subsets = {"flip_rate": orig_correct, "recovery_rate": orig_wrong}
    subsets["conflict_rate_given_orig_correct"] = orig_correct
    subsets["conflict_rate_given_orig_not_correct"] = orig_wrong
    subsets["A_any_given_orig_not_correct"] = orig_wrong
    # column-major: each metric's column is written and summed contiguously
    num = np.empty((len(used), len(METRIC_NAMES)), order="F")
    den = np.empty((len(used), len(METRIC_NAMES)), order="F")
    for index, (name, values) in enumerate(zip(METRIC_NAMES, numerators, strict=True)):
        counted = used & subsets[name] if name in subsets else used
        den[:, index] = counted
        num[:, index] = np.where(counted, values, 0.0)
    return num, den


def model_rng(seed: int, model: str, salt: str = "") -> np.random.Generator:
    """One stream per (seed, model name, salt), independent of the other models present."""
    return np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(f"{salt}|{model}".encode())])


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


def _rate(numerator: float, denominator: float) -> MetricValue:
    numerator, denominator = float(numerator), float(denominator)
    return MetricValue(
        value=numerator / denominator if denominator > 0 else None, n=round(denominator)
    )


def _tally(keys: IntArray, rows: BoolArray, size: int) -> IntArray:
    """``np.bincount(keys[rows], minlength=size)`` without copying the selected rows: the
    others go to one extra bin that is dropped."""
    return np.bincount(np.where(rows, keys, size), minlength=size + 1)[:size]


def _counted_paraphrases(columns: ConsistencyColumns, table: Questions) -> BoolArray:
    """Valid paraphrase answers of the questions that count."""
    counted = (table.exclusion == MISSING)[table.record_question]
    return counted & (columns.variant > 0) & (columns.label != INVALID)


def _slot_accuracy(
    columns: ConsistencyColumns, table: Questions, rows: BoolArray
) -> dict[str, SlotAccuracy]:
    """Accuracy of each paraphrase position j over the questions that count."""
    if table.width <= len(columns) + 1:
        slots, position = np.arange(table.width), columns.variant
    else:  # sparse variant numbers: count by their distinct values
        slots, position = np.unique(columns.variant, return_inverse=True)
    n_slots = len(slots)
    key = (columns.model.codes * n_slots + position) * 2 + (columns.label == CORRECT)
    tally = _tally(key, rows, len(columns.model.names) * n_slots * 2).reshape(-1, n_slots, 2)
    correct, totals = tally[:, :, 1], tally[:, :, 0] + tally[:, :, 1]
    result = {}
    for m, model in enumerate(columns.model.names):
        by_slot = {
            str(slots[j]): _rate(float(correct[m, j]), float(totals[m, j]))
            for j in range(n_slots)
            if slots[j] > 0 and totals[m, j] > 0
        }
        values = [metric.value for metric in by_slot.values() if metric.value is not None]
        result[model] = SlotAccuracy(
            min=min(values) if values else None,
            max=max(values) if values else None,
            by_slot=by_slot,
        )
    return result


def _flips_by(
    columns: ConsistencyColumns, table: Questions, group: Coded | None, rows: BoolArray
) -> dict[str, dict[str, GroupFlips]]:
    """Per model and paraphrase kind (or tone): flip rate and change rate of single paraphrases."""
    if group is None:
        return {}
    original = table.original[table.record_question]
    label = columns.label
    n_groups = len(group.names)
    # one tally of (model, group, original correct, paraphrase correct, paraphrase ≠ original)
    state = (original == CORRECT) * 4 + (label == CORRECT) * 2 + (label != original)
    key = (columns.model.codes * n_groups + group.codes) * 8 + state
    size = len(columns.model.names) * n_groups * 8
    tally = _tally(key, rows & (group.codes >= 0), size)
    tally = tally.reshape(-1, n_groups, 2, 2, 2).astype(np.float64)
    flip_base = tally[:, :, 1].sum(axis=(2, 3))
    flips = tally[:, :, 1, 0].sum(axis=2)
    change_base = tally.sum(axis=(2, 3, 4))
    changes = tally[:, :, :, :, 1].sum(axis=(2, 3))
    return {
        model: {
            name: GroupFlips(
                flip_rate=_rate(flips[m, g], flip_base[m, g]),
                change_rate=_rate(changes[m, g], change_base[m, g]),
            )
            for g, name in enumerate(group.names)
            if change_base[m, g] > 0
        }
        for m, model in enumerate(columns.model.names)
    }


@dataclass(frozen=True)
class ValueCounts:
    """Per question, over its valid paraphrase values: how many (k), the largest count (top),
    Σ count² , Σ count·ln count, how many distinct values, how many values reach ``top``, and the
    count of the original's value."""

    k: IntArray
    top: IntArray
    sum_squares: FloatArray
    sum_count_log: FloatArray
    distinct: IntArray
    at_top: IntArray
    original: IntArray


#: widest paraphrase row counted cell by cell; wider (or sparse) variant numbers sort instead
_MAX_GRID_WIDTH = 64


_LOG = np.log(np.maximum(np.arange(_MAX_GRID_WIDTH + 1), 1))
_INVERSE = 1.0 / np.maximum(np.arange(_MAX_GRID_WIDTH + 1), 1)


def _value_counts_grid(
    table: Questions, variant: IntArray, usable: IntArray
) -> tuple[ValueCounts, IntArray]:
    """Each question's values as one short row (the original first); every paraphrase cell
    counts its equals."""
    n, width = len(table.model), table.width
    # value codes index the distinct values of one request: int32 holds them
    flat = np.full(n * width, MISSING, dtype=np.int32)
    flat[table.record_slot] = usable
    grid = flat.reshape(n, width)
    original = grid[:, 0].astype(np.int64)
    rows = grid[:, 1:]
    present = rows >= 0
    equals = np.zeros(rows.shape, dtype=np.int8)
    for column in range(width - 1):
        equals += rows == rows[:, column : column + 1]
    equals *= present
    top = equals.max(axis=1).astype(np.int64) if width > 1 else np.zeros(n, dtype=np.int64)
    # a value seen c times has c cells, each counting c: Σ_cells c = Σ_values c², etc.
    counts = ValueCounts(
        k=present.sum(axis=1),
        top=top,
        sum_squares=equals.sum(axis=1, dtype=np.float64),
        sum_count_log=_LOG[equals].sum(axis=1),
        distinct=np.rint((_INVERSE[equals] * present).sum(axis=1)).astype(np.int64),
        at_top=np.rint((equals == top[:, None]).sum(axis=1) / np.maximum(top, 1)).astype(np.int64),
        original=((rows == original[:, None]) & (original >= 0)[:, None]).sum(axis=1),
    )
    return counts, original


def _value_counts_sorted(
    table: Questions, variant: IntArray, usable: IntArray
) -> tuple[ValueCounts, IntArray]:
    """The same from one sort of (question, value) keys, for wide or sparse variant numbers."""
    n = len(table.model)
    is_original = (variant == 0) & (usable >= 0)
    original = np.full(n, MISSING, dtype=np.int64)
    original[table.record_question[is_original]] = usable[is_original]
    paraphrase = (variant > 0) & (usable >= 0)
    value = usable
    n_values = int(value.max()) + 1
    keys, counts = np.unique(
        table.record_question[paraphrase] * n_values + value[paraphrase], return_counts=True
    )
    owner = keys // n_values
    top = np.zeros(n, dtype=np.int64)
    original_count = np.zeros(n, dtype=np.int64)
    if len(keys):
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        top[owner[starts]] = np.maximum.reduceat(counts, starts)
        target = np.arange(n) * n_values + original
        position = np.minimum(np.searchsorted(keys, target), len(keys) - 1)
        hit = (original >= 0) & (keys[position] == target)
        original_count[hit] = counts[position[hit]]

    def per_question(weights: NDArray[np.generic] | None) -> FloatArray:
        return np.bincount(owner, weights=weights, minlength=n).astype(np.float64)

    return ValueCounts(
        k=per_question(counts).astype(np.int64),
        top=top,
        sum_squares=per_question(counts**2),
        sum_count_log=per_question(counts * np.log(counts)),
        distinct=per_question(None).astype(np.int64),
        at_top=per_question(counts == top[owner]).astype(np.int64),
        original=original_count,
    ), original


@dataclass(frozen=True)
class ValueQuestions:
    """Per-question value-level arrays (same rows as :class:`Questions`)."""

    original: IntArray  # value code of the original, MISSING when absent
    k: IntArray
    top: IntArray
    match: BoolArray
    tie: BoolArray
    mode_share: FloatArray
    iid_mismatch: FloatArray
    normalized_entropy: FloatArray
    distinct: IntArray
    used: BoolArray


def value_table(
    columns: ConsistencyColumns, table: Questions, drop_majority_ties: bool
) -> ValueQuestions | None:
    """The same formulas on normalised answer values; a value tie goes to the original's value
    when it is among the tied (so the original then matches)."""
    if columns.value is None:
        return None
    n, value = len(table.model), columns.value.codes
    # the value of an invalid answer takes no part
    usable = np.where(columns.label != INVALID, value, MISSING)
    dense = n * table.width <= 8 * len(value) + 1024 and table.width <= _MAX_GRID_WIDTH
    count, original = (_value_counts_grid if dense else _value_counts_sorted)(
        table, columns.variant, usable
    )
    safe_k = np.maximum(count.k, 1)
    # entropy = −Σ (c/k) ln(c/k) = ln k − Σ c ln c / k
    entropy = np.where(count.k > 0, np.log(safe_k) - count.sum_count_log / safe_k, 0.0)
    tie = count.at_top > 1
    label_skip = (table.exclusion != MISSING) & (table.exclusion != EXCLUSIONS.index("tie"))
    used = ~label_skip & (original >= 0) & (count.k > 0)
    if drop_majority_ties:
        used &= ~tie
    return ValueQuestions(
        original=original,
        k=count.k,
        top=count.top,
        match=(count.original == count.top) & (count.k > 0),
        tie=tie,
        mode_share=count.top / safe_k,
        iid_mismatch=1.0 - count.sum_squares / safe_k**2,
        normalized_entropy=_normalized(np.maximum(entropy, 0.0), count.k),
        distinct=count.distinct,
        used=used,
    )


def value_matrices(values: ValueQuestions) -> tuple[FloatArray, FloatArray]:
    numerators = np.column_stack(
        [
            ~values.match,
            values.iid_mismatch,
            values.mode_share,
            values.normalized_entropy,
            values.mode_share < 1.0,
            values.distinct,
        ]
    ).astype(np.float64)
    denominators = np.repeat(values.used.astype(np.float64)[:, None], numerators.shape[1], axis=1)
    return numerators * values.used[:, None], denominators


def consistency_metrics(
    columns: ConsistencyColumns, options: ConsistencyOptions
) -> ConsistencyResponse:
    """Every METHOD §1.4 metric per model, with counts and 95% bootstrap intervals."""
    table = question_table(columns, options.drop_majority_ties)
    numerators, denominators = metric_matrices(table, options.strict_threshold)
    values = value_table(columns, table, options.drop_majority_ties)
    names: tuple[str, ...] = METRIC_NAMES
    if values is not None:
        # one bootstrap for both families: the same resamples of each model's questions
        value_num, value_den = value_matrices(values)
        numerators = np.hstack([numerators, value_num])
        denominators = np.hstack([denominators, value_den])
        names = METRIC_NAMES + VALUE_METRIC_NAMES
    per_model = _per_model(columns, table, names, (numerators, denominators), options)
    paraphrases = _counted_paraphrases(columns, table)
    return ConsistencyResponse(
        models={
            model: {name: metrics[name] for name in METRIC_NAMES}
            for model, metrics in per_model.items()
        },
        counts=_counts(columns, table),
        slot_accuracy=_slot_accuracy(columns, table, paraphrases),
        value_level=None
        if values is None
        else {
            model: {name: metrics[name] for name in VALUE_METRIC_NAMES}
            for model, metrics in per_model.items()
        },
        flips_by_kind=_flips_by(columns, table, columns.kind, paraphrases),
        flips_by_tone=_flips_by(columns, table, columns.tone, paraphrases),
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
                match=bool(table.original[q] == table.majority[q]) if has_answers else None,
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
