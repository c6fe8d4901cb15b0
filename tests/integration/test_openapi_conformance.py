"""The committed OpenAPI documents tell the truth about the five services.

Schemathesis reads ``openapi/<service>.json`` and sends each operation requests made from it
(its examples, the boundaries of every constraint, then random ones) to the real services in
front of a stand-in model. A request the document allows must not be refused, one it forbids must
not be accepted, and every answer must have a documented status, media type and shape; no 5xx.
The run is bounded (a few examples per operation) and derandomized, so it fails the same way
every time. The deliberate exceptions are listed below, each with its reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig

from steadfast.shared.internal_token import INTERNAL_TOKEN_HEADER
from steadfast.shared.settings import SERVICE_NAMES
from tests.integration.perturb.stack import running_stack

REPO = Path(__file__).resolve().parents[2]

#: generated requests per operation and phase: enough to reach every constraint's edges
MAX_EXAMPLES = 8

#: what the services' answers are checked for. Left out: ``allow_header_conformance`` (litestar
#: answers OPTIONS itself, and its ``Allow`` lists only some of a path's methods) and the stateful
#: checks (``use_after_free``, ``ensure_resource_availability``, ``object_level_authorization``),
#: which need links between operations that the documents do not declare.
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "positive_data_acceptance",
    "negative_data_rejection",
    "missing_required_header",
    "unsupported_method",
    "ignored_auth",
)

#: statuses a schema-valid request may get on every operation: 2xx, an unknown id (404), a
#: conflict with what is stored (409), and 422: a refusal a JSON Schema cannot say, which the
#: operation's 422 description states (a model route the gateway does not have, a gold answer
#: the task needs, a record repeated in a list: they depend on the configuration or on other
#: items)
ACCEPTED_VALID: list[int | str] = ["2XX", 404, 409, 422]

#: statuses a schema-violating request may get: any refusal (a 400 problem mostly; 413 when the
#: body is larger than the service reads, which it refuses before reading it); that it is
#: documented is checked apart (``status_code_conformance``)
REFUSED_INVALID: list[int | str] = ["4XX"]

#: the deliberate exceptions: operations that refuse some schema-valid requests with another
#: status, for a rule the schema cannot say (their descriptions say it), and why
EXCEPTIONS: dict[str, tuple[list[int | str], str]] = {
    "evaluateNow": ([400], "exactly one of model and models, and no model named twice"),
    "createEvaluation": ([400], "exactly one of model and models, and no model named twice"),
    "evaluatePositionBias": ([400], "exactly one of items and dataset_id, model and models"),
    "createPositionBiasJob": ([400], "exactly one of items and dataset_id, model and models"),
    "createMonitor": ([400], "a monitor carries the request of its kind and not the other"),
    "createStudy": ([400], "a part carries the request of its protocol and not the other"),
    "answerWithSelfParaphrase": ([400], "exactly one of question and messages"),
    "createChatCompletion": (
        [400],
        "OpenAI's sampling options (top_p, penalties, n, tools...) only at their neutral value",
    ),
    "createPermutations": ([400], "the swap scheme is for two options only"),
    "listShadowDisagreements": ([403], "the stack configures no admin key: nobody reads them"),
}


def conformance_config() -> SchemathesisConfig:
    project: dict[str, Any] = {
        "seed": 20261205,
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "no-shrink": True},
        "phases": {"stateful": {"enabled": False}},
        "checks": {
            "enabled": False,
            **{name: {"enabled": True} for name in CHECKS},
            "positive_data_acceptance": {"enabled": True, "expected-statuses": ACCEPTED_VALID},
            "negative_data_rejection": {"enabled": True, "expected-statuses": REFUSED_INVALID},
        },
        "operations": [
            {
                "include-operation-id": operation,
                "checks": {
                    "positive_data_acceptance": {"expected-statuses": [*ACCEPTED_VALID, *extra]}
                },
            }
            for operation, (extra, _reason) in EXCEPTIONS.items()
        ],
    }
    return SchemathesisConfig.from_dict(project)


#: a dataset upload's NDJSON body is a file's bytes (its schema: a binary string), sent as they are
schemathesis.serializer.alias("application/x-ndjson", "application/octet-stream")


def integral_floats_as_ints(value: Any) -> Any:
    """``2000.0`` as ``2000``: JSON Schema counts it an integer, msgspec refuses it as one (a
    deliberate strictness: a count sent as a float is a caller's mistake)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, list):
        return [integral_floats_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: integral_floats_as_ints(item) for key, item in value.items()}
    return value


def check_call(case: Any, base_url: str) -> None:
    """Sends the case and checks the answer; a schema-valid body goes with its integral
    numbers written as integers (see :func:`integral_floats_as_ints`)."""
    if case.meta is not None and case.meta.generation.mode.is_positive:
        case.body = integral_floats_as_ints(case.body)
    case.call_and_validate(base_url=base_url)


def committed_document(service: str) -> Any:
    path = REPO / "openapi" / f"{service}.json"
    return schemathesis.openapi.from_path(path, config=conformance_config())


def create_api_key(data_dir: Path) -> str:
    """A key made as an operator makes one (``steadfast keys create``): its second line; every
    scope (admin), so that every operation is reached."""
    env = {**os.environ, "STEADFAST_DATA_DIR": str(data_dir)}
    for variable in ("STEADFAST_DATABASE_URL", "STEADFAST_EVALUATOR_DATABASE_URL", "DATABASE_URL"):
        env.pop(variable, None)
    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "steadfast.cli",
            "keys",
            "create",
            "conformance",
            "--scope",
            "admin",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return created.stdout.splitlines()[1]


#: the evaluator's key stands in the generated calls (they are made before the stack runs)
#: until the call is sent
KEY_PLACEHOLDER = "Bearer <the key made by the fixture>"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str]]:
    """The five services (the evaluator asking for keys, the others for the internal token) and
    a key of the evaluator's."""
    tmp = tmp_path_factory.mktemp("conformance")
    env = {
        "STEADFAST_EVALUATOR_AUTH": "keys",
        "STEADFAST_GATEWAY_AUTH": "keys",
        "STEADFAST_INTERNAL_TOKEN": INTERNAL_TOKEN,
    }
    with running_stack(tmp, SERVICE_NAMES, env=env) as started:
        yield started[0], create_api_key(tmp / "data")


