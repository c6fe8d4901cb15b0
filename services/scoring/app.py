"""App factory of the scoring service."""

from __future__ import annotations

from litestar import Litestar

from services import scoring as package
from services.scoring.settings import ScoringSettings, get_settings
from shared.app import create_service_app

SERVICE = "scoring"


def create_app(settings: ScoringSettings | None = None) -> Litestar:
    return create_service_app(
        service=SERVICE,
        settings=settings or get_settings(),
        route_handlers=[],
        uses_database=False,
        calls=["gateway"],
        description=package.__doc__ or "",
    )
