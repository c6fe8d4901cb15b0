"""Monitors over HTTP in process (stand-in upstream), on SQLite and PostgreSQL: a model that
changes between two runs shows in the series and the gauge, with no answer of the second run
taken from a store or cache; the schedule runs each due time once across evaluators."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient
from prometheus_client import REGISTRY

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.adapters.monitors import Latest, MonitorStore
from steadfast.services.evaluator.adapters.position_jobs import PositionJobStore
from steadfast.services.evaluator.app import create_app
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.services.evaluator.domain.job_starter import JobStarter
from steadfast.services.evaluator.domain.monitors import Monitors
from steadfast.services.evaluator.metrics import MONITOR_VALUE
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.contracts.monitors import (
    MAX_MONITORS,
    MonitorCreate,
    MonitorUpdate,
    MonitorValue,
)
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionItem,
)
from steadfast.shared.contracts.scoring import MetricValue, Report, ReportFormat
from steadfast.shared.db import create_engine, migrate
from steadfast.shared.errors import TooLarge
from tests.integration.evaluator.stand_ins import StandInUpstream


class ChangingModel:
    """Answers right until ``changed``, then wrong: a provider's model swapped behind its name."""

    def __init__(self) -> None:
        self.changed = False

    def __call__(self, model: str, question: str) -> str | None:
        right = question.split()[2].rstrip("?")
        return "wrong" if self.changed else right


async def render(report: Report, fmt: ReportFormat) -> bytes:
    return b""


@pytest.fixture
async def world(
    database_url: str, tmp_path: Path
) -> AsyncIterator[tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel]]:
    model = ChangingModel()
    upstream = StandInUpstream(model)
    settings = EvaluatorSettings(
        database_url=database_url,
        data_dir=str(tmp_path),
        poll_s=0.05,
        monitor_poll_s=0.05,
        retry_base_s=0.01,
        log_json=False,
        log_level="WARNING",
        auth="open",
    )
    async with AsyncTestClient(create_app(settings, upstream, render)) as client:
        yield client, upstream, model


def monitor_body(name: str = "nightly", **extra: Any) -> dict[str, Any]:
    items = [{"id": f"q{i}", "question": f"What is {i}?", "answer": str(i)} for i in range(3)]
    evaluation = {"models": ["m1"], "k": 2, "items": items, "metrics": {"bootstrap": 20}}
    return {"name": name, "interval_s": 3600, "evaluation": evaluation, **extra}


async def wait_runs(client: AsyncTestClient[Any], monitor_id: str, count: int) -> dict[str, Any]:
    """The monitor once it has ``count`` runs and the last one has ended."""
    deadline = time.monotonic() + 30
    monitor: dict[str, Any] = {}
    while time.monotonic() < deadline:
        monitor = (await client.get(f"/v1/monitors/{monitor_id}")).json()
        last = monitor["last_run"]
        if monitor["runs"] >= count and last and last["status"] != "running":
            return monitor
        await asyncio.sleep(0.05)
    raise AssertionError(f"monitor {monitor_id} did not reach {count} runs: {monitor}")


def gauge(monitor: str, model: str, metric: str) -> float | None:
    labels = {"monitor": monitor, "model": model, "metric": metric}
    return REGISTRY.get_sample_value("steadfast_monitor_value", labels)


