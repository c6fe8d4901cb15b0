"""Guards every service may put on its routes."""

from __future__ import annotations

import hmac
from typing import Any

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.handlers.base import BaseRouteHandler

from steadfast.shared.internal_token import INTERNAL_TOKEN_HEADER
from steadfast.shared.settings import ServiceSettings

#: the 401 of an endpoint this module's guard keeps for the services
INTERNAL_UNAUTHORIZED = (
    f"No internal token ({INTERNAL_TOKEN_HEADER}), or a wrong one: asked for only when the "
    "service has one (STEADFAST_INTERNAL_TOKEN)"
)


#: the header a key may come in instead of ``Authorization: Bearer <key>``
API_KEY_HEADER = "X-API-Key"


def presented_key(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    """The API key a caller sent: ``Authorization: Bearer <key>`` or ``X-API-Key``."""
    parts = connection.headers.get("Authorization", "").split()
    if len(parts) == 2 and parts[0].lower() == "bearer":
        return parts[1]
    return connection.headers.get(API_KEY_HEADER) or None


def has_internal_token(connection: ASGIConnection[Any, Any, Any, Any], token: str) -> bool:
    """The caller sent ``token`` (and there is one): a call of another Steadfast service."""
    sent = connection.headers.get(INTERNAL_TOKEN_HEADER, "")
    return bool(token) and hmac.compare_digest(sent.encode(), token.encode())


async def require_internal_token(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """The caller sent the service's internal token, when it has one (``shared.internal_token``)."""
    settings: ServiceSettings = connection.app.state.settings
    if not settings.internal_token:
        return
    if not has_internal_token(connection, settings.internal_token):
        message = f"this endpoint is for Steadfast's services: send {INTERNAL_TOKEN_HEADER}"
        raise NotAuthorizedException(
            detail=message,
            extra=[{"key": INTERNAL_TOKEN_HEADER, "message": message, "source": "header"}],
        )
