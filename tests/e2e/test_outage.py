"""No silent loss: the model's server stops for a while in the middle of a persisted job, through
the five real services. Every paraphrase set and answer the outage caught is asked again once the
server is back (the patience of an unreachable service), none is stored as final: the job ends
with every answer, and the report of an undisturbed run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.stack import job, running_stack, wait_finished, wait_progress

ITEMS, K = 12, 2


def finished_report(url: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    created = httpx.post(f"{url}/v1/evaluations", json=body, timeout=30)
    assert created.status_code == 202, created.text
    job_id = created.json()["id"]
    return job_id, created.json()


def answers_of(report: dict[str, Any]) -> dict[tuple[str, int, str], str]:
    return {
        (item["id"], variant["index"], answer["model"]): answer["text"]
        for item in report["items"]
        for variant in item["variants"]
        for answer in variant["answers"]
    }


def test_a_model_server_down_for_a_while_loses_no_answer(tmp_path: Path, port_block: int) -> None:
    with running_stack(tmp_path, port_block, latency_s=0.05, concurrency=2) as stack:
        url = stack.evaluator
        body = job(ITEMS, K, models=["steady"], seed=7)
        created = httpx.post(f"{url}/v1/evaluations", json=body, timeout=30)
        assert created.status_code == 202, created.text
        job_id = created.json()["id"]
        wait_progress(url, job_id, answered=4)
        stack.upstream.stop()  # the model's server goes away mid-job ...
        time.sleep(6.0)
        stack.upstream.start()  # ... and comes back on the same port
        status = wait_finished(url, job_id, timeout_s=240)
        assert status["status"] == "succeeded", status
        assert status["error_count"] == 0 and status["message"] is None, (
            status["message"],
            status["errors"],
        )
        progress = status["progress"]
        assert progress["answer"]["done"] == progress["answer"]["total"] == ITEMS * (1 + K)
        report = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=json", timeout=60).json()
        assert all(item["paraphrases"]["complete"] for item in report["items"]), [
            item["paraphrases"] for item in report["items"]
        ]

        # the same job again, undisturbed: the same answers (from the stores, no new call)
        again = httpx.post(f"{url}/v1/evaluations", json=body | {"name": "again"}, timeout=30)
        other = again.json()["id"]
        assert wait_finished(url, other)["status"] == "succeeded"
        reference = httpx.get(f"{url}/v1/evaluations/{other}/report?format=json", timeout=60)
        assert answers_of(reference.json()) == answers_of(report)
        assert len(answers_of(report)) == ITEMS * (1 + K)
