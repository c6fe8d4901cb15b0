"""The shared service-to-service client against a real local HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest
from aiohttp import web

from steadfast.client import AsyncClient
from steadfast.shared.contracts.base import HealthStatus
from steadfast.shared.contracts.gateway import ModelCalls, Usage
from steadfast.shared.http_client import ServiceCallError, ServiceClient, close_session
from steadfast.shared.request_context import current_request_id


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []

    async def health(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.json_response({"status": "ok", "service": "x", "version": "1"})

    async def failing(request: web.Request) -> web.Response:
        body = {
            "title": "Unknown model",
            "status": 404,
            "detail": "no route named 'nope'",
            "errors": [{"field": "model", "message": "unknown route", "source": "body"}],
        }
        return web.Response(
            status=404, body=msgspec.json.encode(body), content_type="application/problem+json"
        )

    async def html_error(request: web.Request) -> web.Response:
        return web.Response(status=502, text="<html>bad gateway</html>")

    async def newer(request: web.Request) -> web.Response:
        # a callee one version ahead: ModelCalls and its Usage have grown a field each
        usage = {"input_tokens": 3, "output_tokens": 2, "reasoning_tokens": 1}
        return web.json_response({"calls": 1, "cached_calls": 0, "usage": usage, "cost": 0})

    app = web.Application()
    app.router.add_get("/healthz", health)
    app.router.add_get("/newer", newer)
    app.router.add_post("/fail", failing)
    app.router.add_get("/html", html_error)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", seen
    await close_session()
    await runner.cleanup()


async def test_decodes_typed_response_and_forwards_request_id(
    upstream: tuple[str, list[dict[str, str]]],
) -> None:
    url, seen = upstream
    token = current_request_id.set("trace-123")
    try:
        health = await ServiceClient("x", url).get("/healthz", HealthStatus)
    finally:
        current_request_id.reset(token)
    assert health == HealthStatus(status="ok", service="x", version="1")
    assert seen[-1]["X-Request-ID"] == "trace-123"


async def test_a_response_from_a_newer_callee_drops_the_fields_it_added(
    upstream: tuple[str, list[dict[str, str]]],
) -> None:
    url, _ = upstream
    calls = await ServiceClient("gateway", url).get("/newer", ModelCalls)
    assert calls == ModelCalls(calls=1, usage=Usage(input_tokens=3, output_tokens=2))


async def test_non_2xx_carries_callee_problem(upstream: tuple[str, list[dict[str, str]]]) -> None:
    url, _ = upstream
    with pytest.raises(ServiceCallError) as caught:
        await ServiceClient("gateway", url).post("/fail", {"model": "nope"}, HealthStatus)
    error = caught.value
    assert error.status == 404
    assert error.problem.title == "Unknown model"
    assert error.problem.errors is not None and error.problem.errors[0].field == "model"


async def test_non_problem_error_body_is_kept_as_detail(
    upstream: tuple[str, list[dict[str, str]]],
) -> None:
    url, _ = upstream
    with pytest.raises(ServiceCallError) as caught:
        await ServiceClient("x", url).get("/html", HealthStatus)
    assert caught.value.status == 502
    assert "bad gateway" in (caught.value.problem.detail or "")


async def test_unreachable_service_is_typed() -> None:
    with pytest.raises(ServiceCallError) as caught:
        await ServiceClient("scoring", "http://127.0.0.1:9", timeout_s=2).get(
            "/healthz", HealthStatus
        )
    assert caught.value.unreachable
    assert caught.value.problem.status == 503
    await close_session()


async def test_a_client_with_an_api_key_sends_it_with_every_call(
    upstream: tuple[str, list[dict[str, str]]],
) -> None:
    url, seen = upstream
    client = ServiceClient("evaluator", url, headers={"Authorization": "Bearer sf_test"})
    await client.get("/healthz", HealthStatus)
    await client.get("/healthz", HealthStatus, headers={"X-Extra": "1"})
    assert [headers.get("Authorization") for headers in seen] == ["Bearer sf_test"] * 2
    await ServiceClient("evaluator", url).get("/healthz", HealthStatus)
    assert "Authorization" not in seen[-1]
    keyed = AsyncClient(url, api_key="sf_other")
    assert keyed._http.default_headers == {"Authorization": "Bearer sf_other"}


def test_the_gateway_client_sends_the_admin_key_it_was_given() -> None:
    from steadfast.shared.clients.gateway import GatewayClient

    keyed = GatewayClient("http://127.0.0.1:9", admin_key="admin-secret")
    assert keyed._client.default_headers == {"Authorization": "Bearer admin-secret"}
    assert GatewayClient("http://127.0.0.1:9")._client.default_headers == {}
