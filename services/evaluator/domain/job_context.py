"""What the lanes of one running job share: its settings and items, and the signal that wakes
an idle answer lane when new variants are queued."""

from __future__ import annotations

import asyncio
import collections

from steadfast.services.evaluator.adapters.evaluations.rows import EvaluationRow, ItemRow
from steadfast.services.evaluator.domain.pipeline import gold_of
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings
from steadfast.shared.contracts.perturb import MAX_TIME_BUDGET_S
from steadfast.shared.contracts.scoring import Gold


class WorkSignal:
    """Wakes one idle lane per piece of new work: an event would wake every lane to race for
    one set of variants, and all but one would go back to sleep after a wasted claim."""

    def __init__(self) -> None:
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._unclaimed = 0  # notifications no lane was waiting for

    def notify(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._unclaimed += 1

    def notify_all(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, timeout_s: float) -> None:
        """Return when notified, or after ``timeout_s`` (lanes also poll the database)."""
        if self._unclaimed:
            self._unclaimed -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout_s)
        except TimeoutError:
            pass
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)


class TimeBudgetPool:
    """Paraphrase time a job's sets left unused, lent to the sets after them
    (``share_time_budget``): a set that ended before its budget (complete, or at its candidate
    cap) saved the rest, and a later set may take it on top of its own, up to its own budget
    again and never past the longest budget a set may have. What a set is lent is taken from
    the pool when it starts, so two lanes never lend the same seconds; a set that ran past its
    budget and loan (its last verification) is paid back from later savings."""

    def __init__(self) -> None:
        self.saved_s = 0.0

    def lend(self, budget_s: float) -> float:
        room = max(0.0, MAX_TIME_BUDGET_S - budget_s)
        lent = min(max(self.saved_s, 0.0), budget_s, room)
        self.saved_s -= lent
        return lent

    def settle(self, budget_s: float, lent_s: float, elapsed_s: float | None) -> None:
        """A set ended after ``elapsed_s`` of its ``budget_s`` + ``lent_s`` (none: it failed,
        the loan comes back whole)."""
        if elapsed_s is None:
            self.saved_s += lent_s
        else:
            self.saved_s += budget_s + lent_s - elapsed_s


class JobContext:
    """What the lanes of one job share: its settings and its items, loaded once."""

    def __init__(self, evaluation: EvaluationRow, items: list[ItemRow]) -> None:
        self.id = evaluation.id
        self.settings: EvaluationSettings = evaluation.settings
        self.models = evaluation.models
        self.items: dict[int, EvaluationItem] = {row.position: row.item for row in items}
        self.languages: dict[int, str] = {row.position: row.asked_in for row in items}
        self.golds: dict[int, Gold | None] = {
            row.position: gold_of(self.settings.task, row.item) for row in items
        }
        self._active = True
        self._checked_at = 0.0
        #: signalled when this process queued new variants, so an idle answer lane wakes at once
        self.work_added = WorkSignal()
        self.time_pool = TimeBudgetPool()
