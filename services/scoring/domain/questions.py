"""Per-question values of docs/method.md §1.4, vectorised with numpy.

Unit: one (question, model). o = label of the original (variant 0), p_c = share of the valid
paraphrase labels equal to c. ``invalid`` answers are left out of p_c and k and counted; a question
whose original is invalid (or missing) or that has no valid paraphrase is skipped and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steadfast.services.scoring.domain.columns import (
    CORRECT,
    INVALID,
    VALID_LABELS,
    Coded,
    IntArray,
    cell_index,
    first_duplicate,
    label_codes,
)
from steadfast.shared.contracts.scoring import ConsistencyRecord
from steadfast.shared.errors import Unprocessable

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

EXCLUSIONS = ("original_missing", "original_invalid", "no_valid_paraphrase", "tie")
MISSING = -1


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


def normalize_entropy(entropy: FloatArray, k: IntArray) -> FloatArray:
    """entropy / ln k, 0 when k ≤ 1 (docs/method.md §1.4: divided by ln k as the study did)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k > 1, entropy / np.log(np.maximum(k, 2)), 0.0)


_ABSENT = 4  # label code of an empty cell of the label grid


def _duplicate(slot: IntArray) -> Unprocessable:
    row = first_duplicate(slot)
    return Unprocessable(
        f"records[{row}] repeats the (item_id, model, variant) of an earlier record",
        field=f"records[{row}]",
        title="Duplicate record",
    )


def _label_tally(
    question: IntArray, columns: ConsistencyColumns, n: int
) -> tuple[IntArray, IntArray]:
    """Per question, the counts of the paraphrase labels (correct, incorrect, not_attempted,
    invalid) and the original's label (MISSING when absent); refuses a repeated
    variant."""
    width = int(columns.variant.max()) + 1
    if n * width <= 8 * len(question) + 1024:
        # dense variant numbers: one int8 (variant × question) grid, the originals first
        slot = columns.variant * n + question
        flat = np.full(n * width, _ABSENT, dtype=np.int8)
        flat[slot] = columns.label
        if np.count_nonzero(flat != _ABSENT) != len(slot):
            raise _duplicate(slot)
        grid = flat.reshape(width, n)
        paraphrases = np.column_stack([(grid[1:] == code).sum(axis=0) for code in range(4)])
        original = grid[0].astype(np.int64)
        original[original == _ABSENT] = MISSING
        return paraphrases, original
    slot = question * width + columns.variant
    if len(np.unique(slot)) < len(slot):
        raise _duplicate(slot)
    is_original = columns.variant == 0
    tally = np.bincount(question * 8 + is_original * 4 + columns.label, minlength=n * 8)
    tally = tally.reshape(n, 8)
    original = np.full(n, MISSING, dtype=np.int64)
    for code in (INVALID, 2, 1, CORRECT):
        original[tally[:, 4 + code] > 0] = code
    return tally[:, :4], original


def question_table(columns: ConsistencyColumns, drop_majority_ties: bool) -> Questions:
    n_items = len(columns.item.names)
    question, cells = cell_index(columns.model.codes, columns.item.codes, n_items)
    n = len(cells)
    tally, original = _label_tally(question, columns, n)
    correct, incorrect, declined = tally[:, 0], tally[:, 1], tally[:, 2]
    counts = tally[:, :VALID_LABELS]
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
        width=int(columns.variant.max()) + 1,
        model=cells // n_items,
        item=cells % n_items,
        original=original,
        counts=counts,
        k=k,
        invalid=tally[:, INVALID] + (original == INVALID),
        majority=majority,
        tie=tie,
        p=np.column_stack(shares),
        iid_mismatch=1.0 - (shares[0] ** 2 + shares[1] ** 2 + shares[2] ** 2),
        mode_share=top / safe_k,
        entropy=np.asarray(entropy, dtype=np.float64),
        normalized_entropy=normalize_entropy(np.asarray(entropy, dtype=np.float64), k),
        distinct=(correct > 0).astype(np.int64) + (incorrect > 0) + (declined > 0),
        exclusion=exclusion,
    )
