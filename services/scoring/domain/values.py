"""Value-level consistency (docs/method.md §1.4 "for maths the same formulas also run on the
normalised answer values"): per question, the agreement among the paraphrases' answer values."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steadfast.services.scoring.domain.columns import INVALID, IntArray
from steadfast.services.scoring.domain.questions import (
    MISSING,
    BoolArray,
    ConsistencyColumns,
    FloatArray,
    Questions,
    normalize_entropy,
)


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
#: 1 / count for a present cell, 0 for an empty one (count 0)
_INVERSE_PRESENT = np.r_[0.0, 1.0 / np.arange(1, _MAX_GRID_WIDTH + 1)]


def _value_counts_grid(
    table: Questions, variant: IntArray, usable: IntArray
) -> tuple[ValueCounts, IntArray]:
    """The values in a (variant × question) grid, the originals in its first row; every
    paraphrase cell counts its equals. Variant-major, so each step is one contiguous pass over
    all questions."""
    n, width = len(table.model), table.width
    # value codes index the distinct values of one request: int32 holds them
    flat = np.full(n * width, MISSING, dtype=np.int32)
    flat[variant * n + table.record_question] = usable
    grid = flat.reshape(width, n)
    original = grid[0].astype(np.int64)
    rows = grid[1:]
    present = rows >= 0
    equals = np.zeros(rows.shape, dtype=np.int8)
    for row in rows:
        equals += rows == row
    equals *= present
    top = equals.max(axis=0).astype(np.int64) if width > 1 else np.zeros(n, dtype=np.int64)
    # a value seen c times has c cells, each counting c: Σ_cells c = Σ_values c², etc.
    counts = ValueCounts(
        k=present.sum(axis=0),
        top=top,
        sum_squares=equals.sum(axis=0, dtype=np.float64),
        sum_count_log=_LOG[equals].sum(axis=0),
        distinct=np.rint(_INVERSE_PRESENT[equals].sum(axis=0)).astype(np.int64),
        at_top=np.rint((equals == top).sum(axis=0) / np.maximum(top, 1)).astype(np.int64),
        original=((rows == original) & (original >= 0)).sum(axis=0),
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


def value_table(columns: ConsistencyColumns, table: Questions) -> ValueQuestions | None:
    """The same formulas on normalised answer values, over the questions the label level keeps
    (one dropped for a tied label majority too: METHOD drops them "before every mean"); a value
    tie goes to the original's value when it is among the tied (so the original then matches)."""
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
    used = (table.exclusion == MISSING) & (original >= 0) & (count.k > 0)
    return ValueQuestions(
        original=original,
        k=count.k,
        top=count.top,
        match=(count.original == count.top) & (count.k > 0),
        tie=tie,
        mode_share=count.top / safe_k,
        iid_mismatch=1.0 - count.sum_squares / safe_k**2,
        normalized_entropy=normalize_entropy(np.maximum(entropy, 0.0), count.k),
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
