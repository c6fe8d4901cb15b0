"""Studies without services: a part's request, the study's status, the report's CSV and HTML."""

from __future__ import annotations

import csv
import io

import pytest

from steadfast.services.evaluator.domain.studies import overall, part_request
from steadfast.services.evaluator.domain.study_report import render_csv, render_html
from steadfast.shared.contracts.evaluator import EvaluationCreate
from steadfast.shared.contracts.monitors import MonitorValue
from steadfast.shared.contracts.position import PositionBiasEvaluate, PositionItem
from steadfast.shared.contracts.studies import (
    StudyConsistency,
    StudyCreate,
    StudyPart,
    StudyPartReport,
    StudyPosition,
    StudyReport,
)
from steadfast.shared.errors import Conflict, RequestRefused

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'


def value(number: float, n: int = 10) -> MonitorValue:
    return MonitorValue(value=number, n=n, ci_low=number - 0.1, ci_high=min(1.0, number + 0.1))


def sample_study() -> StudyReport:
    models = ["local", f"evil{HOSTILE}"]
    consistency = StudyConsistency(
        models={
            models[0]: {"A_any": value(0.9), "A_strict": value(0.6), "flip_rate": value(0.2)},
            models[1]: {"A_any": value(0.7), "A_strict": value(0.7)},
        },
        settings={"items": 10, "k": 3},
        verification=[f"paraphrases verified with: form, lexical {HOSTILE}"],
    )
    position = StudyPosition(
        by_condition={
            condition: {
                models[0]: {"PF": value(-0.4), "PC": value(0.5)},
                models[1]: {"PF": value(0.1), "PC": value(0.9)},
            }
            for condition in ("all", "low", "medium", "high")
        },
        settings={"items": 5, "conditions": "low, medium, high"},
    )
    return StudyReport(
        id="st-1",
        name="mini",
        status="partial",
        models=models,
        generated_at="2026-12-04T21:00:00+00:00",
        parts=[
            StudyPartReport(
                name="truthfulqa", protocol="consistency", job_id="ev-1", status="succeeded",
                dataset="sample-truthfulqa", language="en (10 items)", consistency=consistency,
            ),
            StudyPartReport(
                name="squad-it", protocol="position-bias", job_id="pb-1", status="succeeded",
                dataset="sample-squad_it", language="it (5 items)", position_bias=position,
            ),
            StudyPartReport(
                name=f"broken{HOSTILE}", protocol="consistency", job_id="ev-2", status="failed",
                error=f"every answer failed {HOSTILE}",
            ),
        ],
    )  # fmt: skip


def test_a_part_asks_the_studys_models() -> None:
    study = StudyCreate(
        name="s",
        models=["a", "b"],
        parts=[
            StudyPart(name="c", evaluation=EvaluationCreate(model="x", dataset_id="d")),
            StudyPart(
                name="p", protocol="position-bias", position_bias=PositionBiasEvaluate(model="x")
            ),
        ],
    )
    consistency = part_request(study, study.parts[0], 0)
    assert isinstance(consistency, EvaluationCreate)
    assert (consistency.model, consistency.models, consistency.name) == (None, ["a", "b"], "s: c")
    position = part_request(study, study.parts[1], 1)
    assert isinstance(position, PositionBiasEvaluate) and position.models == ["a", "b"]
    wrong = StudyPart(name="w", protocol="position-bias", evaluation=EvaluationCreate())
    with pytest.raises(RequestRefused) as refused:
        part_request(study, wrong, 2)
    assert refused.value.field == "parts[2].position_bias"


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["succeeded", "running"], "running"),
        (["queued", "failed"], "running"),
        (["succeeded", "succeeded"], "succeeded"),
        (["succeeded", "failed"], "partial"),
        (["cancelled", "failed"], "failed"),
    ],
)
def test_a_study_is_as_far_as_its_parts(statuses: list, expected: str) -> None:  # type: ignore[type-arg]
    assert overall(statuses) == expected


