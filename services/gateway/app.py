"""App factory of the gateway service."""

from __future__ import annotations

from litestar import Litestar

from steadfast.services import gateway as package
from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.adapters.calibration_repository import SqlCalibrationStore
from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.services.gateway.components import GatewayComponents
from steadfast.services.gateway.controllers.calibrations import CalibrationController
from steadfast.services.gateway.controllers.generate import GenerateController
from steadfast.services.gateway.controllers.proxy import ChatCompletionsController, StreamTiming
from steadfast.services.gateway.controllers.self_paraphrase import SelfParaphraseController
from steadfast.services.gateway.controllers.shadow import ShadowController
from steadfast.services.gateway.domain.calibration import JudgeCalibrations
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import load_routes
from steadfast.services.gateway.metrics import CACHE_PURGED, SHADOW_PURGED
from steadfast.services.gateway.settings import GatewaySettings, get_settings
from steadfast.services.gateway.strategies.generate import StrategyGateway
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.service import SelfParaphraseService
from steadfast.services.gateway.strategies.shadow import ShadowChecker, ShadowSettings
from steadfast.shared.app import INTERNAL_TOKEN_SECURITY, create_service_app
from steadfast.shared.clients.perturb import PerturbClient
from steadfast.shared.components import set_components
from steadfast.shared.internal_token import INTERNAL_TOKEN_SCHEME
from steadfast.shared.retention import RetentionSweeper

SERVICE = "gateway"


def shadow_settings(settings: GatewaySettings) -> ShadowSettings:
    return ShadowSettings(
        rate=settings.shadow_rate,
        k=settings.shadow_k,
        queue_size=settings.shadow_queue,
        workers=settings.shadow_workers,
        share=settings.shadow_share,
        generator=settings.shadow_generator,
        defer_s=settings.shadow_defer_s,
    )


def create_app(settings: GatewaySettings | None = None) -> Litestar:
    settings = settings or get_settings()
    # a broken routes file raises RoutesFileError here, naming the route and key: no start-up
    context = BackendContext(
        models_dir=settings.resolved_models_dir(), local_threads=settings.local_threads
    )
    gateway = ModelGateway(
        load_routes(settings.models_file),
        backend_factory=lambda route: create_backend(route, context),
    )

    calibrations = JudgeCalibrations(gateway.routes, store=None)
    perturb_url = settings.service_url("perturb")

    async def answer_threshold(route: str, prompt_version: str) -> float:
        return (await calibrations.threshold(route, prompt_version)).value

    grouper = AnswerGrouper(thresholds=answer_threshold)
    self_paraphrase = SelfParaphraseService(
        gateway,
        perturb=lambda: PerturbClient(perturb_url, token=settings.internal_token),
        routes=gateway.routes.keys(),
        grouper=grouper,
    )
    shadow = ShadowChecker(gateway, gateway.routes, shadow_settings(settings), grouper)

    async def attach_cache(app: Litestar) -> None:
        max_age_s = settings.cache_max_age_days * 86400 or None
        cache = SqlResponseCache(app.state.database, max_age_s=max_age_s)
        gateway.use_cache(cache)
        calibrations.use_store(SqlCalibrationStore(app.state.database))
        disagreements = SqlDisagreementStore(app.state.database)
        shadow.store = disagreements
        shadow.start()
        shadow_sweeper = RetentionSweeper(
            {"shadow_disagreement": disagreements.purge_older_than},
            settings.shadow_store_days * 86400,
            settings.cache_sweep_s,
            deleted=SHADOW_PURGED,
        )
        shadow_sweeper.start()
        app.state.shadow_sweeper = shadow_sweeper
        if max_age_s is not None:
            sweeper = RetentionSweeper(
                {"response": cache.purge_older_than},
                max_age_s,
                settings.cache_sweep_s,
                deleted=CACHE_PURGED,
            )
            sweeper.start()
            app.state.cache_sweeper = sweeper
        components = GatewayComponents(
            settings=settings,
            model_gateway=gateway,
            strategy_gateway=StrategyGateway(gateway, self_paraphrase),
            self_paraphrase=self_paraphrase,
            shadow=shadow,
            shadow_store=disagreements,
            judge_calibrations=calibrations,
            stream_timing=StreamTiming(settings.stream_hold_s, settings.stream_keepalive_s),
        )
        set_components(app, components)

    async def close_backends(app: Litestar) -> None:
        await shadow.stop()
        shadow_sweeper: RetentionSweeper | None = app.state.get("shadow_sweeper")
        if shadow_sweeper is not None:
            await shadow_sweeper.stop()
        sweeper: RetentionSweeper | None = app.state.get("cache_sweeper")
        if sweeper is not None:
            await sweeper.stop()
        await gateway.close()

    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[
            GenerateController,
            SelfParaphraseController,
            ChatCompletionsController,
            CalibrationController,
            ShadowController,
        ],
        uses_database=True,
        calls=[],
        on_startup=[attach_cache],
        on_shutdown=[close_backends],
        components=GatewayComponents,
        description=package.__doc__ or "",
        security_schemes={INTERNAL_TOKEN_SCHEME: INTERNAL_TOKEN_SECURITY},
    )
