"""The local backend's requests to llama.cpp's loopback HTTP listener, with a stand-in in the
listener's place: answers, llama.cpp's error bodies, timeouts, and a reload after close."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.local import LocalBackend
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.stand_in import Fault
from tests.unit.gateway.conftest import ask

LLAMA_CPP_ERROR = json.dumps(
    {"error": {"code": 400, "message": "the request exceeds the context size", "type": "x"}}
)


@pytest.fixture
def listener() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def backend_listening_at(
    monkeypatch: pytest.MonkeyPatch, address: str
) -> tuple[LocalBackend, list[int]]:
    """A backend whose 'model' loads at once and listens at ``address``; and its load count."""
    loads: list[int] = []

    def load(self: LocalBackend) -> Any:
        loads.append(1)
        return SimpleNamespace(listening_address=address)

    monkeypatch.setattr(LocalBackend, "_load_blocking", load)
    context = BackendContext(models_dir=Path("/nonexistent"))
    return LocalBackend(BUILTIN_ROUTES["local-small"], context), loads


async def test_a_request_is_an_openai_chat_completion_on_the_listener(
    monkeypatch: pytest.MonkeyPatch, listener: FakeOpenAIServer
) -> None:
    backend, _ = backend_listening_at(monkeypatch, listener.root)
    try:
        completion = await backend.complete(ask("What is the capital of France?"), timeout_s=5)
    finally:
        await backend.close()
    assert completion.text == "echo: What is the capital of France?"
    assert completion.finish_reason == "stop" and completion.output_tokens > 0
    body = listener.calls[0]
    assert body["model"] == "qwen2.5-coder-0.5b-instruct" and body["temperature"] == 0.0


async def test_llama_cpps_error_body_becomes_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, listener: FakeOpenAIServer
) -> None:
    backend, _ = backend_listening_at(monkeypatch, listener.root)
    listener.enqueue(Fault.error(400, LLAMA_CPP_ERROR))
    try:
        with pytest.raises(BackendError) as failure:
            await backend.complete(ask(), timeout_s=5)
    finally:
        await backend.close()
    # a prompt longer than the model's context: the caller's to shorten, not an upstream fault
    assert failure.value.outcome == "too_large" and failure.value.status == 400
    assert "exceeds the context size" in failure.value.detail
    assert not failure.value.retryable


async def test_a_timed_out_request_is_not_retryable(
    monkeypatch: pytest.MonkeyPatch, listener: FakeOpenAIServer
) -> None:
    backend, _ = backend_listening_at(monkeypatch, listener.root)
    listener.enqueue(Fault.hang(5))
    try:
        with pytest.raises(BackendError) as failure:
            await backend.complete(ask(), timeout_s=0.2)
    finally:
        await backend.close()
    assert failure.value.outcome == "timeout" and not failure.value.retryable


async def test_a_closed_backend_loads_its_model_again(
    monkeypatch: pytest.MonkeyPatch, listener: FakeOpenAIServer
) -> None:
    backend, loads = backend_listening_at(monkeypatch, listener.root)
    await backend.complete(ask(), timeout_s=5)
    await backend.close()
    await backend.complete(ask(), timeout_s=5)
    await backend.close()
    assert len(loads) == 2
