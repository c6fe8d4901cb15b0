"""The NLI adapter against a stand-in text-embeddings-inference ``/predict`` server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from steadfast.services.verify.adapters.nli import NliEndpoint
from steadfast.services.verify.domain.semantic import NliCheck
from steadfast.shared.backoff import Backoff
from steadfast.shared.http_client import ServiceCallError

received: list[Any] = []
#: premises that fail once (503), then are answered
flaky: set[str] = set()


async def predict(request: web.Request) -> web.Response:
    body = await request.json()
    received.append(body)
    if any("crash" in premise for premise, _ in body["inputs"]):
        return web.json_response({"error": "model crashed"}, status=500)
    premises = {premise for premise, _ in body["inputs"]}
    if premises & flaky:
        flaky.difference_update(premises)
        return web.json_response({"error": "model loading"}, status=503)
    scored = []
    for premise, hypothesis in body["inputs"]:
        entails = 0.9 if len(hypothesis) <= len(premise) else 0.4
        if premise.startswith("two-class"):  # a two-class model, its negative label first
            not_entails = {"label": "not_entailment", "score": 1 - entails}
            scored.append([not_entails, {"label": "entailment", "score": entails}])
            continue
        scored.append(
            [
                {"label": "ENTAILMENT", "score": entails},
                {"label": "NEUTRAL", "score": (1 - entails) / 2},
                {"label": "CONTRADICTION", "score": (1 - entails) / 2},
            ]
        )
    return web.json_response(scored)


@pytest.fixture
async def nli_url() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/predict", predict)
    server = TestServer(app)
    await server.start_server()
    yield str(server.make_url("")).rstrip("/")
    await server.close()


async def test_entailment_of_each_pair(nli_url: str) -> None:
    received.clear()
    scores = await NliEndpoint(nli_url).entailment([("long premise", "short"), ("a", "longer")])
    assert scores == [pytest.approx(0.9), pytest.approx(0.4)]
    assert received == [{"inputs": [["long premise", "short"], ["a", "longer"]]}]


async def test_a_two_class_models_not_entailment_label_is_not_taken_for_entailment(
    nli_url: str,
) -> None:
    scores = await NliEndpoint(nli_url).entailment([("two-class premise", "short")])
    assert scores == [pytest.approx(0.9)]


async def test_the_check_averages_both_directions(nli_url: str) -> None:
    scores = await NliCheck(NliEndpoint(nli_url)).scores("same size", ["size same"])
    assert scores == [pytest.approx(0.9)]
    # one direction entails, the other not: (0.9 + 0.4) / 2
    assert await NliCheck(NliEndpoint(nli_url)).scores("ab", ["abc"]) == [pytest.approx(0.65)]


async def test_a_failing_endpoint_raises_with_its_status_after_its_retries(nli_url: str) -> None:
    received.clear()
    with pytest.raises(ServiceCallError) as error:
        await NliEndpoint(nli_url, retry=FAST).entailment([("crash", "x")])
    assert error.value.status == 500 and len(received) == FAST.attempts


async def test_a_moment_of_unavailability_is_asked_again(nli_url: str) -> None:
    received.clear()
    flaky.add("loading premise")
    scores = await NliEndpoint(nli_url, retry=FAST).entailment([("loading premise", "short")])
    assert scores == [pytest.approx(0.9)] and len(received) == 2


FAST = Backoff(attempts=3, base_delay_s=0.01)
