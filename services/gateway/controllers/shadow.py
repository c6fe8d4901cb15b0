"""``/v1/shadow/disagreements``: the live answers their shadow checks did not confirm, for the
routes that keep them; they hold callers' questions, so only the admin key reads them."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter

from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.services.gateway.controllers.admin import require_admin
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.contracts.proxy import ShadowDisagreementPage
from steadfast.shared.problems import problem_responses


class ShadowController(Controller):
    """``/v1/shadow/disagreements``: the stored disagreements of shadow checks (admin key)."""

    path = "/v1/shadow"
    tags = ["proxy"]  # noqa: RUF012

    @get(
        "/disagreements",
        operation_id="listShadowDisagreements",
        summary="Live answers whose shadow checks disagreed, newest first (admin key; routes "
        "with shadow_store only)",
        responses=problem_responses(
            {401: "Missing or wrong admin key", 403: "No admin key is configured"}
        ),
    )
    async def disagreements(
        self,
        request: Request[object, object, State],
        shadow_store: NamedDependency[SqlDisagreementStore],
        settings: NamedDependency[GatewaySettings],
        route: Annotated[str | None, Parameter(max_length=200)] = None,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
    ) -> ShadowDisagreementPage:
        require_admin(request, settings)
        return ShadowDisagreementPage(disagreements=await shadow_store.newest(route, limit))
