"""Jittered exponential backoff that honours the server's Retry-After."""

from __future__ import annotations

import random


def backoff_s(
    retry_number: int,
    *,
    base_s: float,
    max_s: float,
    retry_after_s: float | None,
    rng: random.Random,
) -> float:
    """Seconds to wait before retry ``retry_number`` (1 for the first retry).

    Half-jitter: between 50% and 100% of ``base_s * 2**(n-1)`` capped at ``max_s``, so
    concurrent callers spread out; never shorter than the server's Retry-After.
    """
    exponential = min(max_s, base_s * 2 ** (retry_number - 1))
    jittered = exponential * (0.5 + 0.5 * rng.random())
    return max(jittered, retry_after_s or 0.0)
