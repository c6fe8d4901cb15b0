"""A self-paraphrase strategy evaluated like any model: the five real services in front of a
stand-in model whose answer depends on the question's wording.

The stand-in gets every item wrong when asked in the evaluator's original wording and right in
any rewording (the evaluator's paraphrases "Rephrased <letters>: ..." and the strategy's own
"Reworded <letter>: ..."), so the plain route flips between wordings while ``paraphrase-vote``
outvotes the original wording and is right and consistent everywhere."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from steadfast.services.verify.domain.prompts import ANSWER_FIT
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.e2e.stack import YES, items, lettered, stack_env, wait_finished
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.routes import stand_in_routes

ITEM = re.compile(r"Item (\d+):")
REWRITE = re.compile(r"Question(?: to rewrite)?:\s*([^\n]*)")
PLAIN, VOTE = "fake", "paraphrase-vote:fake"
N, K = 3, 2


class WordingWorld:
    """Judge (always YES), the evaluator's paraphraser, the strategy's paraphraser (five
    rewordings) and the model under test (right only on a reworded question: ``right(item)``,
    else ``wrong``). Every question the model under test was asked is kept in ``answered``."""

    def __init__(
        self, right: Callable[[str], str] = lambda item: f"alpha-{item}", wrong: str = "omega"
    ) -> None:
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self.right, self.wrong = right, wrong
        self.answered: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        user = messages[-1]["content"]
        if "<question_a>" in system or "<question_a>" in user:
            return YES
        if system.startswith("You compare two answers"):  # the answer-equivalence judge
            return "NO"
        if system == ANSWER_FIT.system:  # the audit's answer check: every answer fits
            return YES
        match = ITEM.search(user)
        item = match.group(1) if match else "?"
        question = f"Item {item}: what is the code word for item {item}?"
        if system.startswith("You write paraphrases"):  # the strategy's own paraphrases
            # lettered: a paraphrase that adds a number is left out of the vote
            return "\n".join(f"{j}. Reworded {c}: {question}" for j, c in enumerate("abcde", 1))
        if "paraphrase" in system.lower() or "rewrit" in system.lower():
            found = REWRITE.search(user)
            with self._lock:
                tag = lettered(next(self._counter))
                return f"Rephrased {tag}: {found.group(1) if found else user}"
        if match is None:
            return "unknown"
        with self._lock:
            self.answered.append(user)
        reworded = "Rephrased " in user or "Reworded " in user
        return self.right(item) if reworded else self.wrong


def job(models: list[str]) -> dict[str, Any]:
    return {
        "models": models,
        "k": K,
        "generator": "writer",
        "items": items(N),
        "verify": {"stages": {"lexical": False, "judge": True, "semantic": "off"}},
        "metrics": {"bootstrap": 20},
    }


def submit(url: str, body: dict[str, Any]) -> str:
    response = httpx.post(f"{url}/v1/evaluations", json=body, timeout=30)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def report_metrics(url: str, job_id: str) -> dict[str, dict[str, Any]]:
    response = httpx.get(f"{url}/v1/evaluations/{job_id}/report", timeout=60)
    assert response.status_code == 200, response.text
    return {
        summary["model"]: {name: value["value"] for name, value in summary["metrics"].items()}
        for summary in response.json()["models"]
    }


@contextmanager
def evaluator_over(world: WordingWorld, tmp_path: Path) -> Iterator[str]:
    """The five services in front of ``world``; yields the evaluator's URL."""
    with FakeOpenAIServer(responder=world) as upstream:
        routes = tmp_path / "models.toml"
        routes.write_text(stand_in_routes(upstream.url, "fake", "writer"))
        ports = service_ports(free_port_block(5))
        env = stack_env(tmp_path, routes, None)
        with Supervisor(ports=ports, env=env, log_dir=tmp_path / "logs") as supervisor:
            ready = supervisor.wait_ready(120)
            assert all(ready.values()), ready
            yield f"http://127.0.0.1:{ports['evaluator']}"


