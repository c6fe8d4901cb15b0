"""Shadow checks on live proxy traffic, as users run them: the official ``openai`` client
against a real gateway process whose route samples every plain completion (``shadow_rate``
1). The caller's answer comes back unchanged; the check runs afterwards; the counters move; the
disagreement is kept for the route that asks for it and read with the admin key only; a full
queue drops and counts; no question text reaches the metrics."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.routes import stand_in_routes
from tests.integration.proxy.test_proxy import Proxy, Scenario

ADMIN_KEY = "admin-secret"


@pytest.fixture(scope="module")
def shadowed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    scenario = Scenario()
    directory = tmp_path_factory.mktemp("shadow")
    with FakeOpenAIServer(responder=scenario.respond, fault_for=scenario.fault) as fake:
        routes = stand_in_routes(fake.url, "watched", "busy", "quiet", timeout_s=10)
        routes = routes.replace(
            "[models.watched]\n", "[models.watched]\nshadow_rate = 1.0\nshadow_store = true\n"
        ).replace("[models.busy]\n", "[models.busy]\nshadow_rate = 1.0\n")
        (directory / "models.toml").write_text(routes)
        ports = service_ports(free_port_block(5))
        supervisor = Supervisor(
            ports=ports,
            env={
                "STEADFAST_DATA_DIR": str(directory),
                "STEADFAST_MODELS_FILE": str(directory / "models.toml"),
                "STEADFAST_GATEWAY_SHADOW_K": "2",
                "STEADFAST_GATEWAY_SHADOW_QUEUE": "1",
                "STEADFAST_GATEWAY_SHADOW_WORKERS": "1",
                "STEADFAST_GATEWAY_ADMIN_KEY": ADMIN_KEY,
            },
            services=("gateway",),
            log_dir=directory / "logs",
        )
        with supervisor:
            assert all(supervisor.wait_ready(90).values())
            yield Proxy(f"http://127.0.0.1:{ports['gateway']}", fake, scenario)


def shadow_counts(proxy: Proxy, route: str) -> dict[str, float]:
    text = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "steadfast_shadow_checks_total" and sample.labels["route"] == route:
                counts[sample.labels["outcome"]] = sample.value
    return counts


def wait_for(proxy: Proxy, route: str, outcome: str, count: float) -> dict[str, float]:
    deadline = time.monotonic() + 30
    counts: dict[str, float] = {}
    while time.monotonic() < deadline:
        counts = shadow_counts(proxy, route)
        if counts.get(outcome, 0) >= count:
            return counts
        time.sleep(0.1)
    raise AssertionError(f"no {outcome} shadow check on {route}: {counts}")


def ask(proxy: Proxy, route: str, question: str) -> str | None:
    completion = proxy.client().chat.completions.create(
        model=route, messages=[{"role": "user", "content": question}]
    )
    return completion.choices[0].message.content


def test_an_answer_its_paraphrases_contradict_is_counted_and_kept(shadowed: Proxy) -> None:
    question = "Which city is the capital of Australia?"
    wordings = ["What is Australia's capital city?", "Australia's capital is which city?"]
    shadowed.scenario.paraphrases[question] = wordings
    shadowed.scenario.answers.update(
        {question: "Sydney", wordings[0]: "Canberra", wordings[1]: "Canberra"}
    )
    assert ask(shadowed, "watched", question) == "Sydney"  # the caller's answer, unchanged
    counts = wait_for(shadowed, "watched", "disagree", 1)
    assert counts.get("agree", 0) == 0

    unauthorised = httpx.get(f"{shadowed.url}/v1/shadow/disagreements", timeout=10)
    assert unauthorised.status_code == 401
    assert unauthorised.json()["errors"][0]["field"] == "Authorization"
    wrong = httpx.get(
        f"{shadowed.url}/v1/shadow/disagreements",
        headers={"Authorization": "Bearer nope"},
        timeout=10,
    )
    assert wrong.status_code == 401
    listed = httpx.get(
        f"{shadowed.url}/v1/shadow/disagreements",
        params={"route": "watched"},
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
        timeout=10,
    )
    assert listed.status_code == 200, listed.text
    [kept] = listed.json()["disagreements"]
    assert (kept["question"], kept["answer"], kept["agreement"]) == (question, "Sydney", 0.0)
    assert [v["answer"] for v in kept["variants"]] == ["Canberra", "Canberra"]
    # the metrics name routes and outcomes, never a question
    assert "Australia" not in httpx.get(f"{shadowed.url}/metrics", timeout=10).text


def test_paraphrases_answered_alike_agree_and_a_route_without_a_rate_is_not_checked(
    shadowed: Proxy,
) -> None:
    question = "What is the chemical symbol for gold?"
    wordings = ["Gold's chemical symbol is what?", "Which symbol stands for gold in chemistry?"]
    shadowed.scenario.paraphrases[question] = wordings
    shadowed.scenario.answers.update({q: "Au" for q in (question, *wordings)})
    before = shadow_counts(shadowed, "watched").get("agree", 0)
    assert ask(shadowed, "watched", question) == "Au"
    wait_for(shadowed, "watched", "agree", before + 1)
    calls = shadowed.fake.call_count
    assert ask(shadowed, "quiet", question) == "Au"
    time.sleep(0.5)
    assert shadowed.fake.call_count == calls + 1 and shadow_counts(shadowed, "quiet") == {}


def test_a_full_queue_drops_and_counts_and_never_delays_the_callers(shadowed: Proxy) -> None:
    question = "Name the largest planet of the solar system."
    wordings = ["Which planet in the solar system is the largest?"]
    shadowed.scenario.paraphrases[question] = wordings
    shadowed.scenario.answers.update({question: "Jupiter", wordings[0]: "Jupiter"})
    shadowed.scenario.slow[wordings[0]] = 2.0  # every check holds the one worker for 2 s
    started = time.monotonic()
    answers = [ask(shadowed, "busy", question) for _ in range(5)]
    assert answers == ["Jupiter"] * 5
    assert time.monotonic() - started < 2.0  # no caller waited for a check
    # one check running, one waiting (the queue holds one): the others were dropped
    counts = wait_for(shadowed, "busy", "dropped", 3)
    deadline = time.monotonic() + 30
    while counts.get("agree", 0) + counts["dropped"] < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
        counts = shadow_counts(shadowed, "busy")
    assert counts.get("agree", 0) + counts["dropped"] == 5 and counts["dropped"] >= 3
