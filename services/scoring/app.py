"""App factory of the scoring service."""

from __future__ import annotations

import asyncio

from litestar import Litestar

from steadfast.services import scoring as package
from steadfast.services.scoring.adapters.judges import GatewayJudges
from steadfast.services.scoring.adapters.math_pool import MathPool
from steadfast.services.scoring.components import ScoringComponents
from steadfast.services.scoring.controllers.grading import GradeController
from steadfast.services.scoring.controllers.metrics import MetricsController
from steadfast.services.scoring.controllers.problems import SCORING_EXCEPTION_HANDLERS
from steadfast.services.scoring.controllers.reports import ReportController
from steadfast.services.scoring.settings import ScoringSettings, get_settings
from steadfast.shared.app import create_service_app
from steadfast.shared.clients.gateway import GatewayClient

SERVICE = "scoring"


def create_app(settings: ScoringSettings | None = None) -> Litestar:
    settings = settings or get_settings()
    math_pool = MathPool(settings.math_workers, settings.math_timeout_s)

    async def warm_up_math_pool(_: Litestar) -> None:
        if settings.math_warm_up:
            math_pool.warm_up()

    async def close_math_pool(_: Litestar) -> None:
        await asyncio.to_thread(math_pool.close)  # waits for a worker still grading

    gateway = GatewayClient(
        settings.service_url("gateway"), settings.call_timeout_s, token=settings.internal_token
    )
    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[GradeController, MetricsController, ReportController],
        uses_database=False,
        calls=["gateway"],
        on_startup=[warm_up_math_pool],
        on_shutdown=[close_math_pool],
        components=ScoringComponents(
            math_pool=math_pool, judges=GatewayJudges(gateway, settings.judge_max_tokens)
        ),
        description=package.__doc__ or "",
        exception_handlers=SCORING_EXCEPTION_HANDLERS,
        internal=True,
    )
