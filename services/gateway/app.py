"""App factory of the gateway service."""

from __future__ import annotations

from litestar import Litestar

from services import gateway as package
from services.gateway.settings import GatewaySettings, get_settings
from shared.app import create_service_app

SERVICE = "gateway"


def create_app(settings: GatewaySettings | None = None) -> Litestar:
    return create_service_app(
        service=SERVICE,
        settings=settings or get_settings(),
        route_handlers=[],
        uses_database=True,
        calls=[],
        description=package.__doc__ or "",
    )
