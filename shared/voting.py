"""Majority vote over the variants' answer keys (docs/method.md §1.5, tie rule of §1.4), for the
self-paraphrase proxy and the evaluator's per-question agreement.

Keys are task-aware answer values (:func:`shared.answers.answer_key`, the grader's normalised
value); a ``None`` key (no parseable answer) and a variant that was not answered take no part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

ORIGINAL = 0
#: voters needed for an agreement share
MIN_VOTERS = 2


@dataclass(frozen=True)
class Vote:
    """The outcome of a vote over answer keys: the winner, its votes, the voters, a tie."""

    winner: str | None
    count: int
    voters: int
    tied: bool

    @property
    def agreement(self) -> float | None:
        """The winner's share of the voters; None when fewer than two voted (one answer agrees
        with itself and tells nothing of consistency)."""
        return self.count / self.voters if self.voters >= MIN_VOTERS else None


def tally(keys: Sequence[str | None]) -> Vote:
    """``keys[0]`` is the original's. Ties go to the original's key when it is among the tied,
    else to the tied key seen first."""
    counts = Counter(key for key in keys if key is not None)
    voters = sum(counts.values())
    if not counts:
        return Vote(winner=None, count=0, voters=0, tied=False)
    top = max(counts.values())
    tied = [key for key in dict.fromkeys(keys) if key is not None and counts[key] == top]
    original = keys[ORIGINAL] if keys else None
    winner = original if original in tied else tied[0]
    return Vote(winner=winner, count=top, voters=voters, tied=len(tied) > 1)


def decided(keys: Sequence[str | None], pending: Sequence[int]) -> bool:
    """Whether answering the ``pending`` variants (indices into ``keys``, whose entries are
    placeholders) can no longer change the winner."""
    waiting = set(pending)
    if not waiting:
        return True
    counts = Counter(
        key for index, key in enumerate(keys) if index not in waiting and key is not None
    )
    if not counts:
        return False
    original = keys[ORIGINAL] if ORIGINAL not in waiting else None
    # on a tie the original's key wins, so it only needs to stay level with any other key
    if (
        original is not None
        and original in counts
        and counts[original] >= _best_other(counts, original) + len(waiting)
    ):
        return True
    # any other leader must stay strictly ahead, whatever the pending answers are
    leader = counts.most_common(1)[0][0]
    return counts[leader] > _best_other(counts, leader) + len(waiting)


def _best_other(counts: Counter[str], key: str) -> int:
    return max((count for other, count in counts.items() if other != key), default=0)
