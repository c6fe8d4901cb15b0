"""The committed OpenAPI documents are exactly what the code generates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.settings import SERVICE_NAMES
from steadfast.cli import generate_openapi

OPENAPI_DIR = Path(__file__).resolve().parents[2] / "openapi"


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_committed_document_matches_code(service: str) -> None:
    committed = (OPENAPI_DIR / f"{service}.json").read_text()
    assert committed == generate_openapi(service), (
        f"openapi/{service}.json is stale: run `steadfast openapi`"
    )


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_every_operation_has_an_explicit_id(service: str) -> None:
    document = json.loads(generate_openapi(service))
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert operation.get("operationId"), f"{method.upper()} {path} lacks operationId"
            assert not operation["operationId"].startswith(("Get", "Post", "Delete")), (
                f"{method.upper()} {path} has a generated operationId"
            )
