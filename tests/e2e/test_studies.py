"""A study through the five real services (stand-in models): both protocols, one report in
JSON, CSV and HTML, Italian items asked in Italian, and a second run that asks no model."""

from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.stack import TinyWorld, job, running_stack
from tests.fakes.openai_server import Reply

OPTION = re.compile(r"^([A-Z])\. (.*)$", re.MULTILINE)


class StudyWorld(TinyWorld):
    """TinyWorld, and the choice questions of positional bias: ``steady`` picks the right
    option wherever it stands, ``shaky`` always the first one."""

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        user = body["messages"][-1]["content"]
        options = OPTION.findall(user)
        if options and "Item" not in user:
            if body["model"] == "shaky-model":
                return options[0][0]
            return next(letter for letter, text in options if text.startswith("giusta"))
        return super().__call__(body)


ITALIAN = [
    {
        "id": f"scelta-{n}",
        "question": f"Quale di queste risposte è quella giusta per la domanda numero {n}?",
        "answer": f"giusta {n}",
        "distractor": f"sbagliata {n}",
    }
    for n in range(3)
]


def study(name: str = "mini", **part_changes: Any) -> dict[str, Any]:
    consistency = job(4, 3)
    consistency.pop("models")
    return {
        "name": name,
        "models": ["steady", "shaky"],
        "parts": [
            {"name": "codes", "protocol": "consistency", "evaluation": consistency},
            {
                "name": "scelte",
                "protocol": "position-bias",
                "position_bias": {
                    "items": ITALIAN,
                    "conditions": ["medium"],
                    "bootstrap": 50,
                    "generator": "writer",
                },
            },
        ],
        **part_changes,
    }