def test_the_csv_has_a_row_per_part_model_condition_and_metric() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(sample_study()).decode())))
    assert len(rows) == 5 + 4 * 2 * 2  # consistency cells + conditions × models × metrics
    first = rows[0]
    assert (first["part"], first["model"], first["metric"], first["value"]) == (
        "truthfulqa", "local", "A_any", "0.9",
    )  # fmt: skip
    pf = [r for r in rows if r["condition"] == "high" and r["metric"] == "PF"]
    assert [(r["model"][:4], r["value"], r["n"]) for r in pf] == [
        ("loca", "-0.4", "10"),
        ("evil", "0.1", "10"),
    ]


def test_the_html_escapes_every_text_and_draws_the_charts() -> None:
    page = render_html(sample_study()).decode()
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;" in page
    assert page.count("<svg") == 3  # the A_any − A_strict gaps, then PF and PC
    assert "90.0%" in page and "-0.40" in page  # rates as percentages, PF signed
    assert "every answer failed &lt;script&gt;" in page  # a failed part says why


class _Row:
    def __init__(self, job_id: str) -> None:
        self.id = job_id


class _EvaluationStore:
    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def cancel(self, job_id: str) -> bool:
        self.cancelled.append(job_id)
        return True


class _Evaluations:
    """Checks pass; a submitted job gets an id; cancels are recorded."""

    def __init__(self) -> None:
        self.store = _EvaluationStore()

    async def check(self, data: object, tenancy: object) -> object:
        return None

    async def submit(self, data: object, key: str, tenancy: object) -> tuple[_Row, bool]:
        return _Row(f"ev-{key}"), True


class _PositionJobs:
    """Every positional-bias job is refused when it is made (another request took its
    idempotency key, say)."""

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def create(self, *args: object, **kwargs: object) -> object:
        raise Conflict("taken", field="items")

    async def cancel(self, job_id: str) -> bool:
        self.cancelled.append(job_id)
        return True


class _StudyStore:
    def __init__(self) -> None:
        self.created: list[str] = []

    async def create(self, study_id: str, *args: object) -> None:
        self.created.append(study_id)


class _Gateway:
    async def route_names(self) -> set[str]:
        return {"a", "local"}


async def test_a_study_that_fails_while_starting_leaves_no_job_running() -> None:
    from steadfast.services.evaluator.domain.job_starter import JobStarter
    from steadfast.services.evaluator.domain.studies import Studies

    evaluations, position_jobs, store = _Evaluations(), _PositionJobs(), _StudyStore()
    jobs = JobStarter(evaluations, None, position_jobs, _Gateway())  # type: ignore[arg-type]
    studies = Studies(store, jobs)  # type: ignore[arg-type]
    study = StudyCreate(
        name="s",
        models=["a"],
        parts=[
            StudyPart(name="c", evaluation=EvaluationCreate(items=[])),
            StudyPart(
                name="p",
                protocol="position-bias",
                position_bias=PositionBiasEvaluate(
                    items=[PositionItem(question="q?", answer="yes", distractor="no")]
                ),
            ),
        ],
    )
    with pytest.raises(RequestRefused) as failed:
        await studies.create(study)
    assert failed.value.field == "parts[1].items"  # where it failed, in the study's body
    assert len(evaluations.store.cancelled) == 1  # the first part's job, already made
    assert evaluations.store.cancelled[0].startswith("ev-st-")
    assert store.created == []  # no study was recorded


def test_a_long_study_and_part_name_still_fit_an_evaluations_name() -> None:
    study = StudyCreate(
        name="s" * 100,
        models=["a"],
        parts=[StudyPart(name="p" * 100, evaluation=EvaluationCreate(dataset_id="d"))],
    )
    request = part_request(study, study.parts[0], 0)
    assert isinstance(request, EvaluationCreate) and request.name is not None
    assert len(request.name) == 200 and request.name.startswith("s" * 100 + ": ")


def test_a_name_that_looks_like_a_formula_stays_text_in_the_csv() -> None:
    report = sample_study()
    report.parts[0].name = '=HYPERLINK("http://x","y")'
    rows = list(csv.reader(io.StringIO(render_csv(report).decode())))
    assert rows[1][0] == '\'=HYPERLINK("http://x","y")'
    assert "-0.4" in [row[7] for row in rows]  # a negative number is no formula
