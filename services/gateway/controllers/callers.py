"""Who may call the gateway's endpoints for callers: with ``STEADFAST_GATEWAY_AUTH=keys`` an API
key of the one key store (the evaluator's, ``shared/api_keys.py``) or the services' internal
token; in the open mode anyone, except that the endpoints for the services (``/v1/generate``)
keep asking for the internal token when there is one."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

from steadfast.services.gateway.components import GatewayComponents
from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.components import components_of
from steadfast.shared.contracts.gateway import Usage
from steadfast.shared.guards import (
    INTERNAL_UNAUTHORIZED,
    has_internal_token,
    presented_key,
    require_internal_token,
)
from steadfast.shared.internal_token import INTERNAL_TOKEN_SCHEME

#: the ``opt`` of a handler the other services call too (its open mode keeps the token)
FOR_SERVICES = "for_services"
KEY_UNAUTHORIZED = (
    "No API key (`Authorization: Bearer <key>` or `X-API-Key`), or one unknown or revoked: "
    "asked for when the gateway runs with STEADFAST_GATEWAY_AUTH=keys"
)


async def require_caller(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    components = components_of(connection.app.state, GatewayComponents)
    settings = components.settings
    if has_internal_token(connection, settings.internal_token):
        return
    if components.keys is None:  # the open mode
        if handler.opt.get(FOR_SERVICES):
            await require_internal_token(connection, handler)
        return
    key = presented_key(connection)
    if key is None:
        raise _rejected("an API key is required: `Authorization: Bearer <key>` or `X-API-Key`")
    grant = await components.keys.grant_of(key)
    if grant is None:
        raise _rejected("the API key is unknown or revoked")
    connection.state.api_key = grant
    if not grant.allows("proxy"):
        message = "the API key lacks the scope `proxy` (steadfast keys create --scope proxy)"
        raise PermissionDeniedException(
            detail=message,
            extra=[{"key": "Authorization", "message": message, "source": "header"}],
        )
    limiter = components.key_limiter
    if limiter is not None:
        limiter.admit(grant)  # 429 over its requests per minute
        if connection.scope.get("method") == "POST":  # model calls: the budget, before any
            await limiter.check_budget(grant)
        limiter.record(grant.key_id, requests=1)


def charge_caller(connection: ASGIConnection[Any, Any, Any, Any], calls: int, usage: Usage) -> None:
    """Counts the model calls made for a request (a strategy's extra calls among them) and their
    tokens against the key it came with; nothing for the services' token or the open mode."""
    grant: KeyGrant | None = connection.state.get("api_key")
    if grant is None:
        return
    limiter = components_of(connection.app.state, GatewayComponents).key_limiter
    if limiter is not None:
        limiter.record(
            grant.key_id,
            calls=calls,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
        )


def _rejected(message: str) -> NotAuthorizedException:
    return NotAuthorizedException(
        detail=message,
        headers={"WWW-Authenticate": "Bearer"},
        extra=[{"key": "Authorization", "message": message, "source": "header"}],
    )


#: the 401 an endpoint for callers and the services documents
CALLER_UNAUTHORIZED = f"{KEY_UNAUTHORIZED}; or, for the services, {INTERNAL_UNAUTHORIZED}"
#: the 429 of a key over its limit
CALLER_RATE_LIMITED = (
    "Over the API key's limit, named in the problem's `limit`: its requests per minute (`rpm`) "
    "or its token budget for the day or month (`token_budget`, checked before any model call); "
    "Retry-After says when to ask again. Also: rate limited upstream after every retry"
)
#: the 403 of a key without the ``proxy`` scope
CALLER_FORBIDDEN = "The API key lacks the scope `proxy`"
#: either an API key or the services' token (the OpenAPI security of an endpoint for callers)
CALLER_SECURITY: list[dict[str, list[str]]] = [{"apiKey": []}, {INTERNAL_TOKEN_SCHEME: []}]
