"""End to end through the five real services (stand-in upstream model), SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from steadfast.supervisor import Supervisor
from tests.conftest import free_port
from tests.e2e.stack import answers_stored, job, running_stack, wait_finished, wait_progress

N, K = 20, 5
ANSWER_CALLS = 2 * N * (1 + K)

#: docs/method.md §1.4 by hand for the answer pattern of tests.e2e.stack.answer (20 questions)
EXPECTED = {
    "steady": {
        "A_orig": 1.0,
        "A_expected": 1.0,
        "A_majority": 1.0,
        "A_any": 1.0,
        "A_strict": 1.0,
        "A_any_incl_orig": 1.0,
        "mismatch_rate": 0.0,
        "flip_rate": 0.0,
        "recovery_rate": None,
        "conflict_rate": 0.0,
        "iid_mismatch": 0.0,
        "mode_share": 1.0,
    },
    "shaky": {
        # items 0-9 and 15-19 never mix labels within the paraphrase set
        "A_orig": 0.5,  # 0-4 and 10-14
        "A_expected": 0.5,  # p_correct = 1 for 5-14, else 0
        "A_majority": 0.5,
        "A_any": 0.5,
        "A_strict": 0.5,
        "A_any_incl_orig": 0.75,  # 0-14
        "mismatch_rate": 0.5,  # 0-9
        "flip_rate": 0.5,  # 0-4 of the 10 right originals
        "recovery_rate": 0.5,  # 5-9 of the 10 wrong originals
        "conflict_rate": 0.0,
        "iid_mismatch": 0.0,
        "mode_share": 1.0,
    },
}


def submit(url: str, body: dict[str, Any], key: str | None = None) -> str:
    headers = {"Idempotency-Key": key} if key else {}
    response = httpx.post(f"{url}/v1/evaluations", json=body, headers=headers, timeout=30)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def metrics_of(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    return {
        summary["model"]: {name: value["value"] for name, value in summary["metrics"].items()}
        for summary in report["models"]
    }


def check_metrics(report: dict[str, Any]) -> None:
    metrics = metrics_of(report)
    for model, expected in EXPECTED.items():
        for name, value in expected.items():
            got = metrics[model][name]
            assert got == (pytest.approx(value) if value is not None else None), (model, name, got)


def report_of(url: str, job_id: str) -> dict[str, Any]:
    response = httpx.get(f"{url}/v1/evaluations/{job_id}/report", timeout=60)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_two_models_twenty_items_metrics_reports_and_cancel(
    tmp_path: Path, port_block: int, database_url: str
) -> None:
    with running_stack(tmp_path, port_block, database_url) as stack:
        url = stack.evaluator
        job_id = submit(url, job(N, K), key="e2e-1")
        assert submit(url, job(N, K), key="e2e-1") == job_id
        status = wait_finished(url, job_id)
        assert status["status"] == "succeeded", status
        assert status["progress"]["answer"] == {"done": ANSWER_CALLS, "failed": 0, "total": 240}
        assert status["error_count"] == 0

        answer_calls = stack.answer_calls()
        assert len(answer_calls) == ANSWER_CALLS
        report = report_of(url, job_id)
        check_metrics(report)
        shaky_item = report["items"][0]["models"][1]
        assert shaky_item["model"] == "shaky"
        assert shaky_item["majority_answer"] == "omega" and shaky_item[
            "agreement"
        ] == pytest.approx(5 / 6)
        assert report["items"][0]["paraphrases"]["generator"] == "writer"
        assert len(report["items"][0]["variants"]) == 1 + K

        html = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=html", timeout=60)
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assert "A_strict" in html.text and "item-0" in html.text
        csv = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=csv", timeout=60)
        assert csv.status_code == 200 and "item-19" in csv.text

        # a second run reuses the stored paraphrase sets; the gateway cache answers everything
        calls_before = stack.upstream.call_count
        again = submit(url, job(N, K, reuse_paraphrases_from=job_id))
        assert wait_finished(url, again)["status"] == "succeeded"
        assert stack.upstream.call_count == calls_before
        check_metrics(report_of(url, again))

        # cancel a job while it runs
        slow = submit(url, job(N, K, models=["steady"], seed=7))
        cancelled = httpx.delete(f"{url}/v1/evaluations/{slow}", timeout=10)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        time.sleep(1.0)
        assert httpx.get(f"{url}/v1/evaluations/{slow}", timeout=10).json()["status"] == "cancelled"

        bad = httpx.post(
            f"{url}/v1/datasets?name=bad.jsonl", content=b'{"question": "ok"}\n{"answer": 1}\n'
        )
        assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "line 2: question"


def test_kill_9_mid_run_resumes_with_same_report_and_no_repeated_calls(
    tmp_path: Path, port_block: int, database_url: str
) -> None:
    with running_stack(tmp_path, port_block, database_url, latency_s=0.05, concurrency=4) as stack:
        url = stack.evaluator
        job_id = submit(url, job(N, K))
        wait_progress(url, job_id, answered=60)
        evaluator = stack.supervisor.processes[0]
        assert evaluator.name == "evaluator"
        os.kill(evaluator.process.pid, signal.SIGKILL)
        evaluator.process.wait(10)
        done_at_kill = len(stack.answer_calls())
        assert done_at_kill < ANSWER_CALLS

        restarted = Supervisor(
            ports=stack.ports, env=stack.env, services=("evaluator",), log_dir=tmp_path / "logs2"
        )
        with restarted:
            assert all(restarted.wait_ready(60).values())
            status = wait_finished(url, job_id)
            report = report_of(url, job_id)
        assert status["status"] == "succeeded", status
        calls = Counter(
            (body["model"], body["messages"][0]["content"]) for body in stack.answer_calls()
        )
        assert len(calls) == ANSWER_CALLS
        assert max(calls.values()) == 1, "a variant was asked for again after the restart"
        check_metrics(report)


def test_two_evaluators_split_one_job_without_duplicates(
    tmp_path: Path, port_block: int, database_url: str
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("several evaluator processes share work on PostgreSQL only")
    with running_stack(tmp_path, port_block, database_url, latency_s=0.02, concurrency=8) as stack:
        second_ports = {**stack.ports, "evaluator": free_port()}
        second = Supervisor(
            ports=second_ports, env=stack.env, services=("evaluator",), log_dir=tmp_path / "logs2"
        )
        with second:
            assert all(second.wait_ready(60).values())
            job_id = submit(stack.evaluator, job(N, K))
            status = wait_finished(stack.evaluator, job_id)
            assert status["status"] == "succeeded", status
            stored = [
                answers_stored(f"http://127.0.0.1:{ports['evaluator']}")
                for ports in (stack.ports, second_ports)
            ]
            report = report_of(stack.evaluator, job_id)
        calls = Counter(
            (body["model"], body["messages"][0]["content"]) for body in stack.answer_calls()
        )
        assert len(calls) == ANSWER_CALLS and max(calls.values()) == 1
        assert sum(stored) == ANSWER_CALLS
        assert all(count > 0 for count in stored), f"one process did all the work: {stored}"
        check_metrics(report)


def test_a_failing_model_is_recorded_per_item_and_the_job_finishes(
    tmp_path: Path, port_block: int
) -> None:
    # "broken" points where nothing listens: a server down for now, as far as anyone can tell,
    # so its answers are waited for with the patience of an unreachable service (2 s here,
    # 300 s by default) before they are recorded as failed
    patience = {"STEADFAST_EVALUATOR_UNREACHABLE_WAIT_S": "2"}
    with running_stack(tmp_path, port_block, extra_env=patience) as stack:
        body = job(3, 2, models=["steady", "broken"])
        job_id = submit(stack.evaluator, body)
        status = wait_finished(stack.evaluator, job_id)
        assert status["status"] == "succeeded"
        assert status["error_count"] == 3 * 3
        assert status["message"] == "finished with 9 recorded failures"
        assert status["progress"]["answer"]["failed"] == 9
        report = report_of(stack.evaluator, job_id)
        errors = report["errors"]
        assert {(e["model"], e["stage"]) for e in errors} == {("broken", "answer")}
        assert all("gateway: unavailable" in e["reason"] for e in errors)
        assert all("attempts" in e["reason"] for e in errors)
        assert metrics_of(report)["steady"]["A_orig"] == 1.0
        assert report["items"][0]["status"] == "partial"

        # the synchronous endpoint through the same services: a consistency-scored answer
        sync = job(2, 3, models=["shaky"])
        sync["items"] = [{"question": q["question"]} for q in sync.pop("items")]
        answered = httpx.post(f"{stack.evaluator}/v1/evaluate", json=sync, timeout=60)
        assert answered.status_code == 200, answered.text
        first = answered.json()["items"][0]["models"][0]
        # item 0: right on the original, wrong on the 3 paraphrases, no gold given
        assert first["majority_answer"] == "omega" and first["agreement"] == 0.75
        assert first["original_answer"] == "alpha-0" and first["original_label"] is None
