"""``POST /v1/position-bias`` through the five real services, in front of stand-in models whose
choice depends on where the options stand: ``primacy`` always answers "A"; ``knower`` answers
the letter of the option with "right" in it, and "B" when none has (recency under doubt)."""

from __future__ import annotations

import itertools
import json
import math
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from steadfast.cli import main
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.e2e.stack import stack_env
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.routes import BROKEN_ROUTE, stand_in_routes
from tests.fakes.stand_in import Fault

OPTION = re.compile(r"^([A-Z])\. (.*)$", re.MULTILINE)

ITEMS: list[dict[str, Any]] = [
    {
        "id": "capital",
        "question": "What is the capital of France?",
        "context": "Paris is the capital of France.",
        "answer": "Paris (right)",
    },
    {"id": "given", "question": "Which is right?", "answer": "this is right", "distractor": "no"},
    {
        "id": "three",
        "question": "Pick the right one.",
        "options": ["wrong one", "the right one", "another wrong one"],
        "correct_option": "B",
    },
]


def leaning(right: str | None) -> Reply:
    """Knows the answer but leans to A: says "A" in both orders of a two-option item, though
    its first token gives the right letter more weight than the slot alone would."""
    if right == "A":
        alternatives = [("A", math.log(0.9)), (" B", math.log(0.1))]
    else:
        alternatives = [("A", math.log(0.55)), ("B.", math.log(0.45))]
    return Reply(text="A", top_logprobs=alternatives)


#: 12 two-option items with a context: 12 × 3 conditions × 2 orders × 2 models = 144 > 60
MANY = [{**ITEMS[0], "id": f"capital-{n}"} for n in range(12)]


class ChoiceWorld:
    """The distractor writer and the two models under test; every answer prompt is kept."""

    def __init__(self) -> None:
        self._decoys = itertools.count(1)
        self._lock = threading.Lock()
        self.asked: list[tuple[str, str]] = []
        #: the stand-in server answering as this world (set by the ``evaluator`` fixture)
        self.server: FakeOpenAIServer | None = None

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        if system.startswith("You write wrong answers"):
            return "Lyon (a plausible city)"
        if system.startswith("You write decoy answers"):
            with self._lock:
                return f"decoy number {next(self._decoys)}"
        with self._lock:
            self.asked.append((body["model"], user))
        if body["model"] == "primacy-model":
            return "A"
        right = [letter for letter, text in OPTION.findall(user) if "right" in text]
        if body["model"] == "leaning-model":
            return leaning(right[0] if right else None)
        return right[0] if right else "B"


@pytest.fixture(scope="module")
def world() -> ChoiceWorld:
    return ChoiceWorld()


