"""``/v1/shadow/disagreements``: the live answers their shadow checks did not confirm, for the
routes that keep them; they hold callers' questions, so only the admin key reads them."""

from __future__ import annotations

import hmac
from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.params import Parameter

from steadfast.services.gateway.adapters.shadow_repository import SqlDisagreementStore
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.contracts.proxy import ShadowDisagreementPage
from steadfast.shared.problems import ProblemError, problem_responses


def require_admin(request: Request[object, object, State], settings: GatewaySettings) -> None:
    """401 without the admin key (``Authorization: Bearer <key>``); 403 when none is set."""
    if not settings.admin_key:
        detail = "no admin key is configured (STEADFAST_GATEWAY_ADMIN_KEY)"
        raise ProblemError(403, "Forbidden", detail, field="Authorization", source="header")
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not hmac.compare_digest(given.encode(), settings.admin_key.encode()):
        detail = "the admin key is needed: Authorization: Bearer <key>"
        raise ProblemError(401, "Unauthorized", detail, field="Authorization", source="header")


class ShadowController(Controller):
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
        state: State,
        route: Annotated[str | None, Parameter(max_length=200)] = None,
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
    ) -> ShadowDisagreementPage:
        require_admin(request, state.settings)
        store: SqlDisagreementStore = state.shadow_store
        return ShadowDisagreementPage(disagreements=await store.newest(route, limit))
