"""``steadfast evaluate`` and ``steadfast report`` against the five real services."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from steadfast.supervisor import readiness
from tests.e2e.stack import TinyWorld, items, running_stack, stack_env, stack_routes
from tests.fakes.openai_server import FakeOpenAIServer


def steadfast(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "steadfast.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_evaluate_file_then_report(tmp_path: Path, port_block: int) -> None:
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("\n".join(json.dumps(item) for item in items(6)) + "\n")
    with running_stack(tmp_path, port_block) as stack:
        env = {**stack.env, "PATH": "/usr/bin:/bin"}
        ports = ["--base-port", str(port_block)]
        done = steadfast(
            "evaluate",
            str(dataset),
            "--model",
            "steady",
            "--model",
            "shaky",
            "--k",
            "2",
            "--generator",
            "writer",
            "--no-lexical",
            "--semantic",
            "off",
            "--wait",
            "--html",
            str(tmp_path / "report.html"),
            *ports,
            env=env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        out = done.stdout
        assert "uploaded" in out and "6 items" in out
        assert "succeeded" in out and "A_strict" in out
        # shaky: items 0-4 right only on the original, item 5 right only on paraphrases
        shaky = next(line for line in out.splitlines() if line.startswith("shaky"))
        assert "83.3% (n=6)" in shaky  # A_orig: items 0-4 of 6
        assert (tmp_path / "report.html").read_text().lstrip().lower().startswith("<!doctype html")
        evaluation_id = out.split("evaluation ", 1)[1].split()[0]

        report = steadfast(
            "report", evaluation_id, "--csv", str(tmp_path / "r.csv"), *ports, env=env
        )
        assert report.returncode == 0, report.stderr
        assert evaluation_id in report.stdout and "steady" in report.stdout
        assert "item-5" in (tmp_path / "r.csv").read_text()

        missing = steadfast("report", "nope", *ports, env=env)
        assert missing.returncode == 1 and "404" in missing.stderr

        # a CI job gating a model on its reliability: the whole result as JSON, exit code 3
        # when a threshold is missed (shaky's A_orig is 5 of 6, it flips on every item it had
        # right; its A_any, 1 of 6, meets the 0.1 asked)
        gate = [str(dataset), "--model", "shaky", "--k", "2", "--generator", "writer",
                "--no-lexical", "--semantic", "off", "--seed", "3", *ports]  # fmt: skip
        result = tmp_path / "result.json"
        missed = steadfast(
            "evaluate", *gate, "--json", str(result), "--fail-under", "a_orig=0.9",
            "--fail-over", "flip_rate=0.5", "--fail-under", "A_any=0.1", env=env,
        )  # fmt: skip
        assert missed.returncode == 3, missed.stdout + missed.stderr
        assert "threshold missed: shaky: A_orig 0.833 is below 0.9" in missed.stderr
        assert "threshold missed: shaky: flip_rate 1.000 is above 0.5" in missed.stderr
        assert "A_any" not in missed.stderr  # that one was met
        written = json.loads(result.read_text())
        assert written["status"] == "succeeded" and written["settings"]["seed"] == 3
        assert [m["model"] for m in written["models"]] == ["shaky"]
        met = steadfast("evaluate", *gate, "--fail-under", "A_orig=0.8", env=env)
        assert met.returncode == 0, met.stdout + met.stderr
        wrong = steadfast("evaluate", *gate, "--fail-under", "accuracy=0.8", env=env)
        assert wrong.returncode != 0 and "metric one of A_orig" in wrong.stderr


def test_evaluate_starts_and_stops_the_services_when_none_run(
    tmp_path: Path, port_block: int
) -> None:
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("\n".join(json.dumps(item) for item in items(2)) + "\n")
    with FakeOpenAIServer(responder=TinyWorld()) as upstream:
        routes = tmp_path / "models.toml"
        routes.write_text(stack_routes(upstream.url, concurrency=8))
        env = {**os.environ, **stack_env(tmp_path, routes, None)}
        done = steadfast(
            "evaluate",
            str(dataset),
            "--model",
            "steady",
            "--k",
            "2",
            "--generator",
            "writer",
            "--no-lexical",
            "--semantic",
            "off",
            "--base-port",
            str(port_block),
            env=env,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "starting the services" in done.stdout and "stopping the services" in done.stdout
    assert "succeeded" in done.stdout and "100.0% (n=2)" in done.stdout
    assert not readiness(f"http://127.0.0.1:{port_block}", timeout_s=1.0)[0]
