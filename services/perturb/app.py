"""App factory of the perturb service."""

from __future__ import annotations

from litestar import Litestar

from steadfast.services import perturb as package
from steadfast.services.perturb.components import PerturbComponents
from steadfast.services.perturb.controllers.perturb import PerturbController
from steadfast.services.perturb.domain.distractors import DistractorWriter
from steadfast.services.perturb.domain.paraphrasing import ParaphraseBuilder
from steadfast.services.perturb.settings import PerturbSettings, get_settings
from steadfast.shared.app import create_service_app
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.clients.verify import VerifyClient

SERVICE = "perturb"


def create_app(settings: PerturbSettings | None = None) -> Litestar:
    settings = settings or get_settings()
    gateway = GatewayClient(
        settings.service_url("gateway"), settings.call_timeout_s, token=settings.internal_token
    )
    verifier = VerifyClient(
        settings.service_url("verify"), settings.call_timeout_s, settings.internal_token
    )
    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[PerturbController],
        uses_database=False,
        calls=["gateway", "verify"],
        components=PerturbComponents(
            settings=settings,
            paraphraser=ParaphraseBuilder(
                gateway, verifier, generation_concurrency=settings.generation_concurrency
            ),
            distractor_writer=DistractorWriter(gateway),
        ),
        description=package.__doc__ or "",
        internal=True,
    )
