"""Every service answers bad input with problem-details JSON naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar import post
from litestar.exceptions import ClientException, SerializationException
from litestar.params import FromQuery, JSONBody
from litestar.testing import TestClient

from steadfast.shared import problems
from steadfast.shared.app import create_service_app
from steadfast.shared.contracts.base import Contract
from steadfast.shared.errors import field_from_message
from steadfast.shared.problems import (
    ProblemError,
    _path_of_infinity,
    is_undecodable_body,
)
from steadfast.shared.settings import ServiceSettings


class Inner(Contract):
    k: int


class Body(Contract):
    question: str
    k: int = 5
    items: list[Inner] = msgspec.field(default_factory=list)


@post("/v1/echo", operation_id="echo")
async def echo(data: JSONBody[Body]) -> Body:
    if not data.question.strip():
        raise ProblemError(422, "Empty question", "question must not be empty", field="question")
    return data


@post("/v1/echo-with-query", operation_id="echoWithQuery")
async def echo_with_query(data: JSONBody[Body], k: FromQuery[int] = 1) -> Body:
    return data


@post("/v1/decode-a-reply", operation_id="decodeAReply")
async def decode_a_reply() -> None:
    msgspec.json.decode(b"[" * 5000 + b"]" * 5000)  # as a service's reply could be


@post("/v1/crash", operation_id="crash")
async def crash() -> None:
    raise RuntimeError("INSERT INTO secrets VALUES ('sk-live-123')")


def _client(max_body_bytes: int) -> TestClient:  # type: ignore[type-arg]
    app = create_service_app(
        service="testsvc",
        settings=ServiceSettings(max_body_bytes=max_body_bytes),
        route_handlers=[echo, echo_with_query, decode_a_reply, crash],
    )
    return TestClient(app)


@pytest.fixture
def client() -> Iterator[TestClient]:  # type: ignore[type-arg]
    with _client(max_body_bytes=1024) as test_client:
        yield test_client


def test_valid_body_passes(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", json={"question": "q", "k": 3})
    assert response.status_code == 201
    assert response.json()["k"] == 3


def test_malformed_json_is_400_problem(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post(
        "/v1/echo", content=b'{"question": ', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 400
    assert body["title"] == "Malformed JSON body"
    assert body["errors"][0]["field"] == "body"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"question": "q", "k": 1e999}', "k"),
        (b'{"question": "q", "items": [{"k": 1}, {"k": -1e400}]}', "items[1].k"),
        (b'{"question": "q", "k": 1, "extra": {"deep": [1e999]}}', "extra.deep[0]"),
    ],
)
def test_a_number_no_float_holds_names_its_field(
    client: TestClient,  # type: ignore[type-arg]
    raw: bytes,
    field: str,
) -> None:
    response = client.post("/v1/echo", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400
    body = response.json()
    assert [error["field"] for error in body["errors"]] == [field]
    assert body["detail"].startswith(f"{field}: number out of range")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"question": "q", "k": 1e999, "x": }',  # the stdlib parser fails too
        b'{"question": "q", "k": 1e999, "k": 1}',  # the stdlib parser keeps the last value
    ],
)
def test_a_number_no_float_holds_that_cannot_be_placed_is_the_bodys(raw: bytes) -> None:
    with _client(max_body_bytes=64 * 1024) as client:
        response = client.post(
            "/v1/echo", content=raw, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["body"]
    assert "number out of range" in response.json()["detail"]


def test_a_number_no_float_holds_in_a_body_the_stdlib_cannot_read_is_the_bodys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the re-read that places the number runs deeper in the stack than the first decoding, so
    # a body nested near the limit can pass the one and not the other: the branch that answers
    # then, reached here for sure
    body = b'{"question": "q", "k": 1e999}'
    loads = problems.json.loads

    def too_deep(document: Any, *args: Any, **kwargs: Any) -> Any:
        if document == body:
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")
        return loads(document, *args, **kwargs)

    monkeypatch.setattr(problems.json, "loads", too_deep)
    with _client(max_body_bytes=64 * 1024) as client:
        response = client.post(
            "/v1/echo", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["body"]
    assert "number out of range" in response.json()["detail"]


def test_a_body_nested_deeper_than_any_parser_goes_is_too_deep_not_out_of_range() -> None:
    raw = b"[" * 5000 + b"1e999" + b"]" * 5000
    with _client(max_body_bytes=64 * 1024) as client:
        response = client.post(
            "/v1/echo", content=raw, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["body"]
    assert "too deep" in response.json()["detail"]


def test_the_first_infinite_number_is_named_however_deep() -> None:
    document: Any = {"a": [1.0, {"b": float("-inf")}], "c": float("inf")}
    for _ in range(5000):
        document = [document]
    assert _path_of_infinity(document) == "[0]" * 5000 + ".a[1].b"


def test_wrong_type_names_the_field(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", json={"question": "q", "k": "five"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert [error["field"] for error in body["errors"]] == ["k"]
    assert "k" in body["detail"]


def test_nested_field_path_is_named(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", json={"question": "q", "items": [{"k": 1}, {"k": "x"}]})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "items[1].k"


def test_missing_and_unknown_fields(client: TestClient) -> None:  # type: ignore[type-arg]
    missing = client.post("/v1/echo", json={"k": 1})
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["field"] == "question"
    unknown = client.post("/v1/echo", json={"question": "q", "kk": 1})
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["field"] == "kk"


def test_nested_missing_and_unknown_fields_keep_their_path(client: TestClient) -> None:  # type: ignore[type-arg]
    unknown = client.post("/v1/echo", json={"question": "q", "items": [{"k": 1, "extra": 2}]})
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["field"] == "items[0].extra"
    missing = client.post("/v1/echo", json={"question": "q", "items": [{"k": 1}, {}]})
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["field"] == "items[1].k"


def test_body_over_limit_is_413(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", json={"question": "x" * 4000})
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 413


def test_domain_problem_names_field(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", json={"question": "  "})
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"field": "question", "message": "question must not be empty", "source": "body"}
    ]


def test_request_id_is_echoed(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.get("/healthz", headers={"X-Request-ID": "req-42"})
    assert response.headers["x-request-id"] == "req-42"
    minted = client.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert minted.headers["x-request-id"] != "bad id with spaces"
    assert len(minted.headers["x-request-id"]) == 32


def test_metrics_exposes_build_info_and_route_templates(client: TestClient) -> None:  # type: ignore[type-arg]
    client.get("/healthz")
    text = client.get("/metrics").text
    assert "steadfast_build_info{" in text and 'service="testsvc"' in text
    assert 'path="/healthz"' in text


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ("Expected `int`, got `str` - at `$.items[0].k`", "items[0].k"),
        ("Object missing required field `question`", "question"),
        ("Object contains unknown field `kk` - at `$.items[2]`", "items[2].kk"),
        ("Expected `int`, got `str` - at `$`", None),
    ],
)
def test_field_from_message(message: str, field: str | None) -> None:
    assert field_from_message(message) == field


def test_an_unexpected_error_is_a_500_that_tells_its_type_not_its_message(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    response = client.post("/v1/crash")
    assert response.status_code == 500
    body = response.json()
    assert "RuntimeError" in body["detail"] and "secrets" not in response.text
    assert body["request_id"] == response.headers["x-request-id"]


def test_an_empty_body_is_named_as_such(client: TestClient) -> None:  # type: ignore[type-arg]
    response = client.post("/v1/echo", content=b"", headers={"content-type": "application/json"})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "body" and "body is empty" in error["message"]


def test_only_a_body_the_decoder_refused_is_called_undecodable() -> None:
    try:
        try:
            raise SerializationException("malformed JSON")
        except SerializationException as cause:
            raise ClientException(str(cause)) from cause
    except ClientException as refused_body:
        assert is_undecodable_body(refused_body)
    assert not is_undecodable_body(ClientException("Invalid content-length: 'x'"))
    assert not is_undecodable_body(ClientException("Invalid host header"))


def test_a_body_field_named_like_a_query_parameter_stays_the_bodys(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    in_body = client.post("/v1/echo-with-query", json={"question": "q", "k": "five"})
    assert in_body.status_code == 400
    assert [(e["field"], e["source"]) for e in in_body.json()["errors"]] == [("k", "body")]
    in_query = client.post("/v1/echo-with-query?k=five", json={"question": "q"})
    assert in_query.status_code == 400
    assert [(e["field"], e["source"]) for e in in_query.json()["errors"]] == [("k", "query")]


def test_a_reply_nested_too_deep_is_not_blamed_on_the_caller(
    client: TestClient,  # type: ignore[type-arg]
) -> None:
    response = client.post("/v1/decode-a-reply")
    assert response.status_code == 500
    assert "RecursionError" in response.json()["detail"]
