"""The API-key guard of the public API (ARCHITECTURE: keys stored hashed, unless the evaluator
runs in open local mode). A key comes as ``Authorization: Bearer <key>`` or ``X-API-Key``."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler

from steadfast.services.evaluator.components import EvaluatorComponents
from steadfast.services.evaluator.metrics import AUTH_REJECTIONS
from steadfast.shared.components import components_of
from steadfast.shared.guards import presented_key


def _rejected(reason: str, message: str) -> NotAuthorizedException:
    AUTH_REJECTIONS.labels(reason).inc()
    return NotAuthorizedException(
        detail=message,
        headers={"WWW-Authenticate": "Bearer"},
        extra=[{"key": "Authorization", "message": message, "source": "header"}],
    )


async def require_api_key(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    components = components_of(connection.app.state, EvaluatorComponents)
    if components.settings.auth == "open":
        return
    key = presented_key(connection)
    if key is None:
        raise _rejected(
            "missing", "an API key is required: `Authorization: Bearer <key>` or `X-API-Key`"
        )
    if not await components.api_keys.is_active(key):
        raise _rejected("invalid", "the API key is unknown or revoked")
