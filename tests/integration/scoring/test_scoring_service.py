"""The scoring service as the evaluator uses it: a real scoring process called through
``ScoringClient``, its LLM judges reached through a real gateway process whose upstream is the
OpenAI-compatible stand-in."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from steadfast.shared.clients.scoring import ScoringClient
from steadfast.shared.contracts.scoring import (
    ConsistencyOptions,
    ConsistencyRequest,
    Gold,
    GradeItem,
    GradeRequest,
    PositionBiasRequest,
    Report,
    ReportItem,
    ReportRenderRequest,
)
from steadfast.shared.http_client import ServiceCallError, close_session
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.stand_in import last_user_text
from tests.unit.scoring.records import pair, question


def judge(body: dict[str, Any]) -> str:
    """A stand-in grader: A when a gold answer occurs in the prediction, C for "don't know"."""
    if body["model"] == "judge-bad":
        return "Let me think about it."
    prompt = last_user_text(body["messages"])
    gold = re.findall(r"^- (.+)$", prompt.split("Predicted answer:")[0], re.MULTILINE)
    predicted = prompt.split("Predicted answer:")[1].split("\n")[0].lower()
    if "know" in predicted:
        return "C"
    return "A" if any(answer.lower() in predicted for answer in gold) else "B"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, FakeOpenAIServer]]:
    directory = tmp_path_factory.mktemp("scoring")
    with FakeOpenAIServer(responder=judge) as fake:
        routes = directory / "models.toml"
        routes.write_text(
            "".join(
                f'[models.{name}]\nbackend = "openai"\nmodel = "{name}"\n'
                f'base_url = "{fake.url}"\nmax_retries = 0\ntimeout_s = 10\n\n'
                for name in ("judge-a", "judge-b", "judge-bad")
            )
        )
        ports = service_ports(free_port_block(5))
        supervisor = Supervisor(
            ports=ports,
            env={"STEADFAST_DATA_DIR": str(directory), "STEADFAST_MODELS_FILE": str(routes)},
            services=("gateway", "scoring"),
            log_dir=directory / "logs",
        )
        with supervisor:
            ready = supervisor.wait_ready(90)
            assert all(ready.values()), _logs(directory)
            yield f"http://127.0.0.1:{ports['scoring']}", fake


def _logs(directory: Path) -> str:
    return "\n".join(
        path.read_text()[-2000:] for path in sorted((directory / "logs").glob("*.log"))
    )


@pytest.fixture
async def client(services: tuple[str, FakeOpenAIServer]) -> AsyncIterator[ScoringClient]:
    yield ScoringClient(services[0], timeout_s=60)
    await close_session()


def _factual(answer: str) -> GradeItem:
    return GradeItem(
        question="What is the capital of France?",
        answer_text=answer,
        gold=Gold(answers=["Paris"]),
    )


async def test_llm_grader_votes_through_the_gateway(
    client: ScoringClient, services: tuple[str, FakeOpenAIServer]
) -> None:
    fake = services[1]
    start = fake.call_count
    response = await client.grade(
        GradeRequest(
            task="factual",
            grader="llm",
            judge_models=["judge-a", "judge-b", "judge-bad"],
            items=[_factual("It's Paris."), _factual("Lyon"), _factual("I don't know")],
        )
    )
    assert [result.label for result in response.results] == [
        "correct",
        "incorrect",
        "not_attempted",
    ]
    first = response.results[0]
    assert [vote.label for vote in first.votes or []] == ["correct", "correct", "invalid"]
    assert first.parsed == "it s paris" and first.normalized_value == "it s paris"
    assert response.results[2].normalized_value == "<abstain>"
    calls = fake.calls[start:]
    assert len(calls) == 9
    # the grader always sees the original question
    assert all("What is the capital of France?" in last_user_text(c["messages"]) for c in calls)
    assert {call["temperature"] for call in calls} == {0.0}


@pytest.mark.parametrize(
    ("judges", "field"),
    [(["judge-a", "nope"], "judge_models[1]"), (["judge-a", "judge-a"], "judge_models[1]")],
)
async def test_an_unknown_or_repeated_judge_is_the_callers_error_naming_it(
    client: ScoringClient, judges: list[str], field: str
) -> None:
    with pytest.raises(ServiceCallError) as caught:
        await client.grade(
            GradeRequest(task="factual", grader="llm", judge_models=judges, items=[_factual("P")])
        )
    assert caught.value.status == 422
    assert caught.value.problem.errors and caught.value.problem.errors[0].field == field


async def test_math_and_choice_grading(client: ScoringClient) -> None:
    math = await client.grade(
        GradeRequest(
            task="math",
            items=[
                GradeItem(
                    question="q", answer_text=r"\boxed{\frac{3}{4}}", gold=Gold(answer="0.75")
                ),
                GradeItem(question="q", answer_text="it is 12", gold=Gold(answer="13")),
                GradeItem(question="q", answer_text="no idea", gold=Gold(answer="13")),
            ],
        )
    )
    assert [(r.label, r.normalized_value) for r in math.results] == [
        ("correct", "0.75"),
        ("incorrect", "12"),
        ("invalid", None),
    ]
    choice = await client.grade(
        GradeRequest(
            task="choice",
            items=[GradeItem(question="q", answer_text="b", gold=Gold(correct_option="B"))],
        )
    )
    assert choice.results[0].label == "correct"


async def test_bad_input_names_the_field(client: ScoringClient) -> None:
    with pytest.raises(ServiceCallError) as caught:
        await client.grade(
            GradeRequest(task="math", items=[GradeItem(question="q", answer_text="1", gold=Gold())])
        )
    assert caught.value.status == 422
    assert caught.value.problem.errors[0].field == "items[0].gold.answer"  # type: ignore[index]


async def test_metrics_over_http(client: ScoringClient) -> None:
    records = [*question("a", "C|CI"), *question("b", "I|CC")]
    consistency = await client.consistency(
        ConsistencyRequest(records=records, options=ConsistencyOptions(bootstrap=50, per_item=True))
    )
    assert consistency.models["m"]["A_orig"].value == 0.5
    assert consistency.models["m"]["recovery_rate"].value == 1
    assert consistency.items is not None and len(consistency.items) == 2
    position = await client.position_bias(
        PositionBiasRequest(records=[*pair("1", "A", "A"), *pair("2", "A", "B")])
    )
    assert position.models["m"]["PF"].value == -0.5
    assert position.models["m"]["PC"].value == 0.5


async def test_report_rendered_over_http(client: ScoringClient) -> None:
    records = [*question("a", "C|CI"), *question("b", "I|CC")]
    consistency = await client.consistency(
        ConsistencyRequest(records=records, options=ConsistencyOptions(bootstrap=20, per_item=True))
    )
    report = Report(
        title="T <b>",
        consistency=consistency,
        items=[ReportItem(item_id="a", question="Q?", answers=[])],
    )
    page = await client.render_report(ReportRenderRequest(report=report, format="html"))
    assert page.startswith(b"<!DOCTYPE html>") and b"<title>T &lt;b&gt;</title>" in page
    data = await client.render_report(ReportRenderRequest(report=report, format="json"))
    assert msgspec.json.decode(data, type=Report) == report


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("html", "text/html; charset=utf-8"), ("csv", "text/csv; charset=utf-8")],
)
async def test_a_rendered_report_says_its_media_type_once(
    services: tuple[str, FakeOpenAIServer], fmt: str, media_type: str
) -> None:
    body = {"report": {"title": "T", "items": []}, "format": fmt}
    async with httpx.AsyncClient(base_url=services[0], timeout=60) as http:
        response = await http.post("/v1/reports/render", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == media_type


def _process_group(pgid: int) -> list[int]:
    """Live processes of a process group (the supervisor starts each service in its own)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_stopping_scoring_leaves_no_maths_workers_behind(tmp_path: Path) -> None:
    ports = service_ports(free_port_block(5))
    supervisor = Supervisor(
        ports=ports,
        env={"STEADFAST_DATA_DIR": str(tmp_path)},
        services=("gateway", "scoring"),  # scoring is ready once its gateway is
        log_dir=tmp_path / "logs",
    )
    with supervisor:
        assert all(supervisor.wait_ready(90).values()), _logs(tmp_path)
        (scoring,) = (p.process.pid for p in supervisor.processes if p.name == "scoring")
        response = httpx.post(
            f"http://127.0.0.1:{ports['scoring']}/v1/grade",
            json={
                "task": "math",
                "items": [{"question": "2 + 2?", "answer_text": "x = 4", "gold": {"answer": "4"}}],
            },
            timeout=60,
        )
        assert response.json()["results"][0]["label"] == "correct"
        # the scoring process, the forkserver and its maths workers
        assert len(_process_group(scoring)) >= 3
    # the forkserver leaves once the last process holding its pipe has gone: give it a moment
    deadline = time.monotonic() + 5
    while _process_group(scoring) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _process_group(scoring) == []