def finished(url: str, study_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = httpx.get(f"{url}/v1/studies/{study_id}", timeout=30).json()
        if status["status"] != "running":
            return dict(status)
        time.sleep(0.2)
    raise AssertionError(f"study {study_id} did not finish")


def run_study(url: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    created = httpx.post(f"{url}/v1/studies", json=body, timeout=60)
    assert created.status_code == 202, created.text
    study_id = created.json()["id"]
    assert created.headers["Location"] == f"/v1/studies/{study_id}"
    return study_id, finished(url, study_id)


def test_a_study_runs_both_protocols_and_reports_them_together(
    tmp_path: Path, port_block: int
) -> None:
    with running_stack(tmp_path, port_block, world=StudyWorld()) as stack:
        url = stack.evaluator
        study_id, status = run_study(url, study())
        assert status["status"] == "succeeded", status
        assert [p["status"] for p in status["parts"]] == ["succeeded", "succeeded"]
        assert status["progress"]["done"] == status["progress"]["total"] > 0

        report = httpx.get(f"{url}/v1/studies/{study_id}/report", timeout=60).json()
        codes, choices = report["parts"]
        steady, shaky = (
            codes["consistency"]["models"]["steady"],
            codes["consistency"]["models"]["shaky"],
        )
        assert steady["A_strict"]["value"] == 1.0 and steady["flip_rate"]["value"] == 0.0
        assert shaky["flip_rate"]["value"] == 1.0  # items 0-3: right only on the original
        assert any(
            "paraphrases verified with" in line for line in codes["consistency"]["verification"]
        )
        medium = choices["position_bias"]["by_condition"]["medium"]
        assert medium["steady"]["PC"]["value"] == 1.0 and medium["shaky"]["PC"]["value"] == 0.0
        assert medium["shaky"]["PF"]["value"] == -1.0  # always the first slot (negative: first)
        assert choices["language"] == "it (3 items)"
        asked = [c for c in stack.upstream.calls if c["model"] in ("steady-model", "shaky-model")]
        italian = [c for c in asked if "Quale di queste" in c["messages"][-1]["content"]]
        assert len(italian) == 3 * 2 * 2  # items × orders × models
        assert all(
            "Rispondi solo con la lettera dell'opzione corretta" in c["messages"][-1]["content"]
            for c in italian
        )

        page = httpx.get(f"{url}/v1/studies/{study_id}/report?format=html", timeout=60)
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "<h1>Study mini</h1>" in page.text and page.text.count("<svg") == 3
        rows = list(csv.DictReader(io.StringIO(
            httpx.get(f"{url}/v1/studies/{study_id}/report?format=csv", timeout=60).text
        )))  # fmt: skip
        pc = [r for r in rows if r["part"] == "scelte" and r["metric"] == "PC"]
        assert {(r["model"], r["condition"], r["value"]) for r in pc} >= {
            ("steady", "medium", "1.0"),
            ("shaky", "medium", "0.0"),
        }

        # the same study again: stored sets, fixed seeds and the gateway's cache answer it all
        calls = stack.upstream.call_count
        again, second = run_study(url, study())
        assert again != study_id and second["status"] == "succeeded"
        assert stack.upstream.call_count == calls

        def set_ids(job_id: str) -> list[str]:
            page = httpx.get(f"{url}/v1/evaluations/{job_id}/items", timeout=30).json()
            return [item["paraphrases"]["set_id"] for item in page["items"]]

        first_sets = set_ids(status["parts"][0]["job_id"])
        assert set_ids(second["parts"][0]["job_id"]) == first_sets  # the stored sets, reused
        assert len(set(first_sets)) == 4
        listed = httpx.get(f"{url}/v1/studies", timeout=30).json()
        assert [s["id"] for s in listed["studies"]] == [again, study_id]


def test_a_study_that_cannot_run_names_the_part(tmp_path: Path, port_block: int) -> None:
    with running_stack(tmp_path, port_block, world=StudyWorld()) as stack:
        url = stack.evaluator
        body = study()
        body["parts"][0]["evaluation"] = {"dataset_id": "no-such-dataset", "k": 2}
        missing = httpx.post(f"{url}/v1/studies", json=body, timeout=60)
        assert missing.status_code == 404, missing.text
        assert missing.json()["errors"][0]["field"] == "parts[0].evaluation.dataset_id"

        body = study()
        body["parts"][1]["protocol"] = "consistency"
        mismatch = httpx.post(f"{url}/v1/studies", json=body, timeout=60)
        assert mismatch.status_code == 400
        assert mismatch.json()["errors"][0]["field"] == "parts[1].evaluation"

        unknown = httpx.post(
            f"{url}/v1/studies", json={**study(), "models": ["nobody"]}, timeout=60
        )
        assert unknown.status_code == 422, unknown.text
        assert httpx.get(f"{url}/v1/studies", timeout=30).json()["total"] == 0  # nothing started
        gone = httpx.get(f"{url}/v1/studies/st-nothing", timeout=30)
        assert gone.status_code == 404


def test_the_command_runs_a_study_file_and_writes_its_reports(
    tmp_path: Path, port_block: int
) -> None:
    import json
    import subprocess
    import sys

    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "codes.jsonl").write_text(
        "\n".join(json.dumps(item) for item in job(3, 2)["items"]) + "\n"
    )
    choices = [
        {"id": f"c{n}", "question": f"Quale è giusta, la {n}?", "options": [f"sbagliata {n}",
         f"giusta {n}"], "correct_option": "B"}
        for n in range(2)
    ]  # fmt: skip
    (folder / "scelte.jsonl").write_text("\n".join(json.dumps(c) for c in choices) + "\n")
    (folder / "study.toml").write_text(
        'name = "from a file"\nmodels = ["steady", "shaky"]\n\n'
        '[[parts]]\nname = "codes"\ndataset = "codes.jsonl"\n'
        '[parts.settings]\nk = 2\ngenerator = "writer"\n'
        'verify = { stages = { lexical = false, semantic = "off" } }\n\n'
        '[[parts]]\nname = "scelte"\nprotocol = "position-bias"\ndataset = "scelte.jsonl"\n'
        'task = "choice"\n[parts.settings]\ngenerator = "writer"\nbootstrap = 20\n'
    )
    with running_stack(tmp_path, port_block, world=StudyWorld()) as stack:
        command = [
            sys.executable, "-m", "steadfast.cli", "study", "run", str(folder / "study.toml"),
            "--url", stack.evaluator, "--html", str(tmp_path / "s.html"),
            "--json", str(tmp_path / "s.json"), "--csv", str(tmp_path / "s.csv"),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "uploaded" in done.stderr and "study st-" in done.stdout
        report = json.loads((tmp_path / "s.json").read_text())
        assert report["status"] == "succeeded"
        codes, scelte = report["parts"]
        assert codes["consistency"]["models"]["steady"]["A_strict"]["value"] == 1.0
        assert scelte["language"] == "it (2 items)"
        assert scelte["position_bias"]["by_condition"]["all"]["steady"]["PC"]["value"] == 1.0
        assert (tmp_path / "s.html").read_text().startswith("<!DOCTYPE html>")
        assert "scelte,position-bias" in (tmp_path / "s.csv").read_text()

        status = subprocess.run(
            [sys.executable, "-m", "steadfast.cli", "study", "status", report["id"],
             "--url", stack.evaluator],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert status.returncode == 0 and status.stdout.startswith("succeeded")


def test_a_study_survives_its_evaluator_being_killed(tmp_path: Path, port_block: int) -> None:
    import os
    import signal

    from steadfast.supervisor import Supervisor

    with running_stack(
        tmp_path, port_block, world=StudyWorld(), latency_s=0.05, concurrency=2
    ) as stack:
        url = stack.evaluator
        body = study("survivor")
        body["parts"][0]["evaluation"] = job(10, 3)
        body["parts"][0]["evaluation"].pop("models")
        created = httpx.post(f"{url}/v1/studies", json=body, timeout=60)
        assert created.status_code == 202, created.text
        study_id = created.json()["id"]
        deadline = time.monotonic() + 60
        while httpx.get(f"{url}/v1/studies/{study_id}", timeout=30).json()["progress"]["done"] < 5:
            assert time.monotonic() < deadline, "the study made no progress"
            time.sleep(0.05)
        evaluator = stack.supervisor.processes[0]
        assert evaluator.name == "evaluator"
        os.kill(evaluator.process.pid, signal.SIGKILL)
        evaluator.process.wait(10)
        answered = [
            c for c in stack.upstream.calls if c["model"] in ("steady-model", "shaky-model")
        ]
        assert len(answered) < 80 + 12  # killed mid-study: answers were still to come

        restarted = Supervisor(
            ports=stack.ports, env=stack.env, services=("evaluator",), log_dir=tmp_path / "logs2"
        )
        with restarted:
            assert all(restarted.wait_ready(60).values())
            status = finished(url, study_id)
            report = httpx.get(f"{url}/v1/studies/{study_id}/report", timeout=60).json()
        assert status["status"] == "succeeded", status
        assert status["progress"]["done"] == status["progress"]["total"]
        codes = report["parts"][0]["consistency"]["models"]
        assert codes["steady"]["A_strict"]["value"] == 1.0  # the same numbers as undisturbed
        assert codes["shaky"]["flip_rate"]["value"] == 1.0
