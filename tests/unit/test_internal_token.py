"""``STEADFAST_INTERNAL_TOKEN``: perturb, verify, scoring and the gateway's internal endpoints
answer only calls that carry it; the health and metrics endpoints, the gateway's OpenAI
surfaces and every endpoint of a service without a token stay as they were."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from steadfast.services.gateway.app import create_app as create_gateway
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.services.perturb.app import create_app as create_perturb
from steadfast.services.perturb.settings import PerturbSettings
from steadfast.services.scoring.app import create_app as create_scoring
from steadfast.services.scoring.settings import ScoringSettings
from steadfast.shared.internal_token import INTERNAL_TOKEN_HEADER, internal_headers

TOKEN = "s3cret-token"
PERMUTATION = {"options": ["a", "b"], "scheme": "swap"}


@pytest.fixture
def perturb() -> Iterator[TestClient[Any]]:
    with TestClient(create_perturb(PerturbSettings(internal_token=TOKEN))) as client:
        yield client


def test_a_call_without_the_token_is_refused_naming_the_header(perturb: TestClient[Any]) -> None:
    for headers in ({}, {INTERNAL_TOKEN_HEADER: "wrong"}):
        refused = perturb.post("/v1/permutations", json=PERMUTATION, headers=headers)
        assert refused.status_code == 401, refused.text
        problem = refused.json()
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert problem["errors"][0]["field"] == INTERNAL_TOKEN_HEADER
        assert problem["errors"][0]["source"] == "header"


def test_a_call_with_the_token_is_served_and_probes_need_none(perturb: TestClient[Any]) -> None:
    served = perturb.post("/v1/permutations", json=PERMUTATION, headers=internal_headers(TOKEN))
    assert served.status_code == 200, served.text
    for probe in ("/healthz", "/readyz", "/metrics"):
        assert perturb.get(probe).status_code != 401, probe


def test_without_a_token_the_services_stay_open() -> None:
    with TestClient(create_perturb(PerturbSettings())) as client:
        assert client.post("/v1/permutations", json=PERMUTATION).status_code == 200
    assert internal_headers("") == {}


def test_scoring_asks_for_it_too() -> None:
    with TestClient(create_scoring(ScoringSettings(internal_token=TOKEN, math_warm_up=False))) as c:
        body = {
            "task": "choice",
            "items": [{"question": "q", "answer_text": "A", "gold": {"correct_option": "A"}}],
        }
        assert c.post("/v1/grade", json=body).status_code == 401
        assert c.post("/v1/grade", json=body, headers=internal_headers(TOKEN)).status_code == 200


def test_the_gateway_keeps_its_internal_endpoints_for_the_services(tmp_path: Any) -> None:
    settings = GatewaySettings(internal_token=TOKEN, data_dir=str(tmp_path))
    with TestClient(create_gateway(settings)) as gateway:
        body = {"model": "nowhere", "messages": [{"role": "user", "content": "hi"}]}
        assert gateway.post("/v1/generate", json=body).status_code == 401
        assert gateway.post("/v1/generate/batch", json={"requests": [body]}).status_code == 401
        assert gateway.get("/v1/calibrations").status_code == 401
        assert gateway.get("/v1/calibrations", headers=internal_headers(TOKEN)).status_code == 200
        # the token is enough to get past the guard: the unknown route is the next refusal
        known = gateway.post("/v1/generate", json=body, headers=internal_headers(TOKEN))
        assert known.status_code == 404, known.text
        # the OpenAI-compatible surfaces are not the services' own (API keys: #28 item 1)
        assert gateway.get("/v1/models").status_code == 200


@pytest.mark.parametrize(
    ("host", "require_keys", "token", "refused_for"),
    [
        ("127.0.0.1", False, "", None),
        ("localhost", False, "", None),
        ("0.0.0.0", False, "", ["--require-keys", "STEADFAST_INTERNAL_TOKEN"]),
        ("0.0.0.0", True, "", ["STEADFAST_INTERNAL_TOKEN"]),
        ("10.0.0.5", False, TOKEN, ["--require-keys"]),
        ("0.0.0.0", True, TOKEN, None),
    ],
)
def test_steadfast_up_refuses_a_bind_beyond_this_machine_without_keys_and_token(
    host: str, require_keys: bool, token: str, refused_for: list[str] | None
) -> None:
    from steadfast.supervisor import unsafe_bind

    environment = {"STEADFAST_INTERNAL_TOKEN": token} if token else {}
    refusal = unsafe_bind(host, require_keys, environment)
    if refused_for is None:
        assert refusal is None
    else:
        assert refusal is not None and host in refusal
        for missing in refused_for:
            assert missing in refusal


def test_the_command_says_why_and_starts_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from steadfast.cli import main

    monkeypatch.delenv("STEADFAST_INTERNAL_TOKEN", raising=False)
    started: list[object] = []
    monkeypatch.setattr("steadfast.cli.Supervisor.start", lambda self: started.append(self))
    assert main(["up", "--host", "0.0.0.0"]) == 2
    assert "opens the services to other machines" in capsys.readouterr().err
    assert started == []


def test_a_gateway_asking_for_keys_needs_the_token_its_callers_use(tmp_path: Any) -> None:
    from steadfast.shared.settings import SettingsError

    settings = GatewaySettings(auth="keys", data_dir=str(tmp_path))
    with pytest.raises(BaseException) as refused, TestClient(create_gateway(settings)):
        pass
    errors = [refused.value]
    while isinstance(errors[-1], BaseExceptionGroup):  # the lifespan's task group wraps it
        errors.append(errors[-1].exceptions[0])
    assert isinstance(errors[-1], SettingsError)
    assert "needs STEADFAST_INTERNAL_TOKEN" in str(errors[-1])
