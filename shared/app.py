"""Builds a service's Litestar app with everything every service has.

Each service's ``create_app()`` passes its controllers, its settings, whether it owns a database
and which other services it calls; this adds ``/healthz``, ``/readyz``, ``/metrics``, the request
id, structured logging, HTTP metrics, problem-details errors and the body size limit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from litestar import Controller, Litestar, Response, Router, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, Reference, SecurityScheme
from litestar.types import ControllerRouterHandler

from steadfast.shared import __version__
from steadfast.shared.components import COMPONENTS, component_dependencies
from steadfast.shared.contracts.base import HealthStatus, Problem, ReadinessStatus
from steadfast.shared.db import Database, resolve_database_url
from steadfast.shared.guards import require_internal_token
from steadfast.shared.http_client import ServiceClient, close_session
from steadfast.shared.internal_token import INTERNAL_TOKEN_HEADER, INTERNAL_TOKEN_SCHEME
from steadfast.shared.logging import configure_logging
from steadfast.shared.metrics import MetricsController, http_metrics_config, record_build_info
from steadfast.shared.middleware import request_id_middleware
from steadfast.shared.openapi_schema import ContractSchemaPlugin
from steadfast.shared.problems import (
    EXCEPTION_HANDLERS,
    document_problems,
    document_retry_after,
    problem_response,
    problem_responses,
)
from steadfast.shared.settings import ServiceSettings
from steadfast.shared.strict_body import StrictBodyRequest

logger = logging.getLogger(__name__)

ReadinessCheck = Callable[[State], Awaitable[None]]
Hook = Callable[[Litestar], Awaitable[None]]

READINESS_TIMEOUT_S = 3.0


class HealthController(Controller):
    """``/healthz`` and ``/readyz``: the liveness and readiness probes of every service."""

    tags = ["operations"]  # noqa: RUF012  (litestar declares it an instance attribute)

    @get("/healthz", operation_id="getHealth", summary="The process is alive")
    async def healthz(self, state: State) -> HealthStatus:
        return HealthStatus(status="ok", service=state.service_name, version=__version__)

    @get(
        "/readyz",
        operation_id="getReadiness",
        summary="The service can serve: its own database answers (the services it calls are "
        "reported in `checks`, and `status` is `degraded` when one is down, but they do not "
        "make it unready)",
        responses=problem_responses(
            {503: "Not ready: its own database does not answer (the detail names the check)"}
        ),
    )
    async def readyz(self, state: State) -> Response[Any]:
        own: dict[str, ReadinessCheck] = state.readiness_checks
        peers: dict[str, ReadinessCheck] = state.peer_checks
        outcome = await _run_checks({**own, **peers}, state)
        failing = [name for name in own if outcome[name] != "ok"]
        if failing:
            detail = f"unavailable: {', '.join(failing)}"
            return problem_response(Problem(title="Not ready", status=503, detail=detail))
        degraded = any(outcome[name] != "ok" for name in peers)
        return Response(
            ReadinessStatus(
                status="degraded" if degraded else "ready",
                service=state.service_name,
                checks=outcome,
            )
        )


async def _run_checks(checks: dict[str, ReadinessCheck], state: State) -> dict[str, str]:
    """Each check's outcome (``ok`` or why it failed), all run at once, each within its time."""
    names = list(checks)
    results = await asyncio.gather(
        *(asyncio.wait_for(checks[name](state), READINESS_TIMEOUT_S) for name in names),
        return_exceptions=True,
    )
    return {
        name: "ok" if result is None else f"failed: {type(result).__name__}: {result}"
        for name, result in zip(names, results, strict=True)
    }


def database_check(state: State) -> Awaitable[None]:
    database: Database = state.database
    return database.ping()


def peer_check(service: str) -> ReadinessCheck:
    async def check(state: State) -> None:
        client = ServiceClient(service, state.settings.service_url(service), timeout_s=2.0)
        await client.get("/healthz", HealthStatus)

    return check


