"""Bad input to the scoring endpoints gets a 4xx problem naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from steadfast.services.scoring.app import create_app
from steadfast.services.scoring.settings import ScoringSettings


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    with TestClient(create_app(ScoringSettings(log_json=False, math_warm_up=False))) as test_client:
        yield test_client


def _record(**fields: Any) -> dict[str, Any]:
    return {"item_id": "a", "model": "m", "variant": 0, "label": "correct", **fields}


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/v1/metrics/consistency", {"records": [_record(label="right")]}, 400, "records[0].label"),
        ("/v1/metrics/consistency", {"records": [_record(variant=-1)]}, 400, "records[0].variant"),
        ("/v1/metrics/consistency", {"records": []}, 400, "records"),
        (
            "/v1/metrics/consistency",
            {"records": [_record()], "options": {"strict_threshold": 2}},
            400,
            "options.strict_threshold",
        ),
        ("/v1/metrics/consistency", {"records": [_record(), _record()]}, 422, "records[1]"),
        (
            "/v1/metrics/position-bias",
            {
                "records": [
                    {"item_id": "1", "model": "m", "order": "o", "choice": "a", "correct": "A"}
                ]
            },
            400,
            "records[0].choice",
        ),
        (
            "/v1/grade",
            {"task": "choice", "items": [{"question": "q", "answer_text": "A", "gold": {}}]},
            422,
            "items[0].gold.correct_option",
        ),
        (
            "/v1/grade",
            {
                "task": "factual",
                "items": [{"question": "q", "answer_text": "A", "gold": {"answers": ["a", "."]}}],
            },
            422,
            "items[0].gold.answers[1]",
        ),
        (
            "/v1/grade",
            {
                "task": "factual",
                "f1_threshold": 0,
                "items": [{"question": "q", "answer_text": "A", "gold": {"answers": ["a"]}}],
            },
            400,
            "f1_threshold",
        ),
        (
            "/v1/grade",
            {
                "task": "factual",
                "grader": "llm",
                "judge_models": [""],
                "items": [{"question": "q", "answer_text": "A", "gold": {"answers": ["a"]}}],
            },
            400,
            "judge_models[0]",
        ),
    ],
)
def test_bad_input(client: TestClient[Any], path: str, body: Any, status: int, field: str) -> None:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["field"] == field


def test_reference_grading_in_process(client: TestClient[Any]) -> None:
    body = {
        "task": "factual",
        "items": [
            {
                "question": "q",
                "answer_text": "The Eiffel Tower",
                "gold": {"answers": ["Eiffel Tower"]},
            },
            {
                "question": "q",
                "answer_text": "I have no idea",
                "gold": {"answers": ["Eiffel Tower"]},
            },
        ],
    }
    response = client.post("/v1/grade", json=body)
    assert response.status_code == 200
    assert [r["label"] for r in response.json()["results"]] == ["correct", "not_attempted"]


def test_prometheus_counts_graded_answers(client: TestClient[Any]) -> None:
    def graded() -> float:
        text = client.get("/metrics").text
        pattern = (
            "steadfast_scoring_answers_graded_total"
            '{grader="reference",label="correct",task="choice"}'
        )
        line = next((line for line in text.splitlines() if line.startswith(pattern)), None)
        return float(line.split()[-1]) if line else 0.0

    before = graded()
    body = {
        "task": "choice",
        "items": [{"question": "q", "answer_text": "A", "gold": {"correct_option": "A"}}] * 3,
    }
    assert client.post("/v1/grade", json=body).status_code == 200
    assert graded() == before + 3
