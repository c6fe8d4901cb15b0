"""Wire contracts of ``/v1/keys``: the admin API of the one key store (``steadfast keys`` over
HTTP)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import STORABLE_TEXT, Contract

KeyScope = Literal["evaluate", "read", "proxy", "admin"]
#: a tenant's name: a short slug (lower-case letters, digits, ``-`` and ``_``)
TENANT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
Tenant = Annotated[str, msgspec.Meta(min_length=1, max_length=63, pattern=TENANT_PATTERN)]
BudgetPeriod = Literal["day", "month"]
#: requests per minute (each process counts its own: see docs/operations.md)
Rpm = Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]
#: queued or running jobs (evaluations and position-bias jobs) at once; 0: none may be made
MaxJobs = Annotated[int, msgspec.Meta(ge=0, le=100_000)]
#: tokens (input and output) a ``budget_period`` through the gateway
TokenBudget = Annotated[int, msgspec.Meta(ge=1, le=10**15)]


class KeyCreate(Contract, kw_only=True):
    """``POST /v1/keys``: a new key, named for who or what it is for."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=STORABLE_TEXT)]
    #: what it may do; default ``evaluate``, ``read``, ``proxy`` (``admin``: everything, and
    #: this API)
    scopes: Annotated[list[KeyScope], msgspec.Meta(min_length=1, max_length=4)] | None = None
    #: whose resources the key makes and sees (evaluations, datasets, position-bias jobs,
    #: monitors, studies); another tenant's are a 404 to it. An ``admin`` key sees every
    #: tenant's. A short slug; default ``default``
    tenant: Tenant = "default"
    #: limits, none when absent: requests per minute on every API the key reaches
    rpm: Rpm | None = None
    #: evaluations and position-bias jobs queued or running at once
    max_concurrent_jobs: MaxJobs | None = None
    #: tokens a ``budget_period`` through the gateway (strategies' extra calls count)
    token_budget: TokenBudget | None = None
    budget_period: BudgetPeriod = "month"


class KeyLimitsInfo(Contract, kw_only=True):
    """A key's limits (null: none)."""

    rpm: int | None = None
    max_concurrent_jobs: int | None = None
    token_budget: int | None = None
    #: the period of ``token_budget`` (null without a budget)
    budget_period: BudgetPeriod | None = None


class KeyUpdate(Contract, kw_only=True):
    """``PATCH /v1/keys/{key_id}``: new limits; a field left out stays, ``null`` removes the
    limit. The gateway applies them within its key cache (``STEADFAST_GATEWAY_KEY_CACHE_S``)."""

    rpm: Rpm | msgspec.UnsetType | None = msgspec.UNSET
    max_concurrent_jobs: MaxJobs | msgspec.UnsetType | None = msgspec.UNSET
    token_budget: TokenBudget | msgspec.UnsetType | None = msgspec.UNSET
    budget_period: BudgetPeriod | msgspec.UnsetType = msgspec.UNSET


class KeyInfo(Contract, kw_only=True):
    """A key's record: never the key itself, which is shown once, when it is made."""

    id: str
    name: str
    scopes: list[KeyScope]
    #: whose resources it makes and sees
    tenant: str = "default"
    created_at: str
    revoked_at: str | None = None
    limits: KeyLimitsInfo = msgspec.field(default_factory=KeyLimitsInfo)


class KeyCreated(KeyInfo, kw_only=True):
    """The new key's record and the key, shown this once (only its sha256 is kept)."""

    key: str


class KeyList(Contract, kw_only=True):
    """Every key, active and revoked, oldest first."""

    keys: list[KeyInfo]


class UsagePeriod(Contract, kw_only=True):
    """A key's usage in one period: requests (each API call it made, on every service), model
    calls and tokens (the gateway's, strategies' extra calls included)."""

    #: ``day:2026-12-05`` or ``month:2026-12`` (UTC)
    period: str
    requests: int
    calls: int
    input_tokens: int
    output_tokens: int
    #: tokens left of the key's budget when it is of this period (null otherwise)
    budget_left: int | None = None


class KeyUsage(Contract, kw_only=True):
    """``GET /v1/keys/{key_id}/usage``: the key's usage today and this month (UTC), and its
    limits. The gateway writes its counts every second."""

    key_id: str
    limits: KeyLimitsInfo
    day: UsagePeriod
    month: UsagePeriod
