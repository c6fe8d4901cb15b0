"""A key's limits as the key store keeps them (columns of ``evaluator_api_keys``, migration
0017); ``shared.key_limits`` applies them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

BudgetPeriod = Literal["day", "month"]


@dataclass(frozen=True)
class KeyLimits:
    """A key's limits, each None for none: requests per minute (every surface), queued or
    running jobs, and tokens per ``budget_period`` (the gateway's model calls)."""

    rpm: int | None = None
    max_concurrent_jobs: int | None = None
    token_budget: int | None = None
    budget_period: BudgetPeriod = "month"


NO_LIMITS = KeyLimits()
LIMIT_COLUMNS = ("rpm", "max_concurrent_jobs", "token_budget", "budget_period")


def limits_of(row: sa.Row[Any]) -> KeyLimits:
    return KeyLimits(
        rpm=row.rpm,
        max_concurrent_jobs=row.max_concurrent_jobs,
        token_budget=row.token_budget,
        budget_period="day" if row.budget_period == "day" else "month",
    )


def limit_values(limits: KeyLimits) -> dict[str, Any]:
    budgeted = limits.token_budget is not None
    return {
        "rpm": limits.rpm,
        "max_concurrent_jobs": limits.max_concurrent_jobs,
        "token_budget": limits.token_budget,
        "budget_period": limits.budget_period if budgeted else None,
    }
