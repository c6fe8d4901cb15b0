"""Limits and usage per API key (#28 item 4): requests per minute, a token budget per day or
month, and the usage of each key per period, recorded in the evaluator's database (table
``evaluator_key_usage``, made by its migration 0017) where every replica of the evaluator and
the gateway adds to the same rows. Concurrent jobs are counted by the evaluator (its jobs).

Requests per minute are counted in each process (a sliding one-minute window): a request costs
no database round trip, and ``N`` replicas of a service let a key make up to ``N × rpm``
requests a minute. Usage is added up in memory and written every ``flush_s`` seconds (one
upsert per key and period); a budget is checked against the tokens stored for the period, read
again at most every ``refresh_s`` seconds, plus what this process counted since."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import datetime
import functools
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from prometheus_client import Counter
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.errors import OverLimit
from steadfast.shared.key_limit_values import BudgetPeriod, KeyLimits

logger = logging.getLogger(__name__)

#: a key's usage per period (``day:2026-12-05``, ``month:2026-12``): requests, model calls and
#: tokens; made by the evaluator's migration 0017
key_usage = sa.Table(
    "evaluator_key_usage",
    sa.MetaData(),
    sa.Column("key_id", sa.String(32), primary_key=True),
    sa.Column("period", sa.String(16), primary_key=True),
    sa.Column("requests", sa.BigInteger, nullable=False, server_default=sa.text("0")),
    sa.Column("calls", sa.BigInteger, nullable=False, server_default=sa.text("0")),
    sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default=sa.text("0")),
    sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default=sa.text("0")),
    sa.Column("updated_at", sa.Float, nullable=False),
)

#: requests refused for a key's limit, by limit (never by key: one series per key would grow
#: without end)
LIMIT_REJECTIONS = Counter(
    "steadfast_key_limit_rejections_total",
    "Requests refused with 429 for their API key's limit, by limit (rpm, concurrent_jobs, "
    "token_budget).",
    ["limit"],
)

WINDOW_S = 60.0
#: (key, period) reads of the store a limiter keeps at most
MAX_REMEMBERED = 10_000


def _utc(now: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(now, datetime.UTC)


def period_of(kind: BudgetPeriod, now: float) -> str:
    """``day:2026-12-05`` or ``month:2026-12`` (UTC) of the moment ``now``."""
    # by the day's number: POSIX time has 86,400 s a day, and a request asks several times
    return _period_of_day(kind, int(now // 86_400))


@functools.lru_cache(maxsize=64)
def _period_of_day(kind: BudgetPeriod, day: int) -> str:
    moment = _utc(day * 86_400.0)
    return f"day:{moment:%Y-%m-%d}" if kind == "day" else f"month:{moment:%Y-%m}"


def seconds_left(kind: BudgetPeriod, now: float) -> float:
    """Seconds until the period of ``now`` ends (UTC midnight, the first of the next month)."""
    moment = _utc(now)
    start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if kind == "day":
        end = start + datetime.timedelta(days=1)
    else:
        end = (start.replace(day=1) + datetime.timedelta(days=32)).replace(day=1)
    return (end - moment).total_seconds()


@dataclass
class Counts:
    """A key's requests, model calls and tokens (in a period, or to add to it)."""

    requests: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Counts) -> None:
        self.requests += other.requests
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens


class UsageStore:
    """The usage rows of the keys: added to (an upsert that increments) and read."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, counts: dict[tuple[str, str], Counts]) -> None:
        if not counts:
            return
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        now = time.time()
        async with self.engine.begin() as connection:
            for (key_id, period), added in sorted(counts.items()):
                insert = dialect.insert(key_usage).values(
                    key_id=key_id,
                    period=period,
                    requests=added.requests,
                    calls=added.calls,
                    input_tokens=added.input_tokens,
                    output_tokens=added.output_tokens,
                    updated_at=now,
                )
                columns = ("requests", "calls", "input_tokens", "output_tokens")
                increments = {name: key_usage.c[name] + insert.excluded[name] for name in columns}
                statement = insert.on_conflict_do_update(
                    index_elements=["key_id", "period"],
                    set_={**increments, "updated_at": insert.excluded.updated_at},
                )
                await connection.execute(statement)

    async def of(self, key_id: str, periods: Iterable[str]) -> dict[str, Counts]:
        """The stored counts of ``key_id`` in each period (zeros for a period without a row)."""
        wanted = list(periods)
        query = sa.select(key_usage).where(
            key_usage.c.key_id == key_id, key_usage.c.period.in_(wanted)
        )
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        found = {
            row.period: Counts(row.requests, row.calls, row.input_tokens, row.output_tokens)
            for row in rows
        }
        return {period: found.get(period, Counts()) for period in wanted}


class RateWindow:
    """Requests per minute of each key in this process: the times of its last ``rpm`` requests
    (a sliding window), so a request costs a deque append."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._times: dict[str, collections.deque[float]] = {}

    def admit(self, key_id: str, rpm: int) -> float | None:
        """None when the request may go (and is counted); else the seconds to wait."""
        now = self.clock()
        times = self._times.get(key_id)
        if times is None:
            times = self._times[key_id] = collections.deque()
        while times and times[0] <= now - WINDOW_S:
            times.popleft()
        if len(times) >= rpm:
            while len(times) > rpm:  # a limit lowered since: keep only what it needs
                times.popleft()
            return times[0] + WINDOW_S - now
        times.append(now)
        return None


