"""The five services with ``STEADFAST_INTERNAL_TOKEN`` set: a job runs end to end (every call
between them carries the token), and a caller without it is refused by perturb, verify,
scoring and the gateway's generate endpoint."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.e2e.stack import job, running_stack, wait_finished
from tests.e2e.test_evaluation import submit

TOKEN = "e2e-internal-token"


def test_a_job_runs_with_the_token_and_outsiders_are_refused(
    tmp_path: Path, port_block: int
) -> None:
    env = {"STEADFAST_INTERNAL_TOKEN": TOKEN}
    with running_stack(tmp_path, port_block, extra_env=env) as stack:
        job_id = submit(stack.evaluator, job(n=3, k=2))
        status = wait_finished(stack.evaluator, job_id)
        assert status["status"] == "succeeded" and status["error_count"] == 0, status
        assert status["progress"]["answer"]["done"] == status["progress"]["answer"]["total"]
        outside = {
            "perturb": ("/v1/permutations", {"options": ["a", "b"], "scheme": "swap"}),
            "verify": ("/v1/verify", {"original": "Who?", "candidates": ["Who is it?"]}),
            "scoring": ("/v1/grade", {"task": "math", "items": []}),
            "gateway": ("/v1/generate", {"model": "steady", "messages": []}),
        }
        for service, (path, body) in outside.items():
            response = httpx.post(f"{stack.urls[service]}{path}", json=body, timeout=10)
            assert response.status_code == 401, (service, response.text)
