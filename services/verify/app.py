"""App factory of the verify service."""

from __future__ import annotations

from litestar import Litestar

from steadfast.services import verify as package
from steadfast.services.verify.adapters.embedder import MiniLMEmbedder
from steadfast.services.verify.adapters.nli import NliEndpoint
from steadfast.services.verify.adapters.thresholds import GatewayThresholds
from steadfast.services.verify.controllers.verify import VerifyController
from steadfast.services.verify.settings import VerifyServiceSettings, get_settings
from steadfast.shared.app import create_service_app
from steadfast.shared.clients.gateway import GatewayClient

SERVICE = "verify"


def create_app(settings: VerifyServiceSettings | None = None) -> Litestar:
    settings = settings or get_settings()
    embedder = MiniLMEmbedder(threads=settings.embedder_threads)

    async def close_embedder(_: Litestar) -> None:
        embedder.close()

    gateway = GatewayClient(settings.service_url("gateway"), settings.call_timeout_s)
    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[VerifyController],
        uses_database=False,
        calls=["gateway"],
        on_shutdown=[close_embedder],
        state={
            "gateway": gateway,
            "thresholds": GatewayThresholds(gateway),
            "embedder": embedder,
            "nli": NliEndpoint(settings.nli_url, settings.call_timeout_s)
            if settings.nli_url
            else None,
            "judges": {},
        },
        description=package.__doc__ or "",
    )
