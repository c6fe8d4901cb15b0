"""The five real services in front of the stand-in OpenAI-compatible model server.

The stand-in plays three roles, told apart by the prompt: the paraphraser (returns a distinct
rewording "Rephrased <letters>: <question>", lettered so that it adds no number the quantity check
would reject), the judge (always YES) and the models under test. The
questions are "Item i: what is the code word for item i?" with gold answer "alpha-i"; how each
model answers is fixed per item (see :func:`answer`), so every metric can be computed by hand.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from steadfast.services.evaluator.domain.prompts import FACTUAL_INSTRUCTION
from steadfast.services.verify.domain.prompts import ANSWER_FIT
from steadfast.supervisor import Supervisor, readiness, service_ports
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.routes import BROKEN_ROUTE, stand_in_routes

ITEM = re.compile(r"Item (\d+):")
REWRITE = re.compile(r"Question(?: to rewrite)?:\s*([^\n]*)")
YES = Reply(text="YES", top_logprobs=[("YES", -0.01), ("NO", -5.0)])


def stack_routes(url: str, concurrency: int) -> str:
    """Models under test ``steady``, ``shaky`` and ``broken``; ``writer`` paraphrases."""
    routes = stand_in_routes(url, "steady", "shaky", concurrency=concurrency)
    return routes + BROKEN_ROUTE + "\n" + stand_in_routes(url, "writer", concurrency=concurrency)


def items(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"item-{i}",
            "question": f"Item {i}: what is the code word for item {i}?",
            "answers": [f"alpha-{i}"],
        }
        for i in range(n)
    ]


def answer(model: str, item: int, paraphrased: bool) -> str:
    """steady: always right. shaky, by item: 0-4 right only on the original; 5-9 right only on
    paraphrases; 10-14 always right; 15-19 always wrong."""
    right, wrong = f"alpha-{item}", "omega"
    if model == "steady-model":
        return right
    band = item // 5
    if band == 0:
        return wrong if paraphrased else right
    if band == 1:
        return right if paraphrased else wrong
    return right if band == 2 else wrong


def lettered(n: int) -> str:
    """1 → "a", 26 → "z", 27 → "ba": a distinct tag that is no number."""
    letters = ""
    while True:
        n, digit = divmod(n - 1, 26)
        letters = chr(ord("a") + digit) + letters
        if n == 0:
            return letters


class TinyWorld:
    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._lock = threading.Lock()

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
        if "paraphrase" in system.lower() or "rewrit" in system.lower():
            match = REWRITE.search(user)
            question = match.group(1).strip() if match else user
            with self._lock:
                return f"Rephrased {lettered(next(self._counter))}: {question}"
        match = ITEM.search(user)
        if match is None:
            return "unknown"
        return answer(body["model"], int(match.group(1)), "Rephrased " in user)


def is_answer_call(body: dict[str, Any]) -> bool:
    first = body["messages"][0]
    return first["role"] == "user" and first["content"].startswith(FACTUAL_INSTRUCTION)


@dataclass
class Stack:
    urls: dict[str, str]
    upstream: FakeOpenAIServer
    ports: dict[str, int]
    env: dict[str, str]
    supervisor: Supervisor
    tmp: Path

    @property
    def evaluator(self) -> str:
        return self.urls["evaluator"]

    def answer_calls(self) -> list[dict[str, Any]]:
        return [body for body in self.upstream.calls if is_answer_call(body)]

    def kill_9_and_restart(self, name: str, timeout_s: float = 60.0) -> None:
        """``kill -9`` of service ``name``; the supervisor then starts it again as ``steadfast up``
        does (after its back-off) and this returns once the new process is ready."""
        supervisor = self.supervisor
        (killed,) = (proc for proc in supervisor.processes if proc.name == name)
        os.kill(killed.process.pid, signal.SIGKILL)
        assert killed.process.wait(10) == -signal.SIGKILL
        deadline = time.monotonic() + timeout_s
        while not any(proc.name == name for proc in supervisor.restart_crashed()):
            assert time.monotonic() < deadline, f"{name} was not restarted"
            time.sleep(0.1)
        while not readiness(self.urls[name], timeout_s=1.0)[0]:
            assert time.monotonic() < deadline, f"{name} did not become ready again"
            time.sleep(0.1)


def stack_env(tmp: Path, routes: Path, database_url: str | None) -> dict[str, str]:
    env = {
        "STEADFAST_DATA_DIR": str(tmp / "data"),
        "STEADFAST_MODELS_FILE": str(routes),
        "STEADFAST_VERIFY_DEFAULT_JUDGE_MODEL": "writer",
        "STEADFAST_EVALUATOR_LEASE_S": "3",
        "STEADFAST_EVALUATOR_POLL_S": "0.2",
        "STEADFAST_EVALUATOR_RETRY_BASE_S": "0.1",
        "STEADFAST_LOG_LEVEL": "WARNING",
    }
    if database_url and not database_url.startswith("sqlite"):
        env["DATABASE_URL"] = database_url
    return env


@contextmanager
def running_stack(
    tmp: Path,
    base_port: int,
    database_url: str | None = None,
    *,
    latency_s: float = 0.0,
    latency_spread: float = 0.0,
    concurrency: int = 16,
    extra_routes: str = "",
    extra_env: dict[str, str] | None = None,
    world: Callable[[dict[str, Any]], Reply | str] | None = None,
) -> Iterator[Stack]:
    with FakeOpenAIServer(
        responder=world or TinyWorld(), latency_s=latency_s, latency_spread=latency_spread
    ) as upstream:
        routes = tmp / "models.toml"
        extra = extra_routes.format(url=upstream.url, concurrency=concurrency)
        routes.write_text(stack_routes(upstream.url, concurrency) + extra)
        ports = service_ports(base_port)
        env = {**stack_env(tmp, routes, database_url), **(extra_env or {})}
        supervisor = Supervisor(ports=ports, env=env, log_dir=tmp / "logs")
        with supervisor:
            ready = supervisor.wait_ready(120)
            assert all(ready.values()), ready
            urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
            yield Stack(urls, upstream, ports, env, supervisor, tmp)


def job(n: int = 20, k: int = 5, **extra: Any) -> dict[str, Any]:
    return {
        "models": ["steady", "shaky"],
        "k": k,
        "generator": "writer",
        "items": items(n),
        # the stand-in's rewordings differ only by their prefix: the lexical filter would reject
        # them, and the embedding check is verify's to test, not the evaluator's
        "verify": {"stages": {"lexical": False, "judge": True, "semantic": "off"}},
        "metrics": {"bootstrap": 50},
        **extra,
    }


#: one client for all polling: ``httpx.get`` builds a TLS context per call (tens of ms of CPU,
#: holding the GIL that the in-process stand-in upstream needs)
POLLING = httpx.Client(timeout=10)


def wait_finished(
    url: str,
    job_id: str,
    timeout_s: float = 180.0,
    interval: Callable[[float], float] = lambda _elapsed: 0.2,
) -> dict[str, Any]:
    """Poll until the job ends; ``interval(seconds waited so far)`` sets the pause between polls."""
    started = time.monotonic()
    status: dict[str, Any] = {}
    while time.monotonic() - started < timeout_s:
        status = POLLING.get(f"{url}/v1/evaluations/{job_id}").json()
        if status["status"] not in ("queued", "running"):
            return status
        time.sleep(interval(time.monotonic() - started))
    raise AssertionError(f"evaluation {job_id} did not finish: {status}")


def wait_progress(
    url: str, job_id: str, answered: int, timeout_s: float = 120.0, stage: str = "answer"
) -> dict[str, Any]:
    """Poll until ``answered`` units of ``stage`` (answer, paraphrase, grade) are done; the
    job's status then."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status: dict[str, Any] = POLLING.get(f"{url}/v1/evaluations/{job_id}").json()
        if status["progress"][stage]["done"] >= answered:
            return status
        assert status["status"] in ("queued", "running"), status
        time.sleep(0.05)
    raise AssertionError(f"evaluation {job_id} made no progress")


def metric_total(url: str, name: str, label: str = "") -> int:
    """The sum of a Prometheus counter of ``url``'s process over its series whose labels
    contain ``label`` (``outcome="answered"``, ``path="/v1/``)."""
    total = 0.0
    for line in POLLING.get(f"{url}/metrics").text.splitlines():
        if line.startswith(name + "{") and label in line:
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


def answers_stored(url: str) -> int:
    """Answers the evaluator process at ``url`` stored since it started."""
    return metric_total(url, "steadfast_evaluation_answers_total", 'outcome="answered"')


def api_requests_served(url: str) -> int:
    """Requests to the ``/v1`` API the process at ``url`` answered since it started (not the
    probes)."""
    return metric_total(url, "steadfast_http_requests_total", 'path="/v1')