def test_a_strategy_model_is_evaluated_like_any_model(tmp_path: Path) -> None:
    world = WordingWorld()
    with evaluator_over(world, tmp_path) as url:
        # the plain route alone first, in the layout the second job resolves to: its answers
        # are stored for reuse (by the plain route only)
        first = submit(url, {**job([PLAIN]), "instruction_role": "system"})
        assert wait_finished(url, first)["status"] == "succeeded"
        asked_alone = len(world.answered)

        second = submit(url, job([PLAIN, VOTE]))
        status = wait_finished(url, second)
        assert status["status"] == "succeeded", status
        assert status["models"] == [PLAIN, VOTE]
        assert status["progress"]["answer"]["done"] == 2 * N * (1 + K)

        metrics = report_metrics(url, second)
        assert set(metrics) == {PLAIN, VOTE}
        # the plain route: wrong on every original wording, right on every paraphrase
        assert metrics[PLAIN]["A_orig"] == 0.0
        assert metrics[PLAIN]["mismatch_rate"] == pytest.approx(1.0)
        # the strategy outvotes the original wording (its answers are its own, never the
        # plain route's stored ones): right and consistent everywhere
        assert metrics[VOTE]["A_orig"] == pytest.approx(1.0)
        assert metrics[VOTE]["mismatch_rate"] == 0.0
        assert metrics[VOTE]["flip_rate"] == 0.0

        # unset, the layout a strategy model needs: the instruction in the system message
        report = httpx.get(f"{url}/v1/evaluations/{second}/report", timeout=60).json()
        assert report["settings"]["instruction_role"] == "system"
        assert len(world.answered) > asked_alone
        assert all("\n" not in question for question in world.answered)

        items_page = httpx.get(f"{url}/v1/evaluations/{second}/items", timeout=30).json()
        first_item = items_page["items"][0]
        assert [entry["model"] for entry in first_item["models"]] == [PLAIN, VOTE]


def test_a_strategy_model_on_a_choice_task_keeps_every_variants_options(tmp_path: Path) -> None:
    world = WordingWorld(right=lambda _item: "A", wrong="B")
    choice_items = [
        {**item, "options": [f"alpha-{i}", "omega"], "correct_option": "A"}
        for i, item in enumerate(items(N))
    ]
    body = {**job([VOTE]), "items": choice_items, "task": "choice", "instruction_role": "system"}
    with evaluator_over(world, tmp_path) as url:
        status = wait_finished(url, submit(url, body))
        assert status["status"] == "succeeded", status
        metrics = report_metrics(url, status["id"])
    # every wording the strategy asked, its own rewordings included, ends in the options as set
    # (the stand-in writes the same five rewordings for every variant of an item)
    asked = {question for question in world.answered if "Reworded " in question}
    assert len(asked) == N * 5
    for question in world.answered:
        item = ITEM.search(question)
        assert item is not None and question.endswith(f"\nA. alpha-{item.group(1)}\nB. omega")
    # the rewordings outvote the original wording on every variant of every item
    assert metrics[VOTE]["A_orig"] == pytest.approx(1.0)
    assert metrics[VOTE]["flip_rate"] == 0.0


def test_a_strategy_model_answers_a_choice_task_with_the_letter_its_model_wrote_out(
    tmp_path: Path,
) -> None:
    # the stand-in names the right option with its text in every wording: graded strictly,
    # the plain route's reply is no option letter; the strategy reads it and answers "A"
    world = WordingWorld(right=lambda _item: "A. the first option", wrong="A. the first option")
    choice_items = [
        {**item, "options": ["the first option", "omega"], "correct_option": "A"}
        for item in items(N)
    ]
    body = {**job([PLAIN, VOTE]), "items": choice_items, "task": "choice"}
    with evaluator_over(world, tmp_path) as url:
        status = wait_finished(url, submit(url, body))
        assert status["status"] == "succeeded", status
        metrics = report_metrics(url, status["id"])
    # every plain reply is invalid, so no item is scored at all
    assert metrics[PLAIN]["A_orig"] is None
    assert metrics[VOTE]["A_orig"] == pytest.approx(1.0)
    assert metrics[VOTE]["A_strict"] == pytest.approx(1.0)
