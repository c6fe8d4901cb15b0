"""App factory of the perturb service."""

from __future__ import annotations

from litestar import Litestar

from services import perturb as package
from services.perturb.settings import PerturbSettings, get_settings
from shared.app import create_service_app

SERVICE = "perturb"


def create_app(settings: PerturbSettings | None = None) -> Litestar:
    return create_service_app(
        service=SERVICE,
        settings=settings or get_settings(),
        route_handlers=[],
        uses_database=False,
        calls=["gateway", "verify"],
        description=package.__doc__ or "",
    )
