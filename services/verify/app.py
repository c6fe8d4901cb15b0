"""App factory of the verify service."""

from __future__ import annotations

from litestar import Litestar

from services import verify as package
from services.verify.settings import VerifySettings, get_settings
from shared.app import create_service_app

SERVICE = "verify"


def create_app(settings: VerifySettings | None = None) -> Litestar:
    return create_service_app(
        service=SERVICE,
        settings=settings or get_settings(),
        route_handlers=[],
        uses_database=False,
        calls=["gateway"],
        description=package.__doc__ or "",
    )
