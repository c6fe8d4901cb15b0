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


async def require_internal_token(
    connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
) -> None:
    """The caller sent the service's internal token, when it has one (``shared.internal_token``)."""
    settings: ServiceSettings = connection.app.state.settings
    if not settings.internal_token:
        return
    sent = connection.headers.get(INTERNAL_TOKEN_HEADER, "")
    if not hmac.compare_digest(sent.encode(), settings.internal_token.encode()):
        message = f"this endpoint is for Steadfast's services: send {INTERNAL_TOKEN_HEADER}"
        raise NotAuthorizedException(
            detail=message,
            extra=[{"key": INTERNAL_TOKEN_HEADER, "message": message, "source": "header"}],
        )
