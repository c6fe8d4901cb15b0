"""The API-key guard of the public API (ARCHITECTURE: keys stored hashed, unless the evaluator
runs in open local mode). A key comes as ``Authorization: Bearer <key>`` or ``X-API-Key``."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler

from steadfast.services.evaluator.components import EvaluatorComponents
from steadfast.services.evaluator.metrics import AUTH_REJECTIONS
from steadfast.shared.api_keys import Scope
from steadfast.shared.components import components_of
from steadfast.shared.guards import presented_key
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy, tenancy_of


def _rejected(reason: str, message: str) -> NotAuthorizedException:
    AUTH_REJECTIONS.labels(reason).inc()
    return NotAuthorizedException(
        detail=message,
        headers={"WWW-Authenticate": "Bearer"},
        extra=[{"key": "Authorization", "message": message, "source": "header"}],
    )


def needed_scope(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> Scope:
    """What a call needs: a handler's own ``scope`` (the admin API), else ``read`` to read and
    ``evaluate`` for everything that starts, changes or deletes."""
    own: Scope | None = handler.opt.get("scope")
    if own is not None:
        return own
    return "read" if connection.scope.get("method") in ("GET", "HEAD") else "evaluate"


def lacking(scope: Scope) -> PermissionDeniedException:
    """The 403 of a key without the scope a call needs, naming it."""
    AUTH_REJECTIONS.labels("scope").inc()
    message = f"the API key lacks the scope `{scope}` (steadfast keys create --scope {scope})"
    return PermissionDeniedException(
        detail=message, extra=[{"key": "Authorization", "message": message, "source": "header"}]
    )


async def require_api_key(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    components = components_of(connection.app.state, EvaluatorComponents)
    if components.settings.auth == "open":
        return
    key = presented_key(connection)
    if key is None:
        raise _rejected(
            "missing", "an API key is required: `Authorization: Bearer <key>` or `X-API-Key`"
        )
    grant = await components.api_keys.grant_of(key)
    if grant is None:
        raise _rejected("invalid", "the API key is unknown or revoked")
    scope = needed_scope(connection, handler)
    if not handler.opt.get("any_key") and not grant.allows(scope):
        raise lacking(scope)
    connection.state.api_key = grant
    components.key_limiter.admit(grant)  # 429 over its requests per minute
    components.key_limiter.record(grant.key_id, requests=1)


def caller_tenancy(request: Request[Any, Any, Any]) -> Tenancy:
    """The ``tenancy`` dependency of every handler behind the guard: whose resources the
    caller sees and makes (its key's tenant; every tenant's for an admin key, and in open local
    mode, where there are no keys and what is made is the default tenant's)."""
    components = components_of(request.app.state, EvaluatorComponents)
    if components.settings.auth == "open":
        return UNRESTRICTED
    grant = request.state.get("api_key")
    if grant is None:  # the guard lets no call through without a key: a bug if ever
        raise RuntimeError("a call in keys mode reached its handler without a key")
    return tenancy_of(grant)
