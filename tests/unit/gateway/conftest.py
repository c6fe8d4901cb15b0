"""Gateways wired to stand-in servers, for the gateway's unit tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from steadfast.services.gateway.adapters.backends import BackendContext, create_backend
from steadfast.services.gateway.adapters.cache_repository import SqlResponseCache
from steadfast.services.gateway.domain.cache import ResponseCache
from steadfast.services.gateway.domain.gateway import ModelGateway
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest
from steadfast.shared.db import Database
from tests.fakes.gemini_server import FakeGeminiServer
from tests.fakes.ollama_server import FakeOllamaServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.stand_in import StandInServer

GEMINI_KEY_ENV = "STEADFAST_TEST_GEMINI_KEY"

FAKES: dict[str, type[StandInServer]] = {
    "openai": FakeOpenAIServer,
    "gemini": FakeGeminiServer,
    "ollama": FakeOllamaServer,
}


@pytest.fixture
async def cache(database_url: str) -> AsyncIterator[SqlResponseCache]:
    database = Database("gateway", database_url)
    await database.migrate()
    yield SqlResponseCache(database)
    await database.dispose()


@pytest.fixture(autouse=True)
def gemini_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(GEMINI_KEY_ENV, "gemini-test-key")
    return "gemini-test-key"


def route_to(backend: str, fake: Any, name: str = "r", **settings: Any) -> Route:
    table: dict[str, Any] = {
        "name": name,
        "backend": backend,
        "model": f"{backend}-model",
        "base_url": fake.url,
        "retry_base_s": 0.01,
        "retry_max_s": 0.05,
        "timeout_s": 5.0,
        "deadline_s": 10.0,
    }
    if backend == "gemini":
        table["api_key_env"] = GEMINI_KEY_ENV
    table.update(settings)
    return msgspec.convert(table, type=Route)


def gateway_for(*routes: Route, cache: ResponseCache | None = None) -> ModelGateway:
    context = BackendContext(models_dir=Path("/nonexistent"))
    return ModelGateway(
        {route.name: route for route in routes},
        cache=cache,
        backend_factory=lambda route: create_backend(route, context),
    )


def ask(
    text: str = "What is the capital of France?", model: str = "r", **params: Any
) -> GenerateRequest:
    return GenerateRequest(model=model, messages=[ChatMessage(role="user", content=text)], **params)