async def settled_gauge(
    monitor: str, model: str, metric: str, expected: float | None
) -> float | None:
    """The gauge once the scheduler's tick that finished the run has exported it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if gauge(monitor, model, metric) == expected:
            break
        await asyncio.sleep(0.02)
    return gauge(monitor, model, metric)


async def test_a_changed_model_shows_in_the_series_and_the_gauge_with_fresh_answers(
    world: tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel], database_url: str
) -> None:
    client, upstream, model = world
    name = f"nightly-{database_url.split(':')[0].split('+')[0]}"
    created = await client.post("/v1/monitors", json=monitor_body(name))
    assert created.status_code == 201, created.text
    monitor_id = created.json()["id"]
    first = await wait_runs(client, monitor_id, 1)
    assert first["last_run"]["status"] == "succeeded", first
    assert first["last_values"]["m1"]["a_orig"]["value"] == 1.0, first
    assert await settled_gauge(name, "m1", "a_orig", 1.0) == 1.0
    deadline = time.monotonic() + 10  # recorded just after the run's outcome
    while first["frozen_sets_from"] is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        first = (await client.get(f"/v1/monitors/{monitor_id}")).json()
    assert first["frozen_sets_from"] == first["last_run"]["job_id"]
    paraphrased = sum(upstream.paraphrased.values())

    model.changed = True
    answered_before = sum(upstream.answered.values())
    assert (await client.post(f"/v1/monitors/{monitor_id}/runs")).status_code == 202
    second = await wait_runs(client, monitor_id, 2)
    assert second["last_run"]["status"] == "succeeded", second
    assert second["last_values"]["m1"]["a_orig"]["value"] == 0.0
    assert await settled_gauge(name, "m1", "a_orig", 0.0) == 0.0
    # the same paraphrases asked again: no set generated, every variant answered anew
    assert sum(upstream.paraphrased.values()) == paraphrased
    assert sum(upstream.answered.values()) - answered_before == 3 * (1 + 2)
    assert upstream.cache_flags[True] == 0  # every answer bypassed the gateway's cache
    job = second["last_run"]["job_id"]
    page = (await client.get(f"/v1/evaluations/{job}/items")).json()
    wordings = [v for item in page["items"] for v in item["variants"]]
    assert len(wordings) == 9 and all(v["answers"][0]["text"] == "wrong" for v in wordings)

    series = await client.get(
        f"/v1/monitors/{monitor_id}/series", params={"model": "m1", "metric": "a_orig"}
    )
    assert series.status_code == 200, series.text
    points = series.json()["points"]
    assert [p["value"] for p in points] == [1.0, 0.0]
    assert all(p["n"] == 3 for p in points)
    assert points[0]["run_id"] != points[1]["run_id"]
    assert (
        REGISTRY.get_sample_value(
            "steadfast_monitor_runs_total", {"monitor": name, "status": "succeeded"}
        )
        == 2.0
    )


async def test_pause_resume_interval_and_delete(
    world: tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel], database_url: str
) -> None:
    client, _, _ = world
    name = f"paused-{database_url.split(':')[0].split('+')[0]}"
    created = await client.post("/v1/monitors", json=monitor_body(name, paused=True))
    assert created.status_code == 201, created.text
    monitor = created.json()
    assert monitor["paused"] and monitor["next_run_at"] is None and monitor["runs"] == 0
    path = f"/v1/monitors/{monitor['id']}"
    refused = await client.post(f"{path}/runs")
    assert refused.status_code == 409 and refused.json()["errors"][0]["field"] == "monitor_id"

    resumed = (await client.patch(path, json={"paused": False})).json()
    assert not resumed["paused"] and resumed["next_run_at"] is not None
    await wait_runs(client, monitor["id"], 1)
    before = (await client.get(path)).json()["next_run_at"]
    longer = (await client.patch(path, json={"interval_s": 7200})).json()
    assert longer["interval_s"] == 7200 and longer["next_run_at"] > before

    assert [m["name"] for m in (await client.get("/v1/monitors")).json()["monitors"]] == [name]
    assert await settled_gauge(name, "m1", "a_orig", 1.0) == 1.0
    assert (await client.delete(path)).status_code == 204
    assert (await client.get(path)).status_code == 404
    # gone from the metrics (a scheduler tick under way may set it once more, the next removes it)
    assert await settled_gauge(name, "m1", "a_orig", None) is None


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"interval_s": 59}, 400, "interval_s"),
        ({"name": "has space"}, 400, "name"),
        ({"kind": "position-bias"}, 400, "position_bias"),
        ({"evaluation": None}, 400, "evaluation"),
        ({"evaluation": {"models": ["m1"], "items": []}}, 400, "evaluation.items"),
        ({"evaluation": {"items": [{"question": "Q?", "answer": "1"}]}}, 400, "evaluation.model"),
        ({"evaluation": {"models": ["m1"], "dataset_id": "nope"}}, 404, "evaluation.dataset_id"),
        (
            {
                "evaluation": {
                    "models": ["m1"],
                    "items": [{"question": f"{i}?"} for i in range(1001)],
                }
            },
            400,
            "evaluation.limit",
        ),
    ],
)
async def test_a_monitor_that_could_not_run_is_refused_naming_the_field(
    world: tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel],
    change: dict[str, Any],
    status: int,
    field: str,
) -> None:
    client, _, _ = world
    response = await client.post("/v1/monitors", json=monitor_body() | change)
    assert response.status_code == status, response.text
    assert field in [error["field"] for error in response.json()["errors"]]


async def test_names_are_unique_and_monitors_are_capped(
    world: tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel],
) -> None:
    client, _, _ = world
    for n in range(MAX_MONITORS):
        body = monitor_body(f"m{n}", paused=True)
        assert (await client.post("/v1/monitors", json=body)).status_code == 201
    taken = await client.post("/v1/monitors", json=monitor_body("m0", paused=True))
    assert taken.status_code == 409 and taken.json()["errors"][0]["field"] == "name"
    over = await client.post("/v1/monitors", json=monitor_body("one-more", paused=True))
    assert over.status_code == 409 and "at most 50 monitors" in over.json()["detail"]
    unknown = await client.get(
        "/v1/monitors/nope/series", params={"model": "m1", "metric": "a_orig"}
    )
    assert unknown.status_code == 404
    first = (await client.get("/v1/monitors")).json()["monitors"][0]["id"]
    other = await client.get(
        f"/v1/monitors/{first}/series", params={"model": "m9", "metric": "a_orig"}
    )
    assert other.status_code == 404 and other.json()["errors"][0]["field"] == "model"
    bad_metric = await client.get(
        f"/v1/monitors/{first}/series", params={"model": "m1", "metric": "speed"}
    )
    assert bad_metric.status_code == 400


def _monitors(url: str, clock: list[float]) -> Monitors:
    engine = create_engine(url)
    store = EvaluationStore(engine)
    datasets = DatasetStore(engine)
    upstream = StandInUpstream(lambda _model, _question: "1")
    evaluations = Evaluations(store, datasets, upstream)
    jobs = JobStarter(evaluations, datasets, PositionJobStore(engine), upstream)
    return Monitors(MonitorStore(engine), jobs, clock=lambda: clock[0])


async def test_two_evaluators_start_one_run_per_due_time_and_a_missed_run_once(
    migrated: str,
) -> None:
    clock = [time.time()]
    replicas = [_monitors(migrated, clock), _monitors(migrated, clock)]
    store = replicas[0].store
    spec = msgspec.convert(monitor_body("shared", paused=True), MonitorCreate)
    monitor_id = (await replicas[0].create(spec)).id
    # due ten intervals ago (every evaluator was down): one run, not ten
    await store.update(monitor_id, paused=False, next_run_at=clock[0] - 10 * 3600)
    for _ in range(5):
        started = await asyncio.gather(*(r.start_due_runs() for r in replicas))
        assert sum(started) <= 1
    runs = await store.runs(monitor_id)
    assert len(runs) == 1 and runs[0].job_id is not None
    monitor = await store.get(monitor_id)
    assert monitor is not None and monitor.next_run_at == pytest.approx(clock[0] + 3600)
    # the next due time, an interval later: again exactly one run between the two
    clock[0] += 3600
    started = await asyncio.gather(*(r.start_due_runs() for r in replicas * 3))
    assert sum(started) == 1 and len(await store.runs(monitor_id)) == 2
    for replica in replicas:
        await replica.store.engine.dispose()


async def test_a_restarted_evaluator_exports_the_last_values_again(
    world: tuple[AsyncTestClient[Any], StandInUpstream, ChangingModel], database_url: str
) -> None:
    client, _, _ = world
    name = f"restored-{database_url.split(':')[0].split('+')[0]}"
    monitor_id = (await client.post("/v1/monitors", json=monitor_body(name))).json()["id"]
    await wait_runs(client, monitor_id, 1)
    assert await settled_gauge(name, "m1", "a_orig", 1.0) == 1.0
    MONITOR_VALUE.remove(name, "m1", "a_orig")  # as in a new process
    assert gauge(name, "m1", "a_orig") is None
    replica = _monitors(database_url, [time.time()])
    await replica.export_gauges()
    assert gauge(name, "m1", "a_orig") == 1.0
    await replica.store.engine.dispose()


@pytest.fixture
async def migrated(database_url: str) -> str:
    """The database, migrated, with no evaluator running: the tests drive the schedule."""
    engine = create_engine(database_url)
    await migrate(engine, "evaluator")
    await engine.dispose()
    return database_url


async def test_a_position_bias_monitor_runs_a_fresh_job_and_follows_pf_and_pc(
    migrated: str,
) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    item = PositionItem(id="q", question="Which?", answer="yes", distractor="no")
    spec = MonitorCreate(
        name="primacy",
        kind="position-bias",
        interval_s=600,
        position_bias=PositionBiasEvaluate(model="m1", items=[item], conditions=["medium"]),
    )
    monitor = await replica.create(spec)
    assert monitor.next_run_at is not None  # the first run is due at once
    assert await replica.start_due_runs() == 1
    [run] = await replica.store.runs(monitor.id)
    assert run.job_id is not None and run.job_id.startswith("pb-")
    job = await replica.jobs.position_jobs.get(run.job_id)
    assert job is not None and job.request is not None and job.request.fresh_answers
    assert await replica.finish_ended_runs() == 0  # the job is still queued

    claimed = await replica.jobs.position_jobs.claim("worker")
    assert claimed is not None and claimed.id == run.job_id
    metrics = {
        "PF": MetricValue(value=0.5, n=2, ci_low=0.0, ci_high=1.0),
        "PC": MetricValue(value=0.25, n=2),
    }
    result = PositionBiasEvaluation(trials=[], skipped=[], models={"m1": metrics})
    assert await replica.jobs.position_jobs.finish(run.job_id, "worker", result=result)
    assert await replica.finish_ended_runs() == 1
    assert await replica.finish_ended_runs() == 0  # recorded once
    [point] = (await replica.series(monitor.id, "m1", "pf")).points
    assert (point.value, point.n, point.ci_low, point.ci_high) == (0.5, 2, 0.0, 1.0)
    shown = await replica.view(monitor.id)
    assert shown.last_values["m1"]["pc"].value == 0.25
    await replica.store.engine.dispose()


async def test_a_run_whose_job_failed_is_recorded_with_its_reason(migrated: str) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    spec = msgspec.convert(monitor_body("failing"), MonitorCreate)
    monitor = await replica.create(spec)
    assert await replica.start_due_runs() == 1
    [run] = await replica.store.runs(monitor.id)
    assert run.job_id is not None
    assert await replica.jobs.evaluations.store.cancel(run.job_id)
    assert await replica.finish_ended_runs() == 1
    shown = await replica.view(monitor.id)
    assert shown.last_run is not None and shown.last_run.status == "failed"
    assert shown.last_run.error == "evaluation cancelled"
    assert shown.last_success_at is None and shown.frozen_sets_from is None
    # tried again at the next interval
    assert shown.next_run_at is not None
    clock[0] += 3600
    assert await replica.start_due_runs() == 1
    await replica.store.engine.dispose()


async def test_a_schedule_change_racing_a_worker_never_writes_back_a_due_time_already_run(
    migrated: str,
) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    monitor = await replica.create(msgspec.convert(monitor_body("raced"), MonitorCreate))
    store = replica.store
    read = await store.get(monitor.id)  # a PATCH reads the row ...
    assert read is not None and read.next_run_at is not None
    assert await replica.start_due_runs() == 1  # ... a worker takes its due time ...
    # ... and the PATCH's write, made from what it read, is refused: it would name a due time
    # already run (before: the monitor then stayed due, and never ran again)
    assert not await store.update_unless_taken(monitor.id, read.next_run_at, interval_s=7200)
    changed = await replica.update(monitor.id, MonitorUpdate(interval_s=7200))
    assert changed.interval_s == 7200
    assert changed.next_run_at is not None and changed.next_run_at > iso_of(read.next_run_at)

    # a due time written back anyway (an older version, a hand edit) is moved on, not stuck
    await store.update(monitor.id, next_run_at=read.next_run_at)
    assert await replica.start_due_runs() == 0
    moved = await store.get(monitor.id)
    assert moved is not None and moved.next_run_at == pytest.approx(clock[0] + 7200)
    await store.engine.dispose()


def iso_of(epoch: float) -> str:
    from steadfast.services.evaluator.timestamps import iso

    return iso(epoch) or ""


async def test_sets_built_anew_when_the_retention_sweep_deleted_the_frozen_evaluation(
    migrated: str,
) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    monitor = await replica.create(msgspec.convert(monitor_body("swept"), MonitorCreate))
    await replica.store.update(monitor.id, frozen_sets_from="ev-deleted-by-the-sweep")
    assert await replica.start_due_runs() == 1
    [run] = await replica.store.runs(monitor.id)
    assert run.job_id is not None  # submitted: not "not started: no evaluation (404)"
    evaluation = await replica.jobs.evaluations.store.get(run.job_id)
    assert evaluation is not None and evaluation.settings.fresh_answers
    row = await replica.store.get(monitor.id)
    assert row is not None and row.frozen_sets_from is None
    await replica.store.engine.dispose()


async def test_counters_start_at_zero_and_values_a_run_lacks_leave_the_metrics(
    migrated: str,
) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    monitor = await replica.create(msgspec.convert(monitor_body("gauged"), MonitorCreate))
    await replica.export_gauges()
    failed = {"monitor": "gauged", "status": "failed"}
    # present from 0, so that a first failed run is an increase an alert can see
    assert REGISTRY.get_sample_value("steadfast_monitor_runs_total", failed) == 0.0
    interval = REGISTRY.get_sample_value(
        "steadfast_monitor_interval_seconds", {"monitor": "gauged"}
    )
    assert interval == 3600

    store = replica.store
    for values in (
        {"m1": {"a_orig": MonitorValue(value=0.5, n=3), "flip_rate": MonitorValue(value=0.2, n=3)}},
        {"m1": {"a_orig": MonitorValue(value=1.0, n=3)}},  # no flip rate this time
    ):
        monitor_row = await store.get(monitor.id)
        assert monitor_row is not None
        clock[0] += 3600
        run = await store.take_due_time(monitor_row, clock[0])
        assert run is not None
        await store.finish_run(run.id, "succeeded", clock[0], values=values)  # type: ignore[arg-type]
        await replica.export_gauges()
    assert gauge("gauged", "m1", "a_orig") == 1.0
    assert gauge("gauged", "m1", "flip_rate") is None  # not the first run's 0.2
    await store.engine.dispose()


async def test_an_earlier_run_finishing_last_does_not_become_the_last_success(
    migrated: str,
) -> None:
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    monitor = await replica.create(msgspec.convert(monitor_body("overlap"), MonitorCreate))
    store = replica.store
    row = await store.get(monitor.id)
    assert row is not None
    older = await store.take_due_time(row, clock[0])
    clock[0] += 10
    await store.update(monitor.id, next_run_at=clock[0])  # run by hand while it runs
    row = await store.get(monitor.id)
    assert row is not None and older is not None
    newer = await store.take_due_time(row, clock[0] + 1)
    assert newer is not None
    await store.finish_run(newer.id, "succeeded", clock[0] + 2)
    await store.finish_run(older.id, "succeeded", clock[0] + 3)
    after = await store.get(monitor.id)
    assert after is not None and after.last_success_id == newer.id
    await store.engine.dispose()


async def test_a_run_taken_after_the_monitor_was_read_is_both_counted_and_the_last_run(
    migrated: str,
) -> None:
    """The view of a monitor read just before a run started: its count and its last run come
    from the same read, so a client waiting for "two runs, the last one ended" never gets the
    first run's values for the second's (the race a CI run hit on PostgreSQL)."""
    clock = [time.time()]
    replica = _monitors(migrated, clock)
    monitor = await replica.create(msgspec.convert(monitor_body("torn"), MonitorCreate))
    store = replica.store
    row = await store.get(monitor.id)
    assert row is not None
    first = await store.take_due_time(row, clock[0])
    assert first is not None
    await store.finish_run(first.id, "succeeded", clock[0] + 1)
    await store.update(monitor.id, next_run_at=clock[0] + 2)
    read_before = await store.get(monitor.id)
    assert read_before is not None and read_before.last_success_id == first.id
    second = await store.take_due_time(read_before, clock[0] + 2)
    assert second is not None

    latest = (await store.latest_runs([read_before]))[monitor.id]
    assert latest.runs == 2
    assert latest.last_run is not None and latest.last_run.id == second.id
    assert latest.last_run.status == "running"
    assert latest.last_success is not None and latest.last_success.id == first.id
    await store.engine.dispose()


async def test_a_monitor_without_runs_has_no_last_run(migrated: str) -> None:
    replica = _monitors(migrated, [time.time()])
    monitor = await replica.create(msgspec.convert(monitor_body("fresh"), MonitorCreate))
    row = await replica.store.get(monitor.id)
    assert row is not None
    assert await replica.store.latest_runs([row]) == {
        monitor.id: Latest(last_run=None, last_success=None, runs=0)
    }
    assert await replica.store.latest_runs([]) == {}
    await replica.store.engine.dispose()


async def test_a_position_bias_monitor_whose_runs_would_be_too_large_is_refused(
    migrated: str,
) -> None:
    replica = _monitors(migrated, [time.time()])
    replica.jobs.max_job_answers = 3
    items = [
        PositionItem(id=f"q{i}", question="Which?", answer="yes", distractor="no") for i in range(2)
    ]
    spec = MonitorCreate(
        name="huge",
        kind="position-bias",
        interval_s=600,
        position_bias=PositionBiasEvaluate(model="m1", items=items, conditions=["medium"]),
    )
    with pytest.raises(TooLarge) as refused:
        await replica.create(spec)
    assert refused.value.field == "position_bias.items"
    await replica.store.engine.dispose()
