"""Percentile bootstrap over questions for many ratio metrics at once.

Each metric is a ratio Σ numerator / Σ denominator over the questions of one model; a plain mean
has denominator 1 for every question it counts. One resample is a vector of how often each
question was drawn, so every metric of every resample is one matrix product.
"""

from __future__ import annotations

import zlib

import numpy as np
from numpy.typing import NDArray

#: resamples drawn per block, to bound memory (block × questions weights)
_BLOCK_CELLS = 4_000_000


def model_rng(seed: int, model: str, salt: str = "") -> np.random.Generator:
    """One stream per (seed, model name, salt), independent of the other models present."""
    return np.random.default_rng([seed & 0xFFFFFFFF, zlib.crc32(f"{salt}|{model}".encode())])


def bootstrap_ratios(
    numerators: NDArray[np.float64],
    denominators: NDArray[np.float64],
    resamples: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Σnum/Σden of each column in each resample of the rows: (resamples × metrics), NaN where a
    resample's denominator is 0. ``numerators`` and ``denominators`` are (rows × metrics)."""
    n_rows, n_metrics = numerators.shape
    if resamples == 0 or n_rows == 0:
        return np.full((0, n_metrics), np.nan)
    stacked = np.hstack([numerators, denominators]).astype(np.float64)
    block = max(1, min(resamples, _BLOCK_CELLS // max(1, n_rows)))
    sums = []
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        drawn = rng.integers(0, n_rows, size=(size, n_rows), dtype=np.int64)
        drawn += (np.arange(size) * n_rows)[:, None]
        weights = np.bincount(drawn.ravel(), minlength=size * n_rows)
        sums.append(weights.reshape(size, n_rows).astype(np.float64) @ stacked)
    totals = np.vstack(sums)
    num, den = totals[:, :n_metrics], totals[:, n_metrics:]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_intervals(
    ratios: NDArray[np.float64], confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile interval of each column, NaN where every resample is NaN (or none exist)."""
    n_metrics = ratios.shape[1]
    low, high = np.full(n_metrics, np.nan), np.full(n_metrics, np.nan)
    has_value = ~np.all(np.isnan(ratios), axis=0) if len(ratios) else np.zeros(n_metrics, bool)
    if has_value.any():
        tail = (1.0 - confidence) / 2 * 100
        bounds = np.nanpercentile(ratios[:, has_value], [tail, 100 - tail], axis=0)
        low[has_value], high[has_value] = bounds[0], bounds[1]
    return low, high


def ratio_intervals(
    numerators: NDArray[np.float64],
    denominators: NDArray[np.float64],
    resamples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """95% percentile intervals of Σnum/Σden for each column, resampling the rows."""
    ratios = bootstrap_ratios(numerators, denominators, resamples, rng)
    return percentile_intervals(ratios, confidence)
