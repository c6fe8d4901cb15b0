"""The domain's refusals (``shared.errors``) leave every service as the same problem details."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import get
from litestar.params import FromPath
from litestar.testing import TestClient

from steadfast.shared.app import create_service_app
from steadfast.shared.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    OverLimit,
    RequestRefused,
    TooLarge,
    Unprocessable,
    nested_under,
    not_found,
)
from steadfast.shared.settings import ServiceSettings

REFUSALS: dict[str, RequestRefused] = {
    "invalid": InvalidRequest("`items` is empty", field="items"),
    "missing": not_found("evaluation", "ev-1", "evaluation_id"),
    "busy": Conflict("already finished", field="evaluation_id", source="path", title="Done"),
    "large": TooLarge("too many answers"),
    "unknown": Unprocessable("no such route", field="model", title="Unknown model"),
    "limited": OverLimit("60 requests a minute", limit="rpm", retry_after_s=2.2),
}


@get("/v1/refuse/{kind:str}", operation_id="refuse")
async def refuse(kind: FromPath[str]) -> None:
    raise REFUSALS[kind]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:  # type: ignore[type-arg]
    app = create_service_app(service="testsvc", settings=ServiceSettings(), route_handlers=[refuse])
    with TestClient(app) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("kind", "status", "title", "error"),
    [
        ("invalid", 400, "Invalid request", {"field": "items", "source": "body"}),
        ("missing", 404, "Not found", {"field": "evaluation_id", "source": "path"}),
        ("busy", 409, "Done", {"field": "evaluation_id", "source": "path"}),
        ("large", 413, "Request too large", None),
        ("unknown", 422, "Unknown model", {"field": "model", "source": "body"}),
        ("limited", 429, "Too many requests", None),
    ],
)
def test_each_refusal_has_its_status_title_and_field(
    client: TestClient,  # type: ignore[type-arg]
    kind: str,
    status: int,
    title: str,
    error: dict[str, str] | None,
) -> None:
    response = client.get(f"/v1/refuse/{kind}")
    body = response.json()
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/problem+json")
    assert (body["status"], body["title"], body["detail"]) == (
        status,
        title,
        REFUSALS[kind].detail,
    )
    if error is None:
        assert "errors" not in body
    else:
        assert body["errors"] == [{**error, "message": REFUSALS[kind].detail}]


def test_a_key_over_its_limit_is_told_when_to_ask_again_and_which_limit(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    response = client.get("/v1/refuse/limited")
    assert response.headers["retry-after"] == "3"  # whole seconds, rounded up
    assert response.json()["limit"] == "rpm"
    assert OverLimit("x", limit="rpm", retry_after_s=0.01).retry_after_s == 1


def test_a_nested_refusal_names_the_field_in_the_outer_body() -> None:
    with pytest.raises(InvalidRequest) as refused, nested_under("parts[2]"):
        raise InvalidRequest("blank", field="evaluation.k")
    assert refused.value.field == "parts[2].evaluation.k"


def test_a_path_or_query_field_is_not_nested() -> None:
    with pytest.raises(NotFound) as refused, nested_under("parts[2]"):
        raise NotFound("no model", field="model", source="query")
    assert refused.value.field == "model"


def test_an_unlisted_kind_of_refusal_is_a_bad_request() -> None:
    class Odd(RequestRefused):
        """A kind no service maps."""

    from steadfast.shared.problems import status_of

    assert status_of(Odd("odd")) == 400
    assert status_of(Unprocessable("x")) == 422
