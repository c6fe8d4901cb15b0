"""The report renderer: JSON round trip, CSV rows, escaped self-contained HTML, the endpoint."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from steadfast.services.scoring.app import create_app
from steadfast.services.scoring.domain.report_csv import render_csv
from steadfast.services.scoring.domain.report_rendering import render_html, render_json
from steadfast.services.scoring.settings import ScoringSettings
from steadfast.shared.contracts.scoring import Report, ReportTrust
from tests.unit.scoring.report_sample import HOSTILE, MODELS, sample_report


@pytest.fixture(scope="module")
def report() -> Report:
    return sample_report()


def test_json_round_trips(report: Report) -> None:
    assert msgspec.json.decode(render_json(report), type=Report) == report


def test_csv_has_one_row_per_answer_with_item_metrics(report: Report) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert len(rows) == sum(len(item.answers) for item in report.items)
    first = rows[0]
    assert first["item_id"] == report.items[0].item_id and first["variant"] == "0"
    assert first["question"] == report.items[0].question
    per_item = {(i.item_id, i.model): i for i in report.consistency.items or []}  # type: ignore[union-attr]
    metrics = per_item[(first["item_id"], first["model"])]
    assert first["majority_label"] == metrics.majority_label
    assert float(first["mode_share"]) == pytest.approx(metrics.mode_share)


def test_csv_defuses_spreadsheet_formulas() -> None:
    report = msgspec.convert(
        {
            "items": [
                {
                    "item_id": "1",
                    "question": "q",
                    "answers": [{"model": "m", "variant": 0, "text": '=HYPERLINK("x")'}],
                }
            ]
        },
        type=Report,
    )
    row = next(csv.DictReader(io.StringIO(render_csv(report))))
    assert row["answer"] == '\'=HYPERLINK("x")'
    # a tab or carriage return before the formula triggers it too
    for text in ("\t=1+1", "\r=1+1"):
        tabbed = msgspec.structs.replace(
            report,
            items=[
                msgspec.structs.replace(
                    report.items[0],
                    answers=[msgspec.structs.replace(report.items[0].answers[0], text=text)],
                )
            ],
        )
        rows = csv.DictReader(io.StringIO(render_csv(tabbed), newline=""))
        assert next(rows)["answer"] == f"'{text}"


def test_a_report_without_metrics_shows_each_model_once() -> None:
    # a running or failed evaluation: the models come from the answers, one per variant
    answers = [{"model": m, "variant": v} for m in ("m1", "m2") for v in range(4)]
    report = msgspec.convert(
        {"items": [{"item_id": "a", "question": "q", "answers": answers}]}, type=Report
    )
    assert "2 models · 1 questions" in render_html(report)  # it said 8 models


def test_a_report_of_several_tasks_names_them_in_its_header() -> None:
    # the demo's sample: six factual questions and two maths problems, no one task of its own
    mixed = Report(settings={"tasks": "factual (6 items), math (2 items)"})
    assert "tasks <b>factual (6 items), math (2 items)</b>" in render_html(mixed)
    single = Report(task="math", settings={"tasks": "math (2 items)"})
    assert "task <b>math</b>" in render_html(single) and "tasks <b>" not in render_html(single)


def test_html_escapes_every_text_from_data(report: Report) -> None:
    page = render_html(report)
    assert HOSTILE not in page
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert re.search(r"<img\b", page) is None
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page


def test_html_is_self_contained_with_every_section(report: Report) -> None:
    page = render_html(report)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page and "<link" not in page
    for heading in (
        "How reliably each model answers",
        "Flips and recoveries",
        "Agreement per question",
        "Which paraphrases cause flips",
        "Positional bias",
        "Least consistent questions",
        "Counts and settings used",
    ):
        assert f"<h2>{heading}</h2>" in page
    assert page.count("<svg") >= 6
    for model in MODELS:
        if "<" not in model:
            assert model in page


def test_worst_items_are_limited(report: Report) -> None:
    assert render_html(report, worst_items=3).count('<details class="item"') == 3
    assert '<details class="item"' not in render_html(report, worst_items=0)


def test_pair_counts_of_a_model_without_metrics_still_render(report: Report) -> None:
    assert report.position_bias is not None
    models = dict(report.position_bias.models)
    dropped = next(iter(report.position_bias.pairs))
    models.pop(dropped)
    partial = msgspec.structs.replace(
        report, position_bias=msgspec.structs.replace(report.position_bias, models=models)
    )
    page = render_html(partial)
    assert "<h2" in page and dropped in page


def test_empty_report_still_renders() -> None:
    page = render_html(Report())
    assert "Nothing to show" in page and page.startswith("<!DOCTYPE html>")


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Any]]:
    with TestClient(create_app(ScoringSettings(log_json=False, math_warm_up=False))) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("html", "text/html"), ("csv", "text/csv"), ("json", "application/json")],
)
def test_render_endpoint(
    client: TestClient[Any], report: Report, fmt: str, media_type: str
) -> None:
    body = {"report": msgspec.to_builtins(report), "format": fmt, "worst_items": 2}
    response = client.post("/v1/reports/render", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(media_type)
    assert report.items[0].item_id in response.text


def test_render_endpoint_rejects_bad_format(client: TestClient[Any]) -> None:
    response = client.post("/v1/reports/render", json={"report": {}, "format": "pdf"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "format"


def test_report_schema(client: TestClient[Any]) -> None:
    schema = client.get("/v1/reports/schema").json()
    assert "Report" in schema["$defs"] and "ReportItem" in schema["$defs"]


def test_a_caveat_on_the_trust_of_the_numbers_is_shown_escaped(report: Report) -> None:
    report.trust = ReportTrust(
        stages=["judge"],
        caveats=[
            "the judge's threshold was calibrated on questions in en; 3 of 8 items are in <it>"
        ],
    )
    page = render_html(report)
    assert (
        "<li><strong>Caveat:</strong> the judge&#x27;s threshold was calibrated on questions in "
        "en; 3 of 8 items are in &lt;it&gt;.</li>"
    ) in page
    report.trust = ReportTrust(stages=["judge"])
    assert "Caveat:" not in render_html(report)
