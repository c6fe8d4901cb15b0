"""``/v1/generate/batch`` items: each has its result or its own error, even an unexpected one."""

from __future__ import annotations

import asyncio

import pytest

from steadfast.services.gateway.controllers.generate import batch_item
from steadfast.services.gateway.domain.errors import UnknownRoute
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest, GenerateResponse, Usage
from steadfast.shared.metering import MeteredCaller


class BuggyGateway:
    """Answers every model but two: one unknown, one hitting a bug."""

    async def generate(
        self, request: GenerateRequest, meter: MeteredCaller | None = None
    ) -> GenerateResponse:
        if meter is not None:  # as the strategy gateway counts a plain route's call
            meter.calls += 1
        if request.model == "buggy":
            raise KeyError("choices")
        if request.model == "nope":
            raise UnknownRoute("nope", ["fine"])
        return GenerateResponse(
            text="answered",
            model=request.model,
            backend="openai",
            finish_reason="stop",
            usage=Usage(input_tokens=1, output_tokens=1),
            latency_s=0.0,
            cached=False,
        )


def ask(model: str) -> GenerateRequest:
    return GenerateRequest(model=model, messages=[ChatMessage(role="user", content="q")])


async def test_an_unexpected_error_fails_its_item_only_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gateway = BuggyGateway()
    meter = MeteredCaller(gateway)
    models = ("fine", "buggy", "nope", "fine")
    items = await asyncio.gather(*(batch_item(gateway, ask(m), meter) for m in models))  # type: ignore[arg-type]
    assert meter.calls == 4  # every item's call is the caller's, a failed one too
    assert [item.result.text if item.result else None for item in items] == [
        "answered",
        None,
        None,
        "answered",
    ]
    buggy, unknown = items[1].error, items[2].error
    assert buggy is not None and buggy.status == 500
    assert buggy.detail is not None and buggy.detail.startswith("KeyError")
    assert unknown is not None and unknown.status == 404
    assert any("'buggy' failed unexpectedly" in record.message for record in caplog.records)
