"""The embedded model is loaded once, however its first callers come and go."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from steadfast.services.gateway.adapters.backends import BackendContext
from steadfast.services.gateway.adapters.backends.local import LocalBackend
from steadfast.services.gateway.adapters.local_models import LocalModelError
from steadfast.services.gateway.domain.errors import BackendError
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest

ADDRESS = "http://127.0.0.1:1"


def backend_loading(monkeypatch: pytest.MonkeyPatch, outcomes: list[Any]) -> LocalBackend:
    """A backend whose loads take 0.3 s each and end as ``outcomes`` say, in turn."""
    loads = iter(outcomes)

    def slow_load(self: LocalBackend) -> Any:
        time.sleep(0.3)
        outcome = next(loads)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(LocalBackend, "_load_blocking", slow_load)
    context = BackendContext(models_dir=Path("/nonexistent"))
    return LocalBackend(BUILTIN_ROUTES["local-small"], context)


async def test_a_load_its_first_caller_gave_up_on_is_waited_for_not_repeated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = SimpleNamespace(listening_address=ADDRESS)
    backend = backend_loading(monkeypatch, [server, SimpleNamespace(listening_address="twice")])
    first = asyncio.create_task(backend.load())
    await asyncio.sleep(0.05)
    first.cancel()  # its request timed out while the model was loading
    await backend.load()
    assert backend.listening_address == ADDRESS  # the first load's server, not a second one
    await backend.close()


async def test_a_failed_load_is_tried_again_by_the_next_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = SimpleNamespace(listening_address=ADDRESS)
    backend = backend_loading(monkeypatch, [LocalModelError("checksum mismatch"), server])
    with pytest.raises(LocalModelError):
        await backend.load()
    await backend.load()
    assert backend.listening_address == ADDRESS
    await backend.close()


@pytest.mark.parametrize(
    "failure",
    [
        LocalModelError("checksum mismatch"),
        RuntimeError("failed to load model"),  # llama.cpp refusing the file
        ImportError("No module named 'xllamacpp'"),
        OSError(28, "No space left on device"),
    ],
)
async def test_a_model_that_cannot_load_makes_the_route_unavailable(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    backend = backend_loading(monkeypatch, [failure])
    request = GenerateRequest(model="local-small", messages=[ChatMessage(role="user", content="x")])
    with pytest.raises(BackendError) as caught:
        await backend.complete(request, timeout_s=5)
    assert caught.value.outcome == "unavailable"  # a 503 saying why, not a bad answer (502)
    assert str(failure) in caught.value.detail


def test_threads_come_from_the_route_then_the_setting_then_the_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    import msgspec

    from steadfast.services.gateway.settings import GatewaySettings
    from steadfast.shared.settings import load_settings

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    route = BUILTIN_ROUTES["local-small"]
    models = Path("/nonexistent")
    assert LocalBackend(route, BackendContext(models_dir=models)).threads == 3
    assert LocalBackend(route, BackendContext(models_dir=models, local_threads=4)).threads == 4
    own = msgspec.structs.replace(route, threads=1)
    assert LocalBackend(own, BackendContext(models_dir=models, local_threads=4)).threads == 1
    monkeypatch.setenv("STEADFAST_GATEWAY_LOCAL_THREADS", "2")
    assert load_settings("gateway", GatewaySettings).local_threads == 2


def test_the_demo_gives_the_model_every_core() -> None:
    import os

    from steadfast.command_support import LOCAL_RUN_ENVIRONMENT

    assert LOCAL_RUN_ENVIRONMENT["STEADFAST_GATEWAY_LOCAL_THREADS"] == str(os.cpu_count() or 1)
