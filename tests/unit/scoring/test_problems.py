"""Scoring's refusals and failures leave the service as the problem details callers have had."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from steadfast.services.scoring.app import create_app
from steadfast.services.scoring.components import ScoringComponents
from steadfast.services.scoring.controllers.problems import problem_for
from steadfast.services.scoring.domain.errors import DependencyFailed
from steadfast.services.scoring.settings import ScoringSettings
from steadfast.shared.components import components_of, set_components
from steadfast.shared.contracts.base import FieldError, Problem


class FailingJudges:
    """Judges whose every call the gateway answered with an error."""

    async def replies(self, calls: list[tuple[str, list[dict[str, str]]]]) -> list[str | Problem]:
        return [Problem(title="Model call failed: timeout", status=504) for _ in calls]


@pytest.fixture
def client() -> Iterator[TestClient[Any]]:
    app = create_app(ScoringSettings(log_json=False, math_warm_up=False))
    components = components_of(app.state, ScoringComponents)
    set_components(app, dataclasses.replace(components, judges=FailingJudges()))
    with TestClient(app) as test_client:
        yield test_client


def _problem_body(response: Any) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body.pop("request_id")
    return body


def test_a_request_that_cannot_be_graded_is_a_422_naming_its_field(client: TestClient[Any]) -> None:
    item = {"question": "q", "answer_text": "A", "gold": {}}
    response = client.post("/v1/grade", json={"task": "choice", "items": [item]})
    assert response.status_code == 422
    detail = "task 'choice' needs gold.correct_option"
    assert _problem_body(response) == {
        "title": "Missing gold answer",
        "status": 422,
        "detail": detail,
        "errors": [{"field": "items[0].gold.correct_option", "message": detail, "source": "body"}],
    }


def test_a_failed_judge_call_is_a_502_naming_the_answer(client: TestClient[Any]) -> None:
    item = {"question": "q", "answer_text": "Paris", "gold": {"answers": ["Paris"]}}
    body = {"task": "factual", "grader": "llm", "judge_models": ["j"], "items": [item]}
    response = client.post("/v1/grade", json=body)
    assert response.status_code == 502
    detail = "judge 'j': Model call failed: timeout:"
    assert _problem_body(response) == {
        "title": "Judge call failed",
        "status": 502,
        "detail": detail,
        "errors": [{"field": "items[0]", "message": detail, "source": "body"}],
    }


def test_a_dependency_down_for_now_is_a_503_without_fields() -> None:
    error = DependencyFailed("Maths grader unavailable", "worker died", unavailable=True)
    assert problem_for(error) == Problem(
        title="Maths grader unavailable", status=503, detail="worker died"
    )


def test_a_dependency_that_answered_with_an_error_is_a_502() -> None:
    error = DependencyFailed("Judge calls failed", "the gateway: boom", unavailable=False)
    assert problem_for(error).status == 502


def test_a_dependency_failure_names_the_field_it_failed_on() -> None:
    error = DependencyFailed("Judge call failed", "boom", unavailable=False, field="items[3]")
    assert problem_for(error).errors == [FieldError(field="items[3]", message="boom")]
