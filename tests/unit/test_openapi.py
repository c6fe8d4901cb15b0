"""The committed OpenAPI documents are exactly what the code generates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steadfast.cli import generate_openapi
from steadfast.shared.settings import SERVICE_NAMES

OPENAPI_DIR = Path(__file__).resolve().parents[2] / "openapi"


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_committed_document_matches_code(service: str) -> None:
    committed = (OPENAPI_DIR / f"{service}.json").read_text()
    assert committed == generate_openapi(service), (
        f"openapi/{service}.json is stale: run `steadfast openapi`"
    )


#: operations that answer errors in another documented shape (OpenAI's, for its clients)
OWN_ERROR_SHAPE = {("post", "/v1/chat/completions")}
#: the gateway's operations that call a model: their errors are the gateway's own problem type
MODEL_CALLS = {("gateway", "post", "/v1/generate"), ("gateway", "post", "/v1/self-paraphrase")}
#: statuses only a failed model call answers with, so always with its outcome
MODEL_FAILURE_STATUSES = {"429", "502", "503", "504"}
#: the members the gateway's problems add to every service's
GATEWAY_PROBLEM_MEMBERS = {"outcome", "attempts", "retry_after_s"}


def _error_schemas(service: str, method: str, path: str, status: str) -> set[str]:
    """The schemas an operation's error answer of ``status`` may be documented as."""
    if (method, path) in OWN_ERROR_SHAPE:
        return {"OpenAIError"}
    if (service, method, path) not in MODEL_CALLS:
        return {"Problem"}
    if status in MODEL_FAILURE_STATUSES:
        return {"GatewayProblem"}
    return {"Problem", "GatewayProblem"}


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_every_api_operation_documents_its_errors_as_problem_details(service: str) -> None:
    document = json.loads(generate_openapi(service))
    for path, methods in document["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in methods.items():
            statuses = {s for s in operation["responses"] if s.startswith(("4", "5"))}
            assert {"400", "500"} <= statuses, f"{method.upper()} {path}: {statuses}"
            if "{" in path:
                assert "404" in statuses, f"{method.upper()} {path} lacks its 404"
            if "requestBody" in operation:  # a body over max_body_bytes
                assert "413" in statuses, f"{method.upper()} {path} lacks its 413"
            if method in ("get", "delete"):
                assert "413" not in statuses, f"{method.upper()} {path}: a 413 without a body"
            own_shape = (method, path) in OWN_ERROR_SHAPE
            media = "application/json" if own_shape else "application/problem+json"
            for status in statuses:
                content = operation["responses"][status]["content"]
                schema = content[media]["schema"]["$ref"].rsplit("/", 1)[-1]
                expected = _error_schemas(service, method, path, status)
                assert schema in expected, f"{method.upper()} {path} {status}"


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_only_the_gateway_documents_its_problem_members(service: str) -> None:
    schemas = json.loads(generate_openapi(service))["components"]["schemas"]
    assert not GATEWAY_PROBLEM_MEMBERS & set(schemas["Problem"]["properties"])
    if service == "gateway":
        gateway_problem = set(schemas["GatewayProblem"]["properties"])
        assert gateway_problem == set(schemas["Problem"]["properties"]) | GATEWAY_PROBLEM_MEMBERS
    else:
        assert "GatewayProblem" not in schemas


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_every_operation_has_an_explicit_id(service: str) -> None:
    document = json.loads(generate_openapi(service))
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert operation.get("operationId"), f"{method.upper()} {path} lacks operationId"
            assert not operation["operationId"].startswith(("Get", "Post", "Delete")), (
                f"{method.upper()} {path} has a generated operationId"
            )


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_readiness_documents_its_503(service: str) -> None:
    operation = json.loads(generate_openapi(service))["paths"]["/readyz"]["get"]
    assert "503" in operation["responses"]


def test_the_upload_and_the_reports_say_what_they_carry() -> None:
    paths = json.loads(generate_openapi("evaluator"))["paths"]
    upload = paths["/v1/datasets"]["post"]["requestBody"]
    assert upload["required"] and "text/csv" in upload["content"]
    assert paths["/v1/datasets"]["post"]["responses"]["201"]["content"]["application/json"][
        "schema"
    ]["$ref"].endswith("/DatasetInfo")
    for report in ("/v1/evaluations/{evaluation_id}/report", "/v1/studies/{study_id}/report"):
        served = paths[report]["get"]["responses"]["200"]["content"]
        assert set(served) == {
            "application/json",
            "text/html; charset=utf-8",
            "text/csv; charset=utf-8",
        }
