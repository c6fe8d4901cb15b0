"""App factory of the evaluator service."""

from __future__ import annotations

from litestar import Litestar

from services import evaluator as package
from services.evaluator.settings import EvaluatorSettings, get_settings
from shared.app import create_service_app

SERVICE = "evaluator"


def create_app(settings: EvaluatorSettings | None = None) -> Litestar:
    return create_service_app(
        service=SERVICE,
        settings=settings or get_settings(),
        route_handlers=[],
        uses_database=True,
        calls=["gateway", "perturb", "verify", "scoring"],
        description=package.__doc__ or "",
    )
