"""The one store of API keys, for every service a caller reaches (the evaluator's API, the
gateway's): a key is shown once, when it is made; only its sha256 is kept (keys are 256 random
bits, so a fast hash is enough: there is nothing to guess). The table lives in the evaluator's
database (its migrations make it); the gateway reads it there, remembering verdicts briefly."""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.shared.key_limit_values import (
    LIMIT_COLUMNS,
    NO_LIMITS,
    KeyLimits,
    limit_values,
    limits_of,
)

#: keys of the public API, stored as the sha256 of the key (the key itself is shown once);
#: made by the evaluator's migration 0005
api_keys = sa.Table(
    "evaluator_api_keys",
    sa.MetaData(),
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float),
    #: what the key may do, comma-separated (migration 0015)
    sa.Column("scopes", sa.String(100), nullable=False),
    #: whose resources the key makes and sees (migration 0016; see shared/tenancy.py)
    sa.Column("tenant", sa.String(100), nullable=False, server_default=sa.text("'default'")),
    #: the key's limits, NULL for none (migration 0017): requests per minute, queued or running
    #: jobs, tokens per ``budget_period`` (day or month)
    sa.Column("rpm", sa.Integer),
    sa.Column("max_concurrent_jobs", sa.Integer),
    sa.Column("token_budget", sa.BigInteger),
    sa.Column("budget_period", sa.String(8)),
)

KEY_PREFIX = "sf_"
#: what a key may do: start work (evaluations, datasets, monitors, studies...), read results,
#: use the gateway's endpoints for callers, and the admin API (keys; it implies every other)
Scope = Literal["evaluate", "read", "proxy", "admin"]
SCOPES: tuple[Scope, ...] = ("evaluate", "read", "proxy", "admin")
#: a new key's scopes unless others are asked for: everything but the admin API
DEFAULT_SCOPES: tuple[Scope, ...] = ("evaluate", "read", "proxy")
#: the tenant of a key made without one (and of every key made before tenants existed)
DEFAULT_TENANT = "default"
#: verdicts a ``CachedKeyCheck`` remembers at most
MAX_REMEMBERED = 10_000


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class ApiKey:
    """An API key's record: its id, name and dates; never the key itself, shown once when made."""

    id: str
    name: str
    created_at: float
    revoked_at: float | None
    scopes: tuple[Scope, ...] = DEFAULT_SCOPES
    tenant: str = DEFAULT_TENANT
    limits: KeyLimits = NO_LIMITS


@dataclass(frozen=True)
class KeyGrant:
    """What an active key presented with a request stands for: which key (its id, never the
    key), what it may do, whose resources it makes and sees (its tenant) and its limits. Guards
    put it on the request (``connection.state.api_key``)."""

    key_id: str
    scopes: frozenset[str]
    tenant: str = DEFAULT_TENANT
    limits: KeyLimits = NO_LIMITS

    def allows(self, needed: Scope) -> bool:
        return allows(self.scopes, needed)


def allows(scopes: frozenset[str], needed: Scope) -> bool:
    """Whether a key of ``scopes`` may do what needs ``needed`` (admin may do anything)."""
    return needed in scopes or "admin" in scopes


def _scopes(text: str) -> tuple[Scope, ...]:
    return tuple(scope for scope in SCOPES if scope in text.split(","))


#: a key's record as listed (never its hash)
_RECORDS = sa.select(
    api_keys.c.id,
    api_keys.c.name,
    api_keys.c.created_at,
    api_keys.c.revoked_at,
    api_keys.c.scopes,
    api_keys.c.tenant,
    *(api_keys.c[name] for name in LIMIT_COLUMNS),
)


def _record_of(row: sa.Row[Any]) -> ApiKey:
    return ApiKey(
        row.id,
        row.name,
        row.created_at,
        row.revoked_at,
        scopes=_scopes(row.scopes),
        tenant=row.tenant,
        limits=limits_of(row),
    )


class ApiKeyStore:
    """API keys in the database: made, listed, revoked, and whether a presented key is active
    (looked up by its hash)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create(
        self,
        name: str,
        scopes: Sequence[Scope] = DEFAULT_SCOPES,
        tenant: str = DEFAULT_TENANT,
        limits: KeyLimits = NO_LIMITS,
    ) -> tuple[ApiKey, str]:
        """A new key of ``tenant``: its record and the key itself (not stored, shown once)."""
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        record = ApiKey(
            id=f"key-{uuid.uuid4().hex[:16]}",
            name=name,
            created_at=time.time(),
            revoked_at=None,
            scopes=_scopes(",".join(scopes)),
            tenant=tenant,
            limits=limits,
        )
        async with self.engine.begin() as connection:
            await connection.execute(
                api_keys.insert().values(
                    id=record.id,
                    name=name,
                    key_hash=key_hash(key),
                    created_at=record.created_at,
                    scopes=",".join(record.scopes),
                    tenant=tenant,
                    **limit_values(limits),
                )
            )
        return record, key

    async def list(self) -> list[ApiKey]:
        async with self.engine.connect() as connection:
            rows = (await connection.execute(_RECORDS.order_by(api_keys.c.created_at))).all()
        return [_record_of(row) for row in rows]

    async def get(self, key_id: str) -> ApiKey | None:
        async with self.engine.connect() as connection:
            row = (await connection.execute(_RECORDS.where(api_keys.c.id == key_id))).first()
        return _record_of(row) if row is not None else None

    async def set_limits(self, key_id: str, limits: KeyLimits) -> bool:
        """A key's new limits; False when no active key has this id."""
        statement = (
            api_keys.update()
            .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
            .values(**limit_values(limits))
        )
        async with self.engine.begin() as connection:
            result = await connection.execute(statement)
        return bool(result.rowcount)

    async def revoke(self, key_id: str) -> bool:
        """False when no active key has this id."""
        statement = (
            api_keys.update()
            .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
            .values(revoked_at=time.time())
        )
        async with self.engine.begin() as connection:
            result = await connection.execute(statement)
        return bool(result.rowcount)

    async def grant_of(self, key: str) -> KeyGrant | None:
        """What an active key stands for; None for a key unknown or revoked."""
        query = sa.select(
            api_keys.c.id,
            api_keys.c.scopes,
            api_keys.c.tenant,
            *(api_keys.c[name] for name in LIMIT_COLUMNS),
        ).where(api_keys.c.key_hash == key_hash(key), api_keys.c.revoked_at.is_(None))
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).first()
        if row is None:
            return None
        return KeyGrant(
            row.id, frozenset(_scopes(row.scopes)), tenant=row.tenant, limits=limits_of(row)
        )


class CachedKeyCheck:
    """What a presented key may do, each verdict remembered for ``ttl_s`` seconds: a request
    costs a dictionary lookup, and a revoked key stops working within ``ttl_s``."""

    def __init__(
        self, store: ApiKeyStore, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.clock = clock
        self._verdicts: dict[str, tuple[KeyGrant | None, float]] = {}

    async def grant_of(self, key: str) -> KeyGrant | None:
        digest = key_hash(key)
        now = self.clock()
        remembered = self._verdicts.get(digest)
        if remembered is not None and remembered[1] > now:
            return remembered[0]
        grant = await self.store.grant_of(key)
        if len(self._verdicts) >= MAX_REMEMBERED:  # guessed keys must not grow it without end
            self._verdicts.clear()
        self._verdicts[digest] = (grant, now + self.ttl_s)
        return grant
