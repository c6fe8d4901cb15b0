"""``POST /v1/verify`` in-process, with a stand-in gateway and embedder."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from steadfast.services.verify.adapters import embedder as embedder_module
from steadfast.services.verify.adapters.thresholds import GatewayThresholds
from steadfast.services.verify.app import create_app
from steadfast.services.verify.components import VerifyComponents
from steadfast.services.verify.domain.judges import JudgePool
from steadfast.services.verify.domain.prompts import JUDGE_PROMPT_VERSION
from steadfast.services.verify.domain.semantic import SemanticModels
from steadfast.services.verify.settings import VerifyServiceSettings
from steadfast.shared.components import components_of, set_components
from steadfast.shared.contracts.gateway import GenerateRequest
from tests.unit.verify.fakes import BagOfWordsEmbedder, FakeGateway, gateway_error


def _answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
    if request.model == "missing":
        return gateway_error(404, detail="unknown route 'missing'")
    return "YES"


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    settings = VerifyServiceSettings()
    app = create_app(settings)
    gateway = FakeGateway(_answer)
    judges = JudgePool(gateway, settings.default_judge_model, settings.judge_concurrency)
    components = VerifyComponents(
        judges, SemanticModels(BagOfWordsEmbedder()), GatewayThresholds(gateway)
    )
    set_components(app, components)
    with TestClient(app) as test_client:
        yield test_client


def _components(client: TestClient[Any]) -> VerifyComponents:
    return components_of(client.app.state, VerifyComponents)


def _use_semantic_models(client: TestClient[Any], **changes: Any) -> None:
    """The running app's semantic models, some of them replaced."""
    components = _components(client)
    semantic_models = dataclasses.replace(components.semantic_models, **changes)
    set_components(client.app, dataclasses.replace(components, semantic_models=semantic_models))


def test_verify_reports_every_candidate_and_the_checks_that_ran(client: TestClient[Any]) -> None:
    body = {
        "original": "How many apples does Tom have now?",
        "candidates": ["How many apples does Tom have now", "Tom has how many apples at present?"],
        "thresholds": {"embedding": 0.1},
    }
    response = client.post("/v1/verify", json=body)
    assert response.status_code == 200, response.text
    payload = response.json()
    assert payload["semantic_check"] == "embedding"
    assert payload["judge_model"] == "local"
    assert payload["judge_prompt_version"] == JUDGE_PROMPT_VERSION
    first, second = payload["results"]
    assert first["accepted"] is False and first["deciding_stage"] == "lexical"
    assert second["accepted"] is True and second["judge_verdict"] == "yes"
    assert second["semantic_check"] == "embedding" and second["semantic"] > 0.1


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"original": "Q?", "candidates": []}, 400, "candidates"),
        ({"original": "", "candidates": ["x?"]}, 400, "original"),
        ({"original": "  ", "candidates": ["x?"]}, 422, "original"),
        (
            {"original": "Q?", "candidates": ["x?"], "thresholds": {"overlap": 1.5}},
            400,
            "thresholds.overlap",
        ),
        (
            {"original": "Q?", "candidates": ["x?"], "stages": {"semantic": "cosine"}},
            400,
            "stages.semantic",
        ),
        (
            {"original": "Q?", "candidates": ["x?"], "stages": {"semantic": "nli"}},
            422,
            "stages.semantic",
        ),
        (
            {
                "original": "Q?",
                "candidates": ["x?"],
                "judge_model": "missing",
                "stages": {"semantic": "off"},
            },
            422,
            "judge_model",
        ),
        ({"original": "Q?", "candidates": ["x?"], "colour": "red"}, 400, "colour"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(
    client: TestClient[Any], body: dict[str, Any], status: int, field: str
) -> None:
    response = client.post("/v1/verify", json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert field in [error["field"] for error in response.json()["errors"]]


class EntailsAll:
    """A stand-in NLI model: every pair entails."""

    async def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        return [0.9] * len(pairs)


def test_the_default_semantic_check_is_the_nli_model_where_one_is_configured(
    client: TestClient[Any],
) -> None:
    body = {"original": "How many apples does Tom have?", "candidates": ["Tom has how many?"]}
    without = client.post("/v1/verify", json=body).json()
    assert without["semantic_check"] == "embedding"  # METHOD's fallback
    _use_semantic_models(client, nli=EntailsAll())
    with_nli = client.post("/v1/verify", json=body).json()
    assert with_nli["semantic_check"] == "nli"
    assert with_nli["results"][0]["semantic"] == pytest.approx(0.9)


def test_an_unknown_judge_route_is_refused_before_any_stage_runs(client: TestClient[Any]) -> None:
    gateway = _components(client).judges.caller
    assert isinstance(gateway, FakeGateway)
    gateway.routes = {"local", "judge-a"}
    try:
        # every candidate fails the lexical stage: the judge would never have been asked
        body = {"original": "How old is Ann?", "candidates": ["How old is Ann?"]}
        unknown = client.post("/v1/verify", json={**body, "judge_model": "judge-b"})
        assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "judge_model"
        assert client.post("/v1/verify", json={**body, "judge_model": "judge-a"}).status_code == 200
        gateway.routes = {"judge-a"}  # the service's default judge ("local") is missing
        misconfigured = client.post("/v1/verify", json=body)
        assert misconfigured.status_code == 503 and "judge_model" in misconfigured.json()["detail"]
    finally:
        gateway.routes = None


@pytest.mark.parametrize("missing", ["onnxruntime", "model file"])
def test_an_embedder_that_cannot_load_is_a_503_saying_why(
    client: TestClient[Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, missing: str
) -> None:
    if missing == "onnxruntime":
        monkeypatch.setitem(sys.modules, "onnxruntime", None)
    else:
        nowhere = (tmp_path / "model.onnx", tmp_path / "tokenizer.json")
        monkeypatch.setattr(embedder_module, "_model_files", lambda: nowhere)
    _use_semantic_models(client, embedder=embedder_module.MiniLMEmbedder())
    body = {"original": "How far is the Moon?", "candidates": ["What distance is the Moon?"]}
    response = client.post("/v1/verify", json=body)
    assert response.status_code == 503, response.text
    problem = response.json()
    assert problem["title"] == "Embedder unavailable"
    assert ("onnxruntime" if missing == "onnxruntime" else "model.onnx") in problem["detail"]


def test_reference_answers_need_the_audit_and_are_capped(client: TestClient[Any]) -> None:
    body = {
        "original": "What is the capital city of Australia?",
        "candidates": ["Which city is Australia's capital?"],
        "reference_answers": ["Canberra"],
    }
    alone = client.post("/v1/verify", json=body)
    assert alone.status_code == 422
    assert alone.json()["errors"][0]["field"] == "reference_answers"
    audited = client.post("/v1/verify", json={**body, "audit": True})
    assert audited.status_code == 200, audited.text
    assert "answer" in audited.json()["stages_run"]
    too_many = client.post(
        "/v1/verify", json={**body, "audit": True, "reference_answers": ["a", "b", "c", "d"]}
    )
    assert too_many.status_code == 400
    assert "reference_answers" in too_many.text
