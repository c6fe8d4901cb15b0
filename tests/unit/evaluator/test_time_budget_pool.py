"""The time a job's paraphrase sets lend each other (``share_time_budget``)."""

from __future__ import annotations

from steadfast.services.evaluator.domain.job_context import TimeBudgetPool


def test_a_loan_is_at_most_one_budget_and_never_lent_twice() -> None:
    pool = TimeBudgetPool()
    assert pool.lend(60.0) == 0.0
    pool.settle(60.0, 0.0, 10.0)  # finished early: 50 s saved
    first = pool.lend(30.0)  # a budget of 30 s takes at most 30 more
    second = pool.lend(60.0)  # another lane, at the same time, gets what is left
    assert (first, second) == (30.0, 20.0)
    assert pool.lend(60.0) == 0.0


def test_a_failed_set_returns_its_loan_and_an_overrun_is_paid_back() -> None:
    pool = TimeBudgetPool()
    pool.settle(60.0, 0.0, 20.0)
    lent = pool.lend(60.0)
    pool.settle(60.0, lent, None)  # failed: the loan comes back whole
    assert pool.lend(60.0) == 40.0
    pool.settle(60.0, 40.0, 105.0)  # a set ran 5 s past its budget and loan
    pool.settle(60.0, 0.0, 45.0)  # 15 s saved, 5 of them owed
    assert pool.lend(60.0) == 10.0


def test_no_loan_takes_a_set_past_the_longest_budget() -> None:
    pool = TimeBudgetPool()
    pool.settle(3000.0, 0.0, 0.0)  # 3000 s saved
    # a 2000 s budget may take 1600 s more: 3600 s is the most a set may be given
    assert pool.lend(2000.0) == 1600.0
