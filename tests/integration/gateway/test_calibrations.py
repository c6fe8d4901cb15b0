"""Judge calibrations kept by the gateway (SQLite and PostgreSQL): stored, read back with their
source, precedence of configuration, bundled calibrations of local models, bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from steadfast.services.gateway.app import create_app
from steadfast.services.gateway.domain.calibration import JudgeCalibrations, load_bundled
from steadfast.services.gateway.domain.routes import BUILTIN_ROUTES, parse_routes
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.contracts.calibration import JudgeCalibration, ThresholdRates

ROUTES = """
[models.judge]
backend = "openai"
model = "judge-model"
base_url = "http://127.0.0.1:9/v1"

[models.pinned]
backend = "openai"
model = "judge-model"
base_url = "http://127.0.0.1:9/v1"
judge_threshold = 0.35
"""


def calibration(route: str = "judge", threshold: float = 0.4, **changes: Any) -> JudgeCalibration:
    fields: dict[str, Any] = {
        "route": route,
        "prompt_version": "judge-v3",
        "threshold": threshold,
        "rule": "lowest threshold rejecting 95% of the others",
        "pairs": "bundled (240 factual + 120 maths)",
        "equivalent": 180,
        "other": 180,
        "rates": [
            ThresholdRates(threshold=0.3, accepted_equivalent=175, rejected_other=160),
            ThresholdRates(threshold=threshold, accepted_equivalent=170, rejected_other=171),
        ],
        "calibrated_at": "2026-12-04T12:00:00+00:00",
    }
    return JudgeCalibration(**(fields | changes))


@pytest.fixture
async def client(database_url: str, tmp_path: Path) -> AsyncIterator[AsyncTestClient[Any]]:
    routes = tmp_path / "models.toml"
    routes.write_text(ROUTES)
    settings = GatewaySettings(
        database_url=database_url, data_dir=str(tmp_path), models_file=str(routes)
    )
    async with AsyncTestClient(create_app(settings)) as test_client:
        yield test_client


async def test_a_stored_calibration_is_the_routes_threshold_until_it_is_forgotten(
    client: AsyncTestClient[Any],
) -> None:
    before = await client.get("/v1/calibrations/judge/judge-v3")
    assert before.status_code == 200
    assert before.json()["source"] == "method_default" and before.json()["value"] == 0.5

    body = msgspec.to_builtins(calibration())
    stored = await client.put("/v1/calibrations/judge/judge-v3", json=body)
    assert stored.status_code == 200, stored.text
    threshold = (await client.get("/v1/calibrations/judge/judge-v3")).json()
    assert (threshold["value"], threshold["source"]) == (0.4, "calibrated")
    assert "stored by steadfast calibrate on 2026-12-04" in threshold["origin"]
    assert threshold["calibration"]["rates"][1]["rejected_other"] == 171
    assert threshold["calibration"]["model"] == "judge-model"  # the route's, recorded
    # another prompt version of the same route is not calibrated by it
    other = (await client.get("/v1/calibrations/judge/judge-v4")).json()
    assert other["source"] == "method_default"
    listed = (await client.get("/v1/calibrations")).json()["calibrations"]
    assert [(c["calibration"]["route"], c["value"]) for c in listed] == [("judge", 0.4)]

    # a new calibration replaces the old
    await client.put("/v1/calibrations/judge/judge-v3", json=body | {"threshold": 0.3})
    again = (await client.get("/v1/calibrations/judge/judge-v3")).json()
    assert again["value"] == 0.3

    assert (await client.delete("/v1/calibrations/judge/judge-v3")).status_code == 204
    after = (await client.get("/v1/calibrations/judge/judge-v3")).json()
    assert after["source"] == "method_default"
    gone = await client.delete("/v1/calibrations/judge/judge-v3")
    assert gone.status_code == 404


async def test_a_threshold_in_the_routes_configuration_wins(client: AsyncTestClient[Any]) -> None:
    body = msgspec.to_builtins(calibration("pinned"))
    await client.put("/v1/calibrations/pinned/judge-v3", json=body)
    threshold = (await client.get("/v1/calibrations/pinned/judge-v3")).json()
    assert (threshold["value"], threshold["source"]) == (0.35, "configured")
    assert threshold["origin"] == "the route's configuration (judge_threshold)"
    # the audit's prompt is configured by audit_threshold, which is unset
    audit = (await client.get("/v1/calibrations/pinned/audit-v1")).json()
    assert audit["source"] == "method_default"


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("/v1/calibrations/nope/judge-v3", calibration("nope"), 404, "route"),
        ("/v1/calibrations/judge/judge-v3", calibration("pinned"), 422, "route"),
        ("/v1/calibrations/judge/judge-v4", calibration(), 422, "prompt_version"),
        ("/v1/calibrations/judge/judge-v3", {"route": "judge"}, 400, "prompt_version"),
        (
            "/v1/calibrations/judge/judge-v3",
            msgspec.to_builtins(calibration()) | {"threshold": 1.5},
            400,
            "threshold",
        ),
        ("/v1/calibrations/judge/Judge%20V3", calibration(), 400, "prompt_version"),
    ],
)
async def test_bad_calibrations_are_refused_naming_the_field(
    client: AsyncTestClient[Any], path: str, body: Any, status: int, field: str
) -> None:
    payload = body if isinstance(body, dict) else msgspec.to_builtins(body)
    response = await client.put(path, json=payload)
    assert response.status_code == status, response.text
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert field in {error["field"] for error in problem.get("errors") or []} | {
        problem.get("field")
    }, problem


async def test_an_unknown_route_has_no_threshold(client: AsyncTestClient[Any]) -> None:
    response = await client.get("/v1/calibrations/nope/judge-v3")
    assert response.status_code == 404
    assert response.json()["errors"][0]["field"] == "route"


async def test_a_bundled_calibration_follows_the_local_model_whatever_the_route_is_called() -> None:
    routes = parse_routes(
        {
            "models": {
                "mine": {"backend": "local", "model": "qwen2.5-coder-1.5b-instruct"},
                "small": {"backend": "local", "model": "qwen2.5-coder-0.5b-instruct"},
                "remote": {"backend": "openai", "model": "qwen2.5-coder-1.5b-instruct"},
            }
        }
    )
    bundled = calibration("local", 0.42, model="qwen2.5-coder-1.5b-instruct")
    calibrations = JudgeCalibrations(routes, store=None, bundled=[bundled])
    mine = await calibrations.threshold("mine", "judge-v3")
    assert (mine.value, mine.source) == (0.42, "calibrated")
    assert mine.calibration is not None and mine.calibration.route == "mine"
    assert "bundled with the local model qwen2.5-coder-1.5b-instruct" in mine.origin
    # another model, or the same name served elsewhere, is not the calibrated judge
    assert (await calibrations.threshold("small", "judge-v3")).source == "method_default"
    assert (await calibrations.threshold("remote", "judge-v3")).source == "method_default"
    listed = await calibrations.all()
    assert [(t.calibration.route if t.calibration else None) for t in listed] == ["mine"]


async def test_every_shipped_calibration_is_found_for_the_builtin_local_route() -> None:
    """The file shipped beside the gateway: each entry names the local model it was made
    with, so the ``local`` route finds it (an entry without a model is never used, and its
    prompt would fall back to METHOD's 0.5)."""
    shipped = load_bundled()
    assert shipped
    calibrations = JudgeCalibrations(BUILTIN_ROUTES, store=None, bundled=shipped)
    for calibration in shipped:
        assert calibration.model == BUILTIN_ROUTES["local"].model, calibration
        found = await calibrations.threshold("local", calibration.prompt_version, calibration.task)
        assert (found.value, found.source) == (calibration.threshold, "calibrated"), calibration
    answers = await calibrations.threshold("local", "answers-v1")
    assert answers.value == 0.7


async def test_a_tasks_own_calibration_comes_before_the_general_one(
    client: AsyncTestClient[Any],
) -> None:
    general = msgspec.to_builtins(calibration(threshold=0.6))
    maths = msgspec.to_builtins(
        calibration(threshold=0.4, task="math", pairs="math pairs of pairs.jsonl")
    )
    for body in (general, maths):
        stored = await client.put("/v1/calibrations/judge/judge-v3", json=body)
        assert stored.status_code == 200, stored.text
    assert stored.json()["value"] == 0.4  # the stored calibration, read back for its task

    def threshold(task: str | None) -> Any:
        params = {"task": task} if task else None
        return client.get("/v1/calibrations/judge/judge-v3", params=params)

    on_maths = (await threshold("math")).json()
    assert (on_maths["value"], on_maths["calibration"]["task"]) == (0.4, "math")
    assert "(math pairs of pairs.jsonl)" in on_maths["origin"]
    # a task without its own calibration, or none named, gets the general one
    assert (await threshold("factual")).json()["value"] == 0.6
    assert (await threshold(None)).json()["value"] == 0.6
    listed = (await client.get("/v1/calibrations")).json()["calibrations"]
    assert sorted((c["calibration"].get("task") or "", c["value"]) for c in listed) == [
        ("", 0.6),
        ("math", 0.4),
    ]

    # forgetting the task's calibration leaves the general one, for every task
    assert (
        await client.delete("/v1/calibrations/judge/judge-v3", params={"task": "math"})
    ).status_code == 204
    assert (await threshold("math")).json()["value"] == 0.6
    missing = await client.delete("/v1/calibrations/judge/judge-v3", params={"task": "math"})
    assert missing.status_code == 404 and "task 'math'" in missing.json()["detail"]
    unknown = await threshold("poetry")
    assert unknown.status_code == 400, unknown.text


async def test_a_bundled_calibration_for_a_task_is_used_for_that_task_only() -> None:
    routes = parse_routes(
        {"models": {"mine": {"backend": "local", "model": "qwen2.5-coder-1.5b-instruct"}}}
    )
    model = "qwen2.5-coder-1.5b-instruct"
    bundled = [
        calibration("local", 0.6, model=model),
        calibration("local", 0.35, model=model, task="math"),
    ]
    calibrations = JudgeCalibrations(routes, store=None, bundled=bundled)
    assert (await calibrations.threshold("mine", "judge-v3", "math")).value == 0.35
    assert (await calibrations.threshold("mine", "judge-v3", "factual")).value == 0.6
    assert (await calibrations.threshold("mine", "judge-v3")).value == 0.6
    listed = await calibrations.all()
    assert sorted(t.value for t in listed) == [0.35, 0.6]


async def test_with_an_admin_key_only_it_changes_a_calibration(
    database_url: str, tmp_path: Path
) -> None:
    routes = tmp_path / "models.toml"
    routes.write_text(ROUTES)
    settings = GatewaySettings(
        database_url=database_url,
        data_dir=str(tmp_path),
        models_file=str(routes),
        admin_key="admin-secret",
    )
    body = msgspec.to_builtins(calibration())
    path = "/v1/calibrations/judge/judge-v3"
    admin = {"Authorization": "Bearer admin-secret"}
    async with AsyncTestClient(create_app(settings)) as client:
        for headers in ({}, {"Authorization": "Bearer guess"}):
            refused = await client.put(path, json=body, headers=headers)
            assert refused.status_code == 401, refused.text
            assert refused.json()["errors"][0]["field"] == "Authorization"
        assert (await client.get(path)).json()["source"] == "method_default"  # nothing stored
        stored = await client.put(path, json=body, headers=admin)
        assert stored.status_code == 200 and stored.json()["value"] == 0.4
        assert (await client.delete(path)).status_code == 401
        assert (await client.delete(path, headers=admin)).status_code == 204
        assert (await client.get(path)).json()["source"] == "method_default"  # reading is open
