"""App factory of the gateway service."""

from __future__ import annotations

from litestar import Litestar
from litestar.openapi.spec import SecurityScheme
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services import gateway as package
from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.adapters.calibration_repository import SqlCalibrationStore
from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.services.gateway.components import GatewayComponents
from steadfast.services.gateway.controllers.calibrations import CalibrationController
from steadfast.services.gateway.controllers.generate import GenerateController
from steadfast.services.gateway.controllers.proxy import ChatCompletionsController
from steadfast.services.gateway.controllers.self_paraphrase import SelfParaphraseController
from steadfast.services.gateway.controllers.shadow import ShadowController
from steadfast.services.gateway.controllers.streaming import StreamTiming
from steadfast.services.gateway.domain.calibration import JudgeCalibrations
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import load_routes
from steadfast.services.gateway.metrics import CACHE_PURGED, SHADOW_PURGED
from steadfast.services.gateway.settings import GatewaySettings, get_settings
from steadfast.services.gateway.strategies.generate import StrategyGateway
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.service import SelfParaphraseService
from steadfast.services.gateway.strategies.shadow import ShadowChecker, ShadowSettings
from steadfast.shared.api_keys import ApiKeyStore, CachedKeyCheck
from steadfast.shared.app import INTERNAL_TOKEN_SECURITY, create_service_app
from steadfast.shared.clients.perturb import PerturbClient
from steadfast.shared.components import set_components
from steadfast.shared.db import create_engine, resolve_database_url
from steadfast.shared.internal_token import INTERNAL_TOKEN_SCHEME
from steadfast.shared.key_limits import KeyLimiter, UsageStore
from steadfast.shared.retention import RetentionSweeper
from steadfast.shared.settings import ServiceSettings, SettingsError, load_settings

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


def keys_database_url(settings: GatewaySettings) -> str:
    """Where the API keys are: the evaluator's database, as the evaluator reads it."""
    if settings.keys_database_url:
        return settings.keys_database_url
    evaluator = load_settings("evaluator", ServiceSettings)
    return resolve_database_url(evaluator.database_url, "evaluator", evaluator.resolved_data_dir())


def key_check(
    settings: GatewaySettings, app: Litestar
) -> tuple[CachedKeyCheck, KeyLimiter] | tuple[None, None]:
    """The check of callers' API keys in the keys mode and their limits (the engine of the
    keys' database kept on the app to close; the limiter's flushes started)."""
    if settings.auth == "open":
        return None, None
    if not settings.internal_token:
        raise SettingsError(
            "STEADFAST_GATEWAY_AUTH=keys needs STEADFAST_INTERNAL_TOKEN: the other services call "
            "the gateway with it, as they hold no API key"
        )
    engine = create_engine(keys_database_url(settings), pool_size=2)
    app.state.keys_engine = engine
    limiter = KeyLimiter(UsageStore(engine), refresh_s=settings.key_cache_s)
    limiter.start()
    app.state.key_limiter = limiter
    return CachedKeyCheck(ApiKeyStore(engine), settings.key_cache_s), limiter


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
        keys, key_limiter = key_check(settings, app)
        components = GatewayComponents(
            settings=settings,
            model_gateway=gateway,
            strategy_gateway=StrategyGateway(gateway, self_paraphrase),
            self_paraphrase=self_paraphrase,
            shadow=shadow,
            shadow_store=disagreements,
            judge_calibrations=calibrations,
            stream_timing=StreamTiming(settings.stream_hold_s, settings.stream_keepalive_s),
            keys=keys,
            key_limiter=key_limiter,
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
        key_limiter: KeyLimiter | None = app.state.get("key_limiter")
        if key_limiter is not None:
            await key_limiter.stop()  # writes the usage counted since the last flush
        keys_engine: AsyncEngine | None = app.state.get("keys_engine")
        if keys_engine is not None:
            await keys_engine.dispose()

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
        security_schemes={
            "apiKey": SecurityScheme(
                type="http",
                scheme="bearer",
                description="`Authorization: Bearer <key>` (or `X-API-Key: <key>`), keys from "
                "`steadfast keys create`; asked for only with STEADFAST_GATEWAY_AUTH=keys",
            ),
            INTERNAL_TOKEN_SCHEME: INTERNAL_TOKEN_SECURITY,
        },
    )
