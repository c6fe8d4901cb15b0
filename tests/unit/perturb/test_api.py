"""The perturb endpoints in-process, with a stand-in gateway and verify service."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from steadfast.services.perturb.app import create_app
from steadfast.services.perturb.components import PerturbComponents
from steadfast.services.perturb.domain.distractors import DistractorWriter
from steadfast.services.perturb.domain.paraphrasing import ParaphraseBuilder
from steadfast.services.perturb.settings import PerturbSettings
from steadfast.shared.components import set_components
from steadfast.shared.contracts.gateway import GenerateRequest
from tests.unit.perturb.fakes import FakeVerifier
from tests.unit.verify.fakes import FakeGateway, gateway_error


def _answer(request: GenerateRequest):  # type: ignore[no-untyped-def]
    if request.model == "nope":
        return gateway_error(404, detail="unknown route 'nope'")
    if request.model == "down":  # its model server refuses connections for now
        return gateway_error(503, "unavailable", "cannot connect", retry_after_s=5.0)
    return f"rewording {request.sample_index}"


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    settings = PerturbSettings()
    app = create_app(settings)
    gateway = FakeGateway(_answer)
    paraphraser = ParaphraseBuilder(gateway, FakeVerifier())
    set_components(app, PerturbComponents(settings, paraphraser, DistractorWriter(gateway)))
    with TestClient(app) as test_client:
        yield test_client


def test_paraphrases(client: TestClient[Any]) -> None:
    response = client.post("/v1/paraphrases", json={"question": "How old is Tom?", "k": 3})
    assert response.status_code == 200, response.text
    payload = response.json()
    assert payload["complete"] is True and len(payload["accepted"]) == 3
    assert payload["prompt_version"] == "paraphrase-v9"


def test_given_paraphrases_are_used_instead_of_generated_ones(client: TestClient[Any]) -> None:
    body = {
        "question": "How old is Tom?",
        "given": ["What is Tom's age?", {"text": "Tom's age, please?", "kind": "toned"}],
    }
    response = client.post("/v1/paraphrases", json=body)
    assert response.status_code == 200, response.text
    payload = response.json()
    assert [(p["text"], p["kind"], p["provenance"]) for p in payload["accepted"]] == [
        ("What is Tom's age?", "plain", "given"),
        ("Tom's age, please?", "toned", "given"),
    ]
    assert payload["complete"] is True and payload["generator_calls"] == 0


def test_a_generator_down_for_now_is_a_503_not_an_incomplete_set(client: TestClient[Any]) -> None:
    response = client.post("/v1/paraphrases", json={"question": "Q?", "generator": "down"})
    assert response.status_code == 503, response.text
    assert "generator failed on every request" in response.json()["detail"]
    batch = client.post(
        "/v1/paraphrases/batch", json={"requests": [{"question": "Q?", "generator": "down"}]}
    )
    assert batch.json()["results"][0]["error"]["status"] == 503


def test_batch_answers_each_item_with_its_result_or_error(client: TestClient[Any]) -> None:
    body = {
        "requests": [
            {"question": "How old is Tom?", "k": 2},
            {"question": "How old is Ann?", "k": 2, "generator": "nope"},
        ]
    }
    response = client.post("/v1/paraphrases/batch", json=body)
    assert response.status_code == 200, response.text
    first, second = response.json()["results"]
    assert first["result"]["complete"] is True and first["error"] is None
    assert second["result"] is None
    assert second["error"]["status"] == 422
    assert second["error"]["errors"][0]["field"] == "requests[1].generator"


def test_permutations(client: TestClient[Any]) -> None:
    response = client.post("/v1/permutations", json={"options": ["a", "b", "c"]})
    assert response.status_code == 200
    orders = response.json()["orders"]
    assert [o["options"] for o in orders] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    swapped = client.post("/v1/permutations", json={"options": ["a", "b"], "scheme": "swap"})
    assert [o["positions"] for o in swapped.json()["orders"]] == [["A", "B"], ["B", "A"]]


def test_distractors(client: TestClient[Any]) -> None:
    body = {"question": "Capital of France?", "correct_answer": "Paris", "n": 2}
    response = client.post("/v1/distractors", json=body)
    assert response.status_code == 200
    assert response.json()["distractors"] == ["rewording 0", "rewording 1"]


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/v1/paraphrases", {"question": ""}, 400, "question"),
        ("/v1/paraphrases", {"question": "   "}, 422, "question"),
        ("/v1/paraphrases", {"question": "Q?", "k": 0}, 400, "k"),
        # a number sent as a string is not read as one: the contracts promise their types
        ("/v1/paraphrases", {"question": "Q?", "k": "2"}, 400, "k"),
        ("/v1/paraphrases", {"question": "Q?", "feedback": "true"}, 400, "feedback"),
        (
            "/v1/paraphrases",
            {"question": "Q?", "verify": {"thresholds": {"nli": "0.5"}}},
            400,
            "verify.thresholds.nli",
        ),
        ("/v1/paraphrases", {"question": "Q?", "k": 51}, 400, "k"),
        ("/v1/paraphrases", {"question": "Q?", "generator": "nope"}, 422, "generator"),
        ("/v1/paraphrases", {"question": "Q?", "language": "Italian"}, 400, "language"),
        ("/v1/paraphrases", {"question": "Q?", "plain_share": 2}, 400, "plain_share"),
        (
            "/v1/paraphrases",
            {"question": "Q?", "plain_per_round": 0, "toned_per_round": 0},
            422,
            "plain_per_round",
        ),
        (
            "/v1/paraphrases",
            {"question": "Q?", "verify": {"thresholds": {"nli": -1}}},
            400,
            "verify.thresholds.nli",
        ),
        ("/v1/paraphrases", {"question": "Q?", "given": []}, 400, "given"),
        ("/v1/paraphrases", {"question": "Q?", "given": [" \n"]}, 400, "given[0]"),
        ("/v1/paraphrases", {"question": "Q?", "given": ["P?"] * 51}, 400, "given"),
        ("/v1/paraphrases", {"question": "Q?", "answers": ["A"] * 101}, 400, "answers"),
        ("/v1/paraphrases", {"question": "Q?", "answers": [""]}, 400, "answers[0]"),
        (
            "/v1/paraphrases",
            {"question": "Q?", "given": [{"text": "P?", "kind": "x"}]},
            400,
            "given[0].kind",
        ),
        ("/v1/paraphrases", {"question": "Q?", "given": [{"kind": "plain"}]}, 400, "given[0].text"),
        ("/v1/paraphrases/batch", {"requests": []}, 400, "requests"),
        ("/v1/paraphrases/batch", {"requests": [{"question": "Q", "k": 99}]}, 400, "requests[0].k"),
        ("/v1/distractors", {"question": "Q?", "correct_answer": " "}, 422, "correct_answer"),
        ("/v1/distractors", {"question": "Q?", "correct_answer": "A", "mode": "x"}, 400, "mode"),
        (
            "/v1/distractors",
            {"question": "Q?", "correct_answer": "A", "generator": "nope"},
            422,
            "generator",
        ),
        (
            "/v1/distractors",
            {"question": "Q?", "correct_answer": "A", "generator": ""},
            400,
            "generator",
        ),
        ("/v1/paraphrases", {"question": "Q?", "generator": "g" * 201}, 400, "generator"),
        # a seed is reported back and stored with the set: 31 bits, as the evaluator stores it
        ("/v1/paraphrases", {"question": "Q?", "seed": 2**70}, 400, "seed"),
        ("/v1/paraphrases", {"question": "Q?", "seed": -1}, 400, "seed"),
        ("/v1/distractors", {"question": "Q?", "correct_answer": "A", "seed": 2**31}, 400, "seed"),
        ("/v1/permutations", {"options": ["only"]}, 400, "options"),
        ("/v1/permutations", {"options": ["a", "b"], "scheme": "random"}, 400, "scheme"),
        ("/v1/permutations", {"options": ["a", "b", "c"], "scheme": "swap"}, 400, "scheme"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(
    client: TestClient[Any], path: str, body: dict[str, Any], status: int, field: str
) -> None:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert field in [error["field"] for error in response.json()["errors"]]