INTERNAL_TOKEN_SECURITY = SecurityScheme(
    type="apiKey",
    name=INTERNAL_TOKEN_HEADER,
    security_scheme_in="header",
    description="The services' shared secret (STEADFAST_INTERNAL_TOKEN); not asked for when "
    "the service has none (the open local mode)",
)


def internal_only(route_handlers: Sequence[ControllerRouterHandler]) -> Router:
    """``route_handlers`` answering only calls with the internal token, when there is one."""
    return Router(
        path="/",
        route_handlers=list(route_handlers),
        guards=[require_internal_token],
        security=[{INTERNAL_TOKEN_SCHEME: []}],
    )


def _dependencies(components: Any) -> dict[str, Provide]:
    if components is None:
        return {}
    kind = components if isinstance(components, type) else type(components)
    return component_dependencies(kind)


def create_service_app(
    *,
    service: str,
    settings: ServiceSettings,
    route_handlers: Sequence[ControllerRouterHandler],
    uses_database: bool = False,
    calls: Sequence[str] = (),
    on_startup: Sequence[Hook] = (),
    on_shutdown: Sequence[Hook] = (),
    state: dict[str, Any] | None = None,
    description: str = "",
    security_schemes: dict[str, SecurityScheme | Reference] | None = None,
    components: Any = None,
    exception_handlers: dict[Any, Any] | None = None,
    internal: bool = False,
    unauthorized: str | None = None,
    forbidden: str | None = None,
    rate_limited: str | None = None,
) -> Litestar:
    """``components`` is the service's components dataclass (``shared.components``): an
    instance, or the class when a startup hook builds the instance (``set_components``);
    ``exception_handlers`` the service's own, beside those every service has."""
    configure_logging(service, settings.log_level, settings.log_json)
    record_build_info(service)
    # a pod is taken out of its Service only for its own failures: were a peer's outage to make
    # its callers unready, one service down would take every service out of rotation
    readiness: dict[str, ReadinessCheck] = {"database": database_check} if uses_database else {}
    peers = {peer: peer_check(peer) for peer in calls}

    async def open_database(app: Litestar) -> None:
        url = resolve_database_url(settings.database_url, service, settings.resolved_data_dir())
        database = Database(service, url)
        if settings.migrate_on_start:
            await database.migrate()
        else:
            await database.require_current()
        app.state.database = database
        logger.info("database ready", extra={"dialect": database.dialect})

    async def close_resources(app: Litestar) -> None:
        database: Database | None = app.state.get("database")
        if database is not None:
            await database.dispose()
        await close_session()

    startup: list[Hook] = [open_database] if uses_database else []
    if internal:
        route_handlers = [internal_only(route_handlers)]
        security_schemes = {
            **(security_schemes or {}),
            INTERNAL_TOKEN_SCHEME: INTERNAL_TOKEN_SECURITY,
        }
    metrics = http_metrics_config(service)
    app = Litestar(
        route_handlers=[HealthController, MetricsController, *route_handlers],
        middleware=[request_id_middleware, metrics.middleware],
        exception_handlers={**EXCEPTION_HANDLERS, **(exception_handlers or {})},
        dependencies=_dependencies(components),
        request_max_body_size=settings.max_body_bytes,
        request_class=StrictBodyRequest,
        on_startup=[*startup, *on_startup],
        on_shutdown=[*on_shutdown, close_resources],
        state=State(
            {
                "service_name": service,
                "settings": settings,
                "readiness_checks": readiness,
                "peer_checks": peers,
                **(
                    {}
                    if components is None or isinstance(components, type)
                    else {COMPONENTS: components}
                ),
                **(state or {}),
            }
        ),
        openapi_config=OpenAPIConfig(
            title=f"Steadfast {service}",
            version=__version__,
            description=description or None,
            path="/schema",
            components=Components(security_schemes=security_schemes or None),
        ),
        logging_config=None,
        plugins=[ContractSchemaPlugin()],
    )
    document_problems(
        app, unauthorized=unauthorized, forbidden=forbidden, rate_limited=rate_limited
    )
    document_retry_after(app)
    return app
