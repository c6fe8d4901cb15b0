"""The gateway's admin key (``STEADFAST_GATEWAY_ADMIN_KEY``, sent as ``Authorization: Bearer``):
reading stored shadow disagreements always needs it; changing what every service relies on (a
judge's calibration) needs it once one is configured."""

from __future__ import annotations

import hmac

from litestar import Request
from litestar.datastructures import State

from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.problems import ProblemError


def require_admin(request: Request[object, object, State], settings: GatewaySettings) -> None:
    """401 without the admin key; 403 when none is configured."""
    if not settings.admin_key:
        detail = "no admin key is configured (STEADFAST_GATEWAY_ADMIN_KEY)"
        raise ProblemError(403, "Forbidden", detail, field="Authorization", source="header")
    _check(request, settings.admin_key)


def require_admin_if_configured(
    request: Request[object, object, State], settings: GatewaySettings
) -> None:
    """401 without the admin key when one is configured; without one (the open local mode of a
    gateway on 127.0.0.1) anyone who reaches the gateway may."""
    if settings.admin_key:
        _check(request, settings.admin_key)


def _check(request: Request[object, object, State], admin_key: str) -> None:
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not hmac.compare_digest(given.encode(), admin_key.encode()):
        detail = "the admin key is needed: Authorization: Bearer <key>"
        raise ProblemError(401, "Unauthorized", detail, field="Authorization", source="header")
