"""The Python client (``steadfast.client.Client``) against the five real services with a
stand-in model server: what an application that calls Steadfast does."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from steadfast.client import ApiError, Client, EvaluateRequest, EvaluationCreate, EvaluationItem
from tests.e2e.stack import job, running_stack

N, K = 6, 3


def test_an_application_evaluates_through_the_client(tmp_path: Path, port_block: int) -> None:
    with running_stack(tmp_path, port_block) as stack, Client(stack.evaluator) as steadfast:
        request = msgspec.convert(job(N, K), EvaluationCreate)
        accepted = steadfast.create_evaluation(request)
        seen: list[str] = []
        final = steadfast.wait(accepted.id, progress=lambda s: seen.append(s.status), poll_s=0.2)
        assert final.status == "succeeded" and final.error_count == 0
        assert seen[-1] == "succeeded" and len(seen) >= 1

        results = list(steadfast.iter_items(accepted.id, page_size=4))
        assert [result.id for result in results] == [f"item-{i}" for i in range(N)]
        assert all(len(result.variants) == 1 + K for result in results)

        report = steadfast.report(accepted.id)
        by_model = {summary.model: summary for summary in report.models}
        assert by_model["steady"].metrics["A_strict"].value == pytest.approx(1.0)
        assert by_model["shaky"].metrics["flip_rate"].value == pytest.approx(1.0)  # items 0-4
        csv = steadfast.rendered_report(accepted.id, "csv").decode()
        assert "item-5" in csv

        assert steadfast.evaluations(limit=5).total == 1

        quick = msgspec.convert(
            {**job(1, 2), "items": [{"question": "Item 3: what is the code word for item 3?",
                                      "answers": ["alpha-3"]}]},
            EvaluateRequest,
        )  # fmt: skip
        answered = steadfast.evaluate(quick)
        assert {summary.model for summary in answered.models} == {"steady", "shaky"}

        with pytest.raises(ApiError) as refused:
            steadfast.create_evaluation(
                EvaluationCreate(models=["steady"], items=[EvaluationItem(question="x")], k=0)
            )
        assert refused.value.status == 400
        assert refused.value.problem.errors and refused.value.problem.errors[0].field == "k"
