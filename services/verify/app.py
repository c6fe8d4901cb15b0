"""App factory of the verify service."""

from __future__ import annotations

from litestar import Litestar

from steadfast.services import verify as package
from steadfast.services.verify.adapters.embedder import MiniLMEmbedder
from steadfast.services.verify.adapters.nli import NliEndpoint
from steadfast.services.verify.adapters.thresholds import GatewayThresholds
from steadfast.services.verify.components import VerifyComponents
from steadfast.services.verify.controllers.verify import VerifyController
from steadfast.services.verify.domain.judges import JudgePool
from steadfast.services.verify.domain.semantic import SemanticModels
from steadfast.services.verify.settings import VerifyServiceSettings, get_settings
from steadfast.shared.app import create_service_app
from steadfast.shared.clients.gateway import GatewayClient

SERVICE = "verify"


def create_app(settings: VerifyServiceSettings | None = None) -> Litestar:
    settings = settings or get_settings()
    embedder = MiniLMEmbedder(threads=settings.embedder_threads)

    async def close_embedder(_: Litestar) -> None:
        embedder.close()

    gateway = GatewayClient(
        settings.service_url("gateway"), settings.call_timeout_s, token=settings.internal_token
    )
    nli = NliEndpoint(settings.nli_url, settings.call_timeout_s) if settings.nli_url else None
    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[VerifyController],
        uses_database=False,
        calls=["gateway"],
        on_shutdown=[close_embedder],
        components=VerifyComponents(
            judges=JudgePool(
                gateway, settings.default_judge_model, concurrency=settings.judge_concurrency
            ),
            semantic_models=SemanticModels(embedder, nli),
            thresholds=GatewayThresholds(gateway),
        ),
        description=package.__doc__ or "",
        internal=True,
    )
