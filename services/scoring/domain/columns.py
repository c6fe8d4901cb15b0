"""Columnar (numpy) form of metric records: strings become integer codes into sorted names, so
every result is independent of the order the records came in."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from steadfast.shared.contracts.scoring import Label

IntArray = NDArray[np.int64]

LABELS: tuple[Label, ...] = ("correct", "incorrect", "not_attempted", "invalid")
CORRECT, INCORRECT, NOT_ATTEMPTED, INVALID = range(4)
#: labels that count in p_c (docs/method.md §1.4); their codes are also the tie-break order
VALID_LABELS = 3
LABEL_CODES: dict[str, int] = {label: code for code, label in enumerate(LABELS)}


@dataclass(frozen=True)
class Coded:
    """Strings as codes: ``names[codes[i]]`` is the i-th string; code -1 stands for None."""

    names: list[str]
    codes: IntArray

    @classmethod
    def of(cls, values: Sequence[str | None]) -> Coded:
        names = sorted({value for value in values if value is not None})
        index = {name: code for code, name in enumerate(names)}
        codes = np.fromiter(
            (-1 if value is None else index[value] for value in values),
            dtype=np.int64,
            count=len(values),
        )
        return cls(names, codes)

    @classmethod
    def optional(cls, values: Sequence[str | None]) -> Coded | None:
        """None when every value is None."""
        return cls.of(values) if any(value is not None for value in values) else None


def cell_index(first: IntArray, second: IntArray, n_second: int) -> tuple[IntArray, IntArray]:
    """Dense ids of the distinct (first, second) pairs, in sorted order, and the pairs' cells.

    Returns (id of each row's pair, cell number ``first * n_second + second`` of each id)."""
    cells = first * n_second + second
    n_cells = int(cells.max()) + 1 if len(cells) else 0
    if n_cells <= 8 * len(cells) + 1024:
        present = np.zeros(n_cells, dtype=bool)
        present[cells] = True
        if present.all():  # every pair occurs: the cells are the ids already
            return cells, np.arange(n_cells)
        dense = np.cumsum(present) - 1
        return dense[cells], np.flatnonzero(present)
    unique, inverse = np.unique(cells, return_inverse=True)
    return inverse.astype(np.int64), unique


def first_duplicate(keys: IntArray) -> int | None:
    """Position of the first row whose key occurred in an earlier row, or None."""
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if len(repeated) == 0:
        return None
    return int(order[repeated + 1].min())


def segment_starts(sorted_groups: IntArray, n_groups: int) -> IntArray:
    """Start of each group's rows in an array sorted by group."""
    return np.searchsorted(sorted_groups, np.arange(n_groups)).astype(np.int64)


def label_codes(labels: Iterable[str]) -> NDArray[np.int8]:
    return np.fromiter((LABEL_CODES[label] for label in labels), dtype=np.int8)