@pytest.fixture(scope="module")
def urls(stack: tuple[dict[str, str], str]) -> dict[str, str]:
    return stack[0]


EVALUATOR = committed_document("evaluator")
GATEWAY = committed_document("gateway")
PERTURB = committed_document("perturb")
VERIFY = committed_document("verify")
SCORING = committed_document("scoring")


@EVALUATOR.auth()
class EvaluatorKey:
    """Every generated call carries the key (``ignored_auth`` also sends each without it)."""

    def get(self, case: Any, context: Any) -> str:
        return KEY_PLACEHOLDER

    def set(self, case: Any, authorization: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), "Authorization": authorization}


#: the services' internal token in the stack (STEADFAST_INTERNAL_TOKEN)
INTERNAL_TOKEN = "conformance-internal-token"


class InternalToken:
    """Generated calls to the services' internal endpoints carry the token (``ignored_auth``
    also sends each without it, and expects the documented 401)."""

    def get(self, case: Any, context: Any) -> str:
        return INTERNAL_TOKEN

    def set(self, case: Any, token: str, context: Any) -> None:
        case.headers = {**(case.headers or {}), INTERNAL_TOKEN_HEADER: token}


for document in (GATEWAY, PERTURB, VERIFY, SCORING):
    document.auth()(InternalToken)


@EVALUATOR.parametrize()
def test_evaluator(case: Any, stack: tuple[dict[str, str], str]) -> None:
    urls, key = stack
    if case.headers and case.headers.get("Authorization") == KEY_PLACEHOLDER:
        case.headers["Authorization"] = f"Bearer {key}"
    check_call(case, urls["evaluator"])


@GATEWAY.parametrize()
def test_gateway(case: Any, urls: dict[str, str]) -> None:
    check_call(case, urls["gateway"])


@PERTURB.parametrize()
def test_perturb(case: Any, urls: dict[str, str]) -> None:
    check_call(case, urls["perturb"])


@VERIFY.parametrize()
def test_verify(case: Any, urls: dict[str, str]) -> None:
    check_call(case, urls["verify"])


@SCORING.parametrize()
def test_scoring(case: Any, urls: dict[str, str]) -> None:
    check_call(case, urls["scoring"])
