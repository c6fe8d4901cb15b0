"""``/v1/keys``: the admin API of the one key store (what ``steadfast keys`` does, over HTTP);
every call needs a key with the ``admin`` scope."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import msgspec
from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.exceptions import PermissionDeniedException
from litestar.params import JSONBody
from litestar.status_codes import HTTP_201_CREATED

from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.limits import grant_of
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.api_keys import DEFAULT_SCOPES, ApiKey, ApiKeyStore
from steadfast.shared.contracts.keys import (
    KeyCreate,
    KeyCreated,
    KeyInfo,
    KeyLimitsInfo,
    KeyList,
    KeyUpdate,
    KeyUsage,
    UsagePeriod,
)
from steadfast.shared.errors import not_found
from steadfast.shared.key_limit_values import KeyLimits
from steadfast.shared.key_limits import Counts, KeyLimiter, period_of
from steadfast.shared.problems import ProblemError, problem_responses
from steadfast.shared.tenancy import valid_tenant

ADMIN = {"scope": "admin"}
FORBIDDEN = {403: "The key lacks the `admin` scope"}
#: the ``opt`` of an endpoint any active key may call (it checks what the key may see itself)
ANY_KEY = {"any_key": True}


class KeyController(Controller):
    """``/v1/keys``: make, list and revoke API keys (the ``admin`` scope)."""

    path = "/v1/keys"
    tags = ["keys"]  # noqa: RUF012

    @post(
        "",
        operation_id="createApiKey",
        summary="Make an API key and show it once",
        opt=ADMIN,
        status_code=HTTP_201_CREATED,
        responses=problem_responses(FORBIDDEN),
    )
    async def create(
        self, data: JSONBody[KeyCreate], api_keys: NamedDependency[ApiKeyStore]
    ) -> Response[KeyCreated]:
        if not valid_tenant(data.tenant):  # the schema's pattern lets a final newline through
            detail = f"{data.tenant!r} is not a tenant name: 1-63 of a-z, 0-9, - and _"
            raise ProblemError(400, "Invalid request", detail, field="tenant", source="body")
        limits = KeyLimits(
            rpm=data.rpm,
            max_concurrent_jobs=data.max_concurrent_jobs,
            token_budget=data.token_budget,
            budget_period=data.budget_period,
        )
        record, key = await api_keys.create(
            data.name, data.scopes or DEFAULT_SCOPES, data.tenant, limits
        )
        shown = key_info(record)
        created = KeyCreated(**msgspec.structs.asdict(shown), key=key)
        return Response(created, status_code=HTTP_201_CREATED)

    @get(
        "",
        operation_id="listApiKeys",
        summary="Every key, oldest first (never the keys themselves)",
        opt=ADMIN,
        responses=problem_responses(FORBIDDEN),
    )
    async def list_keys(self, api_keys: NamedDependency[ApiKeyStore]) -> KeyList:
        return KeyList(keys=[key_info(record) for record in await api_keys.list()])

    @delete(
        "/{key_id:str}",
        operation_id="revokeApiKey",
        summary="Revoke a key: refused from the next call on (the gateway within its key cache)",
        opt=ADMIN,
        status_code=204,
        responses=problem_responses({**FORBIDDEN, 404: "No active key has this id"}),
    )
    async def revoke(self, key_id: StoredId, api_keys: NamedDependency[ApiKeyStore]) -> None:
        if not await api_keys.revoke(key_id):
            raise not_found("active key", key_id, "key_id")

    @patch(
        "/{key_id:str}",
        operation_id="updateApiKey",
        summary="Change a key's limits (a field left out stays, null removes the limit; the "
        "gateway applies them within its key cache)",
        opt=ADMIN,
        responses=problem_responses({**FORBIDDEN, 404: "No active key has this id"}),
    )
    async def update(
        self, key_id: StoredId, data: JSONBody[KeyUpdate], api_keys: NamedDependency[ApiKeyStore]
    ) -> KeyInfo:
        record = await api_keys.get(key_id)
        if record is None or record.revoked_at is not None:
            raise not_found("active key", key_id, "key_id")
        changes = {
            name: value
            for name in KeyUpdate.__struct_fields__
            if (value := getattr(data, name)) is not msgspec.UNSET
        }
        new = dataclasses.replace(record.limits, **changes)
        if not await api_keys.set_limits(key_id, new):
            raise not_found("active key", key_id, "key_id")
        return key_info(dataclasses.replace(record, limits=new))

    @get(
        "/{key_id:str}/usage",
        operation_id="getApiKeyUsage",
        summary="A key's usage today and this month (UTC) and its limits: any key's with the "
        "`admin` scope, else the calling key's own",
        opt=ANY_KEY,
        responses=problem_responses({403: "Another key's usage, without the `admin` scope"}),
    )
    async def usage(
        self,
        key_id: StoredId,
        request: Request[Any, Any, Any],
        api_keys: NamedDependency[ApiKeyStore],
        key_limiter: NamedDependency[KeyLimiter],
    ) -> KeyUsage:
        grant = grant_of(request)
        if grant is not None and grant.key_id != key_id and not grant.allows("admin"):
            message = "a key reads its own usage; another key's needs the `admin` scope"
            raise PermissionDeniedException(
                detail=message,
                extra=[{"key": "Authorization", "message": message, "source": "header"}],
            )
        record = await api_keys.get(key_id)
        if record is None:
            raise not_found("key", key_id, "key_id")
        await key_limiter.flush()  # this process's counts, written now
        now = time.time()
        day, month = period_of("day", now), period_of("month", now)
        counts = await key_limiter.store.of(key_id, [day, month])
        limits = record.limits
        budgeted = period_of(limits.budget_period, now) if limits.token_budget else None

        def period(name: str) -> UsagePeriod:
            used = counts[name]
            left = None
            if name == budgeted and limits.token_budget is not None:
                left = max(0, limits.token_budget - used.tokens)
            return _usage_period(name, used, left)

        return KeyUsage(
            key_id=key_id, limits=limits_info(limits), day=period(day), month=period(month)
        )


def _usage_period(name: str, used: Counts, budget_left: int | None) -> UsagePeriod:
    return UsagePeriod(
        period=name,
        requests=used.requests,
        calls=used.calls,
        input_tokens=used.input_tokens,
        output_tokens=used.output_tokens,
        budget_left=budget_left,
    )


def limits_info(limits: KeyLimits) -> KeyLimitsInfo:
    return KeyLimitsInfo(
        rpm=limits.rpm,
        max_concurrent_jobs=limits.max_concurrent_jobs,
        token_budget=limits.token_budget,
        budget_period=limits.budget_period if limits.token_budget is not None else None,
    )


def key_info(record: ApiKey) -> KeyInfo:
    return KeyInfo(
        id=record.id,
        name=record.name,
        scopes=list(record.scopes),
        tenant=record.tenant,
        created_at=iso(record.created_at) or "",
        revoked_at=iso(record.revoked_at),
        limits=limits_info(record.limits),
    )
