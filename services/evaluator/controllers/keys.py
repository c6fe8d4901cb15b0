"""``/v1/keys``: the admin API of the one key store (what ``steadfast keys`` does, over HTTP);
every call needs a key with the ``admin`` scope."""

from __future__ import annotations

import msgspec
from litestar import Controller, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.status_codes import HTTP_201_CREATED

from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.api_keys import DEFAULT_SCOPES, ApiKey, ApiKeyStore
from steadfast.shared.contracts.keys import KeyCreate, KeyCreated, KeyInfo, KeyList
from steadfast.shared.errors import not_found
from steadfast.shared.problems import ProblemError, problem_responses
from steadfast.shared.tenancy import valid_tenant

ADMIN = {"scope": "admin"}
FORBIDDEN = {403: "The key lacks the `admin` scope"}


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
        record, key = await api_keys.create(data.name, data.scopes or DEFAULT_SCOPES, data.tenant)
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


def key_info(record: ApiKey) -> KeyInfo:
    return KeyInfo(
        id=record.id,
        name=record.name,
        scopes=list(record.scopes),
        tenant=record.tenant,
        created_at=iso(record.created_at) or "",
        revoked_at=iso(record.revoked_at),
    )