@pytest.fixture(scope="module")
def evaluator(world: ChoiceWorld, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("position")
    with FakeOpenAIServer(responder=world) as upstream:
        world.server = upstream
        routes = tmp / "models.toml"
        names = ("primacy", "knower", "writer", "leaning")
        routes.write_text(stand_in_routes(upstream.url, *names) + BROKEN_ROUTE)
        ports = service_ports(free_port_block(5))
        env = {
            **stack_env(tmp, routes, None),
            "STEADFAST_EVALUATOR_MAX_SYNC_VARIANTS": "60",
            "STEADFAST_EVALUATOR_MAX_JOB_ANSWERS": "150",
        }
        with Supervisor(ports=ports, env=env, log_dir=tmp / "logs") as supervisor:
            ready = supervisor.wait_ready(120)
            assert all(ready.values()), ready
            yield f"http://127.0.0.1:{ports['evaluator']}"


def post(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{url}/v1/position-bias", json=body, timeout=120)


def value(metrics: dict[str, Any], name: str) -> Any:
    return metrics[name]["value"]


def trial(result: dict[str, Any], item_id: str, condition: str) -> dict[str, Any]:
    found = [t for t in result["trials"] if (t["item_id"], t["condition"]) == (item_id, condition)]
    assert len(found) == 1, result["trials"]
    return found[0]


def test_primacy_and_knowledge_show_in_pf_and_pc(evaluator: str, world: ChoiceWorld) -> None:
    body = {"models": ["primacy", "knower"], "items": ITEMS, "generator": "writer", "bootstrap": 0}
    response = post(evaluator, body)
    assert response.status_code == 200, response.text
    result = response.json()
    # every condition an item allows, and no other: low needs a context, high two options
    ran = sorted((t["item_id"], t["condition"]) for t in result["trials"])
    assert ran == [
        ("capital", "high"),
        ("capital", "low"),
        ("capital", "medium"),
        ("given", "high"),
        ("given", "medium"),
        ("three", "medium"),
    ]
    assert result["skipped"] == []
    primacy, knower = result["models"]["primacy"], result["models"]["knower"]
    # always "A": every pair is AA, the k-option item's recall is all at A
    assert value(primacy, "PF") == -1.0 and value(primacy, "PC") == 0.0
    assert value(primacy, "acc_correct_first") == 1.0
    assert value(primacy, "n_pairs") == 6
    # the knower is right in every order where a right option exists; with two decoys it
    # falls back to "B" (recency)
    low_medium = result["by_condition"]["medium"]["knower"]
    assert value(low_medium, "PC") == 1.0 and value(low_medium, "PF") == 0.0
    assert value(result["by_condition"]["high"]["knower"], "PF") == 1.0
    assert value(knower, "invalid_rate") == 0.0
    # what each metric is counted over comes with them (PC and fluctuation differ)
    assert result["metric_sets"]["PC"].startswith("complete units")
    assert "two valid replies" in result["metric_sets"]["fluctuation_rate"]
    assert result["pairs"]["primacy"] == {"AB": 0, "BA": 0, "AA": 5, "BB": 0}


def test_each_trial_shows_its_options_orders_and_the_mitigations(
    evaluator: str, world: ChoiceWorld
) -> None:
    body = {"models": ["primacy", "knower"], "items": ITEMS, "generator": "writer", "bootstrap": 0}
    result = post(evaluator, body).json()
    low = trial(result, "capital", "low")
    assert low["context_shown"] and low["options"] == ["Paris (right)", "Lyon (a plausible city)"]
    assert low["reference"] == 0 and low["distractors"].startswith("distractor-")
    medium = trial(result, "capital", "medium")
    assert not medium["context_shown"] and medium["options"] == low["options"]
    primacy, knower = medium["models"]
    assert [a["order"] for a in primacy["answers"]] == [[0, 1], [1, 0]]
    assert [a["chosen"] for a in primacy["answers"]] == [0, 1]
    # swap-and-agree: the primacy model's two orders disagree, the knower's agree on option 0
    assert (primacy["consistent"], primacy["agreed"], primacy["vote"]) == (False, None, None)
    assert (knower["consistent"], knower["agreed"], knower["vote"]) == (True, 0, 0)
    high = trial(result, "given", "high")
    assert high["options"][0].startswith("decoy number") and len(set(high["options"])) == 2
    three = trial(result, "three", "medium")
    assert [a["order"] for a in three["models"][0]["answers"]] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert three["distractors"] == "given" and three["models"][1]["agreed"] == 1
    # the context reached the model in the low condition only
    with_context = {(model, user) for model, user in world.asked if "Paris is the capital" in user}
    assert len(with_context) == 2 * 2  # 2 models × 2 orders, all in the low condition
    assert all("What is the capital of France?" in user for _, user in with_context)


def test_a_named_condition_an_item_cannot_run_is_reported(evaluator: str) -> None:
    body = {"model": "knower", "items": ITEMS, "conditions": ["low", "high"], "bootstrap": 0}
    result = post(evaluator, {**body, "generator": "writer"}).json()
    assert sorted((t["item_id"], t["condition"]) for t in result["trials"]) == [
        ("capital", "high"),
        ("capital", "low"),
        ("given", "high"),
    ]
    skipped = {(s["item_id"], s["condition"]): s["reason"] for s in result["skipped"]}
    assert set(skipped) == {("given", "low"), ("three", "low"), ("three", "high")}
    assert "context" in skipped[("given", "low")]


def test_a_written_distractor_that_is_another_correct_answer_is_refused(evaluator: str) -> None:
    # the writer only ever writes "Lyon (a plausible city)": here that is correct too
    item = {"id": "alias", "question": "A city?", "answer": "Marseille"}
    item["also_correct"] = ["Lyon (a plausible city)"]
    body = {"model": "knower", "items": [item], "conditions": ["medium"], "generator": "writer"}
    result = post(evaluator, {**body, "bootstrap": 0}).json()
    assert result["trials"] == []
    [skipped] = result["skipped"]
    assert skipped["item_id"] == "alias" and "no distractor: 0 of 1" in skipped["reason"]


def test_a_failing_model_is_recorded_per_reply_not_dropped(evaluator: str) -> None:
    body = {"models": ["knower", "broken"], "items": ITEMS[1:2], "conditions": ["medium"]}
    response = post(evaluator, {**body, "bootstrap": 0})
    assert response.status_code == 200, response.text
    result = response.json()
    broken = trial(result, "given", "medium")["models"][1]
    assert broken["model"] == "broken"
    assert all(a["error"] and "attempts" in a["error"] for a in broken["answers"])
    assert broken["consistent"] is None
    assert value(result["models"]["knower"], "PC") == 1.0
    # no metric counts the broken model's replies; the response says how many there were
    assert "broken" not in result["models"]
    assert result["failed_replies"] == {"knower": 0, "broken": 2}


def test_a_stored_dataset_s_items_run_as_they_are(evaluator: str) -> None:
    # the built-in MMLU sample: four options each, so every cyclic order, medium only
    body = {"model": "primacy", "dataset_id": "sample-mmlu", "limit": 2, "bootstrap": 0}
    response = post(evaluator, body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert [t["condition"] for t in result["trials"]] == ["medium", "medium"]
    assert all(len(t["options"]) == 4 and t["distractors"] == "given" for t in result["trials"])
    assert [len(t["models"][0]["answers"]) for t in result["trials"]] == [4, 4]
    assert value(result["models"]["primacy"], "PF") == -1.0
    inline_and_stored = post(evaluator, {**body, "items": ITEMS})
    assert inline_and_stored.status_code == 400
    assert inline_and_stored.json()["errors"][0]["field"] == "items"
    missing = post(evaluator, {**body, "dataset_id": "nope"})
    assert missing.status_code == 404 and missing.json()["errors"][0]["field"] == "dataset_id"


def test_calibration_recovers_the_option_a_slot_preference_hides(evaluator: str) -> None:
    body = {"model": "leaning", "items": ITEMS[1:2], "conditions": ["medium"], "calibrate": True}
    response = post(evaluator, {**body, "bootstrap": 0})
    assert response.status_code == 200, response.text
    result = trial(response.json(), "given", "medium")["models"][0]
    # "A" in both orders: the orders disagree, and the vote ties
    assert [a["choice"] for a in result["answers"]] == ["A", "A"]
    assert (result["agreed"], result["vote"]) == (None, None)
    # averaged over the orders, the right option (index 0) is the more probable: 0.675 vs 0.325
    first, second = (a["option_probabilities"] for a in result["answers"])
    assert first == pytest.approx([0.9, 0.1]) and second == pytest.approx([0.45, 0.55])
    assert result["calibrated"] == 0
    # a self-paraphrase model has no first-token probabilities: it is answered, not calibrated
    mixed = post(evaluator, {**body, "models": ["leaning", "canonicalize:knower"], "model": None})
    assert mixed.status_code == 200, mixed.text
    strategy = trial(mixed.json(), "given", "medium")["models"][1]
    assert strategy["calibrated"] is None and all(a["error"] is None for a in strategy["answers"])
    assert mixed.json()["notes"] == [
        "canonicalize:knower: not calibrated, its route gives no first-token probabilities"
    ]
    uncalibrated = post(evaluator, {**body, "calibrate": False, "bootstrap": 0}).json()
    plain = trial(uncalibrated, "given", "medium")["models"][0]
    assert plain["calibrated"] is None and plain["answers"][0]["option_probabilities"] is None


def test_a_job_runs_what_a_request_cannot_wait_for(evaluator: str) -> None:
    # 144 answers: past the synchronous limit (60), within the job limit (150)
    body = {"models": ["knower", "primacy"], "items": MANY, "generator": "writer"}
    body["bootstrap"] = 0
    assert post(evaluator, body).status_code == 413
    submitted = httpx.post(f"{evaluator}/v1/position-bias/jobs", json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job = submitted.json()
    assert job["status"] in ("queued", "running") and job["order_count"] == 144
    location = f"{evaluator}{submitted.headers['Location']}"
    deadline = time.monotonic() + 120
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
        job = httpx.get(location, timeout=30).json()
    assert job["status"] == "succeeded" and job["error"] is None, job
    assert job["attempts"] == 1 and job["finished_at"] >= job["started_at"]
    result = job["result"]
    assert len(result["trials"]) == 36  # 12 items × low, medium, high
    assert value(result["models"]["primacy"], "PF") == -1.0
    assert value(result["by_condition"]["medium"]["knower"], "PC") == 1.0
    assert result["failed_replies"] == {"knower": 0, "primacy": 0}
    finished = httpx.delete(location, timeout=30)
    assert finished.status_code == 409 and "already succeeded" in finished.json()["detail"]


def test_a_job_retried_with_its_idempotency_key_is_made_once(evaluator: str) -> None:
    body = {"models": ["knower"], "items": MANY[:2], "generator": "writer", "bootstrap": 0}
    jobs = f"{evaluator}/v1/position-bias/jobs"
    headers = {"Idempotency-Key": "pb-retry-1"}
    first = httpx.post(jobs, json=body, headers=headers, timeout=30)
    again = httpx.post(jobs, json=body, headers=headers, timeout=30)
    assert first.status_code == again.status_code == 202, again.text
    assert again.json()["id"] == first.json()["id"]
    unkeyed = httpx.post(jobs, json=body, timeout=30)
    assert unkeyed.status_code == 202 and unkeyed.json()["id"] != first.json()["id"]
    other = httpx.post(jobs, json={**body, "seed": 3}, headers=headers, timeout=30)
    assert other.status_code == 422, other.text
    assert first.json()["id"] in other.json()["detail"]
    assert other.json()["errors"][0] | {"message": ""} == {
        "field": "Idempotency-Key",
        "source": "header",
        "message": "",
    }
    empty = httpx.post(jobs, json=body, headers={"Idempotency-Key": ""}, timeout=30)
    assert empty.status_code == 400 and empty.json()["errors"][0]["source"] == "header"


def test_a_job_can_be_cancelled(evaluator: str, world: ChoiceWorld) -> None:
    # questions no earlier test asked (the gateway's cache would answer them at once), each
    # answer taking 2 s: the job is still running when it is cancelled
    assert world.server is not None
    world.server.fault_for = lambda body: (
        Fault.delay(2.0) if "writer" not in body["model"] else None
    )
    items = [{**item, "question": f"{item['question']} ({item['id']})"} for item in MANY]
    try:
        body = {"models": ["knower", "primacy"], "items": items, "generator": "writer", "seed": 7}
        submitted = httpx.post(f"{evaluator}/v1/position-bias/jobs", json=body, timeout=30)
        location = f"{evaluator}{submitted.headers['Location']}"
        cancelled = httpx.delete(location, timeout=30)
    finally:
        world.server.fault_for = None
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    time.sleep(0.5)
    assert httpx.get(location, timeout=30).json()["status"] == "cancelled"
    missing = httpx.delete(f"{evaluator}/v1/position-bias/jobs/pb-nothing", timeout=30)
    assert missing.status_code == 404


def test_a_job_has_its_own_limit_and_an_unknown_job_is_a_404(evaluator: str) -> None:
    body = {"models": ["knower", "primacy", "leaning"], "items": MANY, "generator": "writer"}
    too_large = httpx.post(f"{evaluator}/v1/position-bias/jobs", json=body, timeout=30)
    assert too_large.status_code == 413 and "job limit of 150" in too_large.json()["detail"]
    bad = httpx.post(f"{evaluator}/v1/position-bias/jobs", json={"model": "knower"}, timeout=30)
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "items"
    missing = httpx.get(f"{evaluator}/v1/position-bias/jobs/pb-nothing", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["errors"][0] | {"message": ""} == {
        "field": "job_id",
        "source": "path",
        "message": "",
    }


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"items": ITEMS}, 400, "model"),
        ({"model": "nobody", "items": ITEMS}, 422, "model"),
        ({"models": ["knower", "nobody"], "items": ITEMS}, 422, "models[1]"),
        ({"model": "knower", "items": [{"question": "q"}]}, 400, "items[0].answer"),
        (
            {"model": "knower", "items": [{"question": "q", "answer": "18", "distractor": "18.0"}]},
            400,
            "items[0].distractor",
        ),
        (
            {
                "model": "knower",
                "items": [
                    {"question": "q", "answer": "York", "distractor": "New York"},
                    {"question": "q2", "answer": "2", "distractor": "2 km"},
                    {"question": "q3", "answer": "Paris", "distractor": " paris."},
                ],
            },
            400,
            "items[2].distractor",
        ),
        (
            {
                "model": "knower",
                "items": [
                    {"question": "q", "answer": "JFK", "also_correct": ["John F. Kennedy"]},
                    {
                        "question": "q2",
                        "answer": "JFK",
                        "also_correct": ["John F. Kennedy"],
                        "distractor": "john f kennedy",
                    },
                ],
            },
            400,
            "items[1].distractor",
        ),
        (
            {"model": "knower", "items": [{"question": "q", "options": ["a", "b"]}]},
            400,
            "items[0].correct_option",
        ),
        (
            {
                "model": "knower",
                "items": [{"question": "q", "options": ["a", "b"], "correct_option": "C"}],
            },
            400,
            "items[0].correct_option",
        ),
        ({"model": "knower", "items": ITEMS, "conditions": ["extreme"]}, 400, "conditions[0]"),
        ({"models": ["knower", "primacy"], "items": MANY, "generator": "writer"}, 413, "items"),
        ({"model": "knower", "items": [ITEMS[0], ITEMS[0]]}, 400, "items[1].id"),
        ({"model": "knower"}, 400, "items"),
        # a distractor to write: the writer must be a route the gateway knows
        ({"model": "knower", "items": ITEMS[:1], "generator": "gpt-9"}, 422, "generator"),
        (
            {"model": "knower", "items": ITEMS[1:2], "conditions": ["high"], "generator": "gpt-9"},
            422,
            "generator",
        ),
    ],
)
def test_bad_input_names_the_field(
    evaluator: str, body: dict[str, Any], status: int, field: str
) -> None:
    response = post(evaluator, body)
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["field"] == field


def test_a_writer_the_request_never_asks_is_not_checked(evaluator: str) -> None:
    # every distractor is given: no trial asks the writer, so its name does not matter
    body = {"model": "knower", "items": ITEMS[1:], "conditions": ["medium"], "generator": "gpt-9"}
    response = post(evaluator, {**body, "bootstrap": 0})
    assert response.status_code == 200, response.text


def test_the_cli_prints_the_table_and_writes_the_result(
    evaluator: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(item) for item in ITEMS[1:]) + "\n")
    out = tmp_path / "result.json"
    argv = ["position-bias", str(items), "--model", "primacy", "--model", "knower"]
    argv += ["--generator", "writer", "--url", evaluator, "--json", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    primacy = next(line.split() for line in lines if line.startswith("primacy"))
    assert primacy[:4] == ["primacy", "all", "-1.00", "+1.00"]  # PF, |PF|
    assert primacy[-1] == "3"  # pairs: given (medium, high), three (medium)
    assert ["high", "-1.00", "+1.00", "+0.00"] in [line.split()[:4] for line in lines]
    assert "swap-and-agree gave an option on 2 of 6 trials" in lines
    assert json.loads(out.read_text())["pairs"]["knower"] == {"AB": 1, "BA": 0, "AA": 0, "BB": 1}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a"}\n{"question": 3}\n')
    with pytest.raises(SystemExit, match=r"bad\.jsonl:2"):
        main(["position-bias", str(bad), "--model", "primacy", "--url", evaluator])


def test_the_cli_runs_a_job_when_the_request_is_too_large(
    evaluator: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "many.jsonl"
    items.write_text("\n".join(json.dumps(item) for item in MANY) + "\n")
    out = tmp_path / "result.json"
    argv = ["position-bias", str(items), "--model", "primacy", "--model", "knower"]
    argv += ["--generator", "writer", "--url", evaluator, "--json", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "too large for one request: running it as a job" in captured.err
    assert "144 answers at most" in captured.err
    primacy = next(line.split() for line in captured.out.splitlines() if line.startswith("primacy"))
    assert primacy[:4] == ["primacy", "all", "-1.00", "+1.00"]
    assert len(json.loads(out.read_text())["trials"]) == 36
