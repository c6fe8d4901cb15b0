"""The parts of the keys' limits that need no service: the one-minute window of requests, the
periods of the budgets and when they end, the budget's view of the usage."""

from __future__ import annotations

import datetime

import pytest

from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.errors import OverLimit
from steadfast.shared.key_limit_values import KeyLimits
from steadfast.shared.key_limits import (
    Counts,
    KeyLimiter,
    RateWindow,
    UsageStore,
    period_of,
    seconds_left,
)


def at(text: str) -> float:
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp()


def test_the_window_admits_rpm_requests_a_minute_and_says_when_the_next_may_go() -> None:
    now = [1000.0]
    window = RateWindow(clock=lambda: now[0])
    assert [window.admit("k", 3) for _ in range(3)] == [None, None, None]
    now[0] = 1020.0
    assert window.admit("k", 3) == pytest.approx(40.0)  # the first leaves the window at 1060
    assert window.admit("other", 3) is None  # each key its own
    now[0] = 1060.0
    assert window.admit("k", 3) is None
    assert window.admit("k", 1) is not None  # a lower limit since: counted against it


def test_periods_and_their_ends_are_utc_days_and_months() -> None:
    moment = at("2026-12-31T23:59:30")
    assert period_of("day", moment) == "day:2026-12-31"
    assert period_of("month", moment) == "month:2026-12"
    assert seconds_left("day", moment) == pytest.approx(30)
    assert seconds_left("month", moment) == pytest.approx(30)  # into January
    assert seconds_left("month", at("2026-02-01T00:00:00")) == pytest.approx(28 * 86400)
    # the first moment of a day and of a month is in it, the last one before is not
    assert period_of("day", at("2027-01-01T00:00:00")) == "day:2027-01-01"
    assert period_of("month", at("2027-01-01T00:00:00")) == "month:2027-01"
    assert period_of("day", at("2027-01-01T00:00:00") - 0.001) == "day:2026-12-31"
    assert period_of("month", at("2027-03-01T00:00:00") - 0.001) == "month:2027-02"


class MemoryStore(UsageStore):
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], Counts] = {}
        self.reads = 0

    async def add(self, counts: dict[tuple[str, str], Counts]) -> None:
        for slot, added in counts.items():
            self.rows.setdefault(slot, Counts()).add(added)

    async def of(self, key_id: str, periods: object) -> dict[str, Counts]:
        self.reads += 1
        return {p: self.rows.get((key_id, p), Counts()) for p in periods}  # type: ignore[attr-defined]


async def test_the_budget_counts_what_this_process_added_since_it_read_the_store() -> None:
    store = MemoryStore()
    now = [at("2026-12-05T12:00:00")]
    limiter = KeyLimiter(store, refresh_s=60, clock=lambda: now[0])
    grant = KeyGrant(
        "k", frozenset({"proxy"}), limits=KeyLimits(token_budget=100, budget_period="day")
    )
    await limiter.check_budget(grant)  # read: nothing used
    limiter.record("k", requests=1, calls=1, input_tokens=60, output_tokens=39)
    await limiter.check_budget(grant)  # 99 of 100: one more request may go
    assert store.reads == 1  # the second check read nothing
    limiter.record("k", input_tokens=1)
    with pytest.raises(OverLimit) as refused:
        await limiter.check_budget(grant)
    assert refused.value.limit == "token_budget"
    assert refused.value.retry_after_s == 12 * 3600  # until UTC midnight
    # another replica's tokens count once the store is read again
    other = KeyGrant("j", frozenset(), limits=KeyLimits(token_budget=10))
    store.rows[("j", period_of("month", now[0]))] = Counts(input_tokens=10)
    with pytest.raises(OverLimit):
        await limiter.check_budget(other)
    await limiter.flush()
    assert store.rows[("k", "day:2026-12-05")] == Counts(1, 1, 61, 39)
    assert store.rows[("k", "month:2026-12")] == Counts(1, 1, 61, 39)