@dataclass
class _Stored:
    tokens: int
    read_at: float


class KeyLimiter:
    """The limits of the keys on a service's requests (requests per minute, the token budget)
    and their usage, buffered and written every ``flush_s`` seconds."""

    def __init__(
        self,
        store: UsageStore,
        *,
        flush_s: float = 1.0,
        refresh_s: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.flush_s = flush_s
        #: at least a flush apart: a budget check never writes and reads on every request
        self.refresh_s = max(refresh_s, flush_s)
        self.clock = clock
        self.window = RateWindow()
        self._pending: dict[tuple[str, str], Counts] = {}
        #: tokens stored for (key, period) when last read, and tokens counted here since
        self._stored: dict[tuple[str, str], _Stored] = {}
        self._since: dict[tuple[str, str], int] = collections.defaultdict(int)
        self._task: asyncio.Task[None] | None = None

    # -- limits ---------------------------------------------------------------------------

    def admit(self, grant: KeyGrant) -> None:
        """Counts the request against the key's requests per minute; :class:`OverLimit` when
        over it."""
        rpm = grant.limits.rpm
        if rpm is None:
            return
        wait = self.window.admit(grant.key_id, rpm)
        if wait is not None:
            raise refused(
                "rpm", f"the API key's limit of {rpm} requests per minute is reached", wait
            )

    async def check_budget(self, grant: KeyGrant) -> None:
        """:class:`OverLimit` when the key has used its token budget for the period (before
        any model call)."""
        limits = grant.limits
        if limits.token_budget is None:
            return
        now = self.clock()
        used = await self.tokens_used(grant.key_id, limits.budget_period, now)
        if used >= limits.token_budget:
            kind = limits.budget_period
            raise refused(
                "token_budget",
                f"the API key's token budget of {limits.token_budget} a {kind} is used up "
                f"({used} tokens this {kind})",
                seconds_left(kind, now),
            )

    async def tokens_used(self, key_id: str, kind: BudgetPeriod, now: float) -> int:
        slot = (key_id, period_of(kind, now))
        stored = self._stored.get(slot)
        if stored is None or now - stored.read_at >= self.refresh_s:
            if stored is None and len(self._stored) >= MAX_REMEMBERED:  # past periods' too
                self._stored.clear()
                self._since.clear()
            await self.flush()
            counts = (await self.store.of(key_id, [slot[1]]))[slot[1]]
            stored = self._stored[slot] = _Stored(counts.tokens, now)
            self._since[slot] = 0
        return stored.tokens + self._since[slot]

    # -- usage ----------------------------------------------------------------------------

    def record(
        self,
        key_id: str,
        *,
        requests: int = 0,
        calls: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> None:
        """Adds to the key's usage of the current day and month (written at the next flush)."""
        now = self.clock()
        added = Counts(requests, calls, input_tokens, output_tokens)
        for kind in ("day", "month"):
            slot = (key_id, period_of(kind, now))
            pending = self._pending.get(slot)
            if pending is None:
                pending = self._pending[slot] = Counts()
            pending.add(added)
            if slot in self._stored:
                self._since[slot] += added.tokens

    async def flush(self) -> None:
        """Writes the usage counted since the last flush."""
        pending, self._pending = self._pending, {}
        try:
            await self.store.add(pending)
        except Exception:
            for slot, counts in pending.items():  # kept for the next flush
                self._pending.setdefault(slot, Counts()).add(counts)
            raise

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="key-usage-flush")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(Exception):
            await self.flush()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.flush_s)
            try:
                await self.flush()
            except Exception:
                logger.warning("key usage not written (kept for the next try)", exc_info=True)


def refused(limit: str, detail: str, retry_after_s: float) -> OverLimit:
    """The refusal of a request over a key's limit, counted by limit."""
    LIMIT_REJECTIONS.labels(limit).inc()
    return OverLimit(detail, limit=limit, retry_after_s=retry_after_s)


def limits_text(limits: KeyLimits) -> str:
    """``rpm 60, jobs 2, 100000 tokens/day`` (``none`` without limits), for ``keys list``."""
    parts = []
    if limits.rpm is not None:
        parts.append(f"rpm {limits.rpm}")
    if limits.max_concurrent_jobs is not None:
        parts.append(f"jobs {limits.max_concurrent_jobs}")
    if limits.token_budget is not None:
        parts.append(f"{limits.token_budget} tokens/{limits.budget_period}")
    return ", ".join(parts) or "none"
