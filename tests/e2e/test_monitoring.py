"""A monitor through the five real services and the CLI: a stand-in model whose answers change
between two runs shows both runs in the series with different A_orig, the evaluator's gauge
shows the latest, and every answer of the second run reached the model (none from a cache)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.stack import TinyWorld, is_answer_call, items, running_stack
from tests.e2e.test_cli import steadfast
from tests.fakes.openai_server import Reply

ITEMS, K = 4, 2


class SwappedModel(TinyWorld):
    """The world of the stack, where ``steady`` turns wrong once ``swapped``: a provider's
    model changed behind its name."""

    swapped = False

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        if self.swapped and body["model"] == "steady-model" and is_answer_call(body):
            return "omega"
        return super().__call__(body)


def wait_runs(url: str, monitor_id: str, count: int) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    monitor: dict[str, Any] = {}
    while time.monotonic() < deadline:
        monitor = httpx.get(f"{url}/v1/monitors/{monitor_id}", timeout=10).json()
        last = monitor["last_run"]
        if monitor["runs"] >= count and last and last["status"] != "running":
            return monitor
        time.sleep(0.2)
    raise AssertionError(f"monitor did not reach {count} runs: {monitor}")


def gauge(url: str, metric: str) -> float | None:
    """The evaluator's exported value of ``metric`` for model steady in monitor nightly."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    wanted = {"monitor": "nightly", "model": "steady", "metric": metric}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "steadfast_monitor_value" and sample.labels == wanted:
                return float(sample.value)
    return None


def test_a_monitor_shows_a_model_that_changed_between_runs(tmp_path: Path, port_block: int) -> None:
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("\n".join(json.dumps(item) for item in items(ITEMS)) + "\n")
    world = SwappedModel()
    extra = {"STEADFAST_EVALUATOR_MONITOR_POLL_S": "0.2"}
    with running_stack(tmp_path, port_block, world=world, extra_env=extra) as stack:
        env = {**stack.env, "PATH": "/usr/bin:/bin"}
        where = ["--base-port", str(port_block)]
        created = steadfast(
            "monitor", "create", "nightly", str(dataset), "--model", "steady",
            "--interval", "3600", "--k", str(K), "--generator", "writer", "--no-lexical",
            "--semantic", "off", *where, env=env,
        )  # fmt: skip
        assert created.returncode == 0, created.stdout + created.stderr
        monitor_id = re.search(r"\((mon-\w+)\)", created.stdout).group(1)  # type: ignore[union-attr]
        first = wait_runs(stack.evaluator, monitor_id, 1)
        assert first["last_run"]["status"] == "succeeded", first
        assert gauge(stack.evaluator, "a_orig") == 1.0

        world.swapped = True
        answered = len(stack.answer_calls())
        ran = steadfast("monitor", "run", "nightly", *where, env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        second = wait_runs(stack.evaluator, monitor_id, 2)
        assert second["last_run"]["status"] == "succeeded", second
        # every wording of every item went to the model again: nothing from a cache
        assert len(stack.answer_calls()) - answered == ITEMS * (1 + K)
        assert second["last_values"]["steady"]["a_orig"]["value"] == 0.0
        assert gauge(stack.evaluator, "a_orig") == 0.0

        series = steadfast(
            "monitor", "series", "nightly", "--model", "steady", "--metric", "a_orig", *where,
            env=env,
        )  # fmt: skip
        assert series.returncode == 0, series.stdout + series.stderr
        values = re.findall(r" (\d\.\d{3}) ", series.stdout)
        assert values[:2] == ["1.000", "0.000"], series.stdout
        shown = steadfast("monitor", "show", "nightly", *where, env=env)
        assert "runs: 2" in shown.stdout and "a_orig 0.000" in shown.stdout, shown.stdout
        listed = steadfast("monitor", "list", *where, env=env)
        assert "nightly" in listed.stdout and "succeeded" in listed.stdout
        paused = steadfast("monitor", "pause", "nightly", *where, env=env)
        assert paused.returncode == 0 and "paused" in paused.stdout
        deleted = steadfast("monitor", "delete", "nightly", *where, env=env)
        assert deleted.returncode == 0, deleted.stderr
        missing = steadfast("monitor", "show", "nightly", *where, env=env)
        assert missing.returncode != 0 and "no monitor 'nightly'" in missing.stderr
