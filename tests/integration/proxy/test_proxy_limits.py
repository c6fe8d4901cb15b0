"""Limits per API key on the gateway (#28 item 4), over real HTTP with the official openai
client: over the requests per minute or the token budget the proxy answers 429 in OpenAI's shape
(the SDK raises ``RateLimitError``) with Retry-After; the budget is checked before any upstream
call; a strategy's extra calls count against the caller; the evaluator's usage endpoint shows
what the gateway counted; limits changed with ``PATCH /v1/keys/{id}`` apply within the key
cache; the evaluator's API (keys asked for too) refuses calls over the requests per minute; no
key id is a label of the metrics."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest

from steadfast.supervisor import AUTH_VARIABLE, Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.routes import BROKEN_ROUTE, stand_in_routes
from tests.integration.proxy.test_proxy_keys import (
    KeyedGateway,
    answer_or_reword,
    created_key,
)

TOKEN = "proxy-limits-internal-token"
KEY_CACHE_S = 0.5


@dataclass
class LimitedStack:
    gateway: KeyedGateway
    evaluator: str
    fake: FakeOpenAIServer
    #: the headers of an ``admin`` key (the evaluator asks for keys too)
    admin: dict[str, str]

    def usage(self, key_id: str) -> dict[str, Any]:
        url = f"{self.evaluator}/v1/keys/{key_id}/usage"
        response = httpx.get(url, headers=self.admin, timeout=30)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def patch(self, key_id: str, limits: dict[str, Any]) -> httpx.Response:
        url = f"{self.evaluator}/v1/keys/{key_id}"
        return httpx.patch(url, json=limits, headers=self.admin, timeout=30)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LimitedStack]:
    directory = tmp_path_factory.mktemp("limited")
    with FakeOpenAIServer(responder=answer_or_reword) as fake:
        routes = directory / "models.toml"
        routes.write_text(stand_in_routes(fake.url, "fake", timeout_s=10) + BROKEN_ROUTE)
        ports = service_ports(free_port_block(5))
        env = {
            "STEADFAST_DATA_DIR": str(directory),
            "STEADFAST_MODELS_FILE": str(routes),
            "STEADFAST_GATEWAY_AUTH": "keys",
            "STEADFAST_GATEWAY_KEY_CACHE_S": str(KEY_CACHE_S),
            "STEADFAST_INTERNAL_TOKEN": TOKEN,
            AUTH_VARIABLE: "keys",  # the evaluator's API asks for keys too
        }
        services = ("evaluator", "gateway", "perturb", "verify")
        with Supervisor(ports=ports, env=env, services=services) as supervisor:
            assert all(supervisor.wait_ready(90).values())
            gateway = KeyedGateway(f"http://127.0.0.1:{ports['gateway']}", directory)
            _, admin = created_key(gateway, "operator", "--scope", "admin")
            evaluator = f"http://127.0.0.1:{ports['evaluator']}"
            yield LimitedStack(gateway, evaluator, fake, {"Authorization": f"Bearer {admin}"})


def ask(client: openai.OpenAI, model: str = "fake", **extra: Any) -> Any:
    """A question never asked before (the response cache answers none of them)."""
    question = f"What is the capital of France? ({uuid.uuid4().hex[:8]})"
    return client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], **extra
    )


def test_requests_over_the_rpm_raise_the_sdk_s_rate_limit_error_with_retry_after(
    stack: LimitedStack,
) -> None:
    _, key = created_key(stack.gateway, "rpm-2", "--rpm", "2")
    client = stack.gateway.client(key)
    assert ask(client).choices[0].message.content == "Paris"
    assert client.models.list().data  # every endpoint for callers counts
    with pytest.raises(openai.RateLimitError) as refused:
        ask(client)
    assert 1 <= int(refused.value.response.headers["retry-after"]) <= 60
    body = refused.value.body
    assert isinstance(body, dict) and body["code"] == "rate_limit_exceeded", body
    assert "2 requests per minute" in body["message"]
    # the gateway's own endpoints answer problem details, naming the limit
    answer = httpx.post(
        f"{stack.gateway.url}/v1/self-paraphrase",
        json={"model": "fake", "question": "Capital of France?", "strategy": "single-prompt"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert answer.status_code == 429 and answer.json()["limit"] == "rpm", answer.text
    assert int(answer.headers["retry-after"]) >= 1


def test_the_evaluator_s_api_refuses_calls_over_the_rpm_each_service_counting_its_own(
    stack: LimitedStack,
) -> None:
    key_id, key = created_key(stack.gateway, "both", "--rpm", "2")
    headers = {"Authorization": f"Bearer {key}"}
    evaluations = f"{stack.evaluator}/v1/evaluations"
    for _ in range(2):
        assert httpx.get(evaluations, headers=headers, timeout=30).status_code == 200
    refused = httpx.get(evaluations, headers=headers, timeout=30)
    assert refused.status_code == 429 and refused.json()["limit"] == "rpm", refused.text
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    # requests per minute are counted in each process (docs/operations.md): the gateway's own
    ask(stack.gateway.client(key))
    usage = wait_for_usage(stack, key_id, lambda day: day["requests"] >= 3)
    assert usage["day"]["requests"] == 3  # both services' requests, the refused one not


def test_a_spent_token_budget_is_refused_before_any_upstream_call(stack: LimitedStack) -> None:
    key_id, key = created_key(
        stack.gateway, "budget", "--token-budget", "5", "--budget-period", "day"
    )
    client = stack.gateway.client(key)
    first = ask(client)
    assert first.usage is not None and first.usage.total_tokens >= 5
    calls = stack.fake.call_count
    with pytest.raises(openai.RateLimitError) as refused:
        ask(client)
    assert stack.fake.call_count == calls  # no upstream call
    headers = refused.value.response.headers
    assert 1 <= int(headers["retry-after"]) <= 86400 and headers["x-should-retry"] == "false"
    body = refused.value.body
    assert isinstance(body, dict) and body["code"] == "insufficient_quota", body
    assert body["type"] == "insufficient_quota"
    streamed = httpx.post(
        f"{stack.gateway.url}/v1/chat/completions",
        json={"model": "fake", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert streamed.status_code == 429 and stack.fake.call_count == calls
    usage = wait_for_usage(stack, key_id, lambda day: day["calls"] >= 1)
    assert usage["day"]["budget_left"] == 0
    assert usage["limits"]["token_budget"] == 5 and usage["limits"]["budget_period"] == "day"


def wait_for_usage(stack: LimitedStack, key_id: str, done: Any) -> dict[str, Any]:
    """The key's usage once the gateway has written it (every second)."""
    deadline = time.monotonic() + 10
    while True:
        usage = stack.usage(key_id)
        if done(usage["day"]) or time.monotonic() > deadline:
            return usage
        time.sleep(0.2)


def test_a_strategy_s_extra_calls_count_against_the_caller(stack: LimitedStack) -> None:
    key_id, key = created_key(stack.gateway, "voter")
    completion = ask(
        stack.gateway.client(key), "paraphrase-vote:fake", extra_body={"steadfast": {"k": 2}}
    )
    assert completion.usage is not None
    tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert info["calls"] >= 2, info  # the rewording and the answers: more than one call
    usage = wait_for_usage(stack, key_id, lambda day: day["input_tokens"] > 0)
    for period in ("day", "month"):
        counted = usage[period]
        assert counted["requests"] == 1
        assert counted["calls"] == info["calls"], (counted, info)
        assert counted["input_tokens"] + counted["output_tokens"] == tokens, (counted, tokens)
        assert counted["input_tokens"] == completion.usage.prompt_tokens


def test_the_calls_of_a_failed_request_count_too(stack: LimitedStack) -> None:
    key_id, key = created_key(stack.gateway, "unlucky")
    client = stack.gateway.client(key)
    for model in ("broken", "single-prompt:broken"):
        with pytest.raises(openai.APIStatusError) as failed:
            ask(client, model)
        assert failed.value.status_code == 503, failed.value
    usage = wait_for_usage(stack, key_id, lambda day: day["calls"] >= 2)
    assert usage["day"]["requests"] == 2 and usage["day"]["calls"] >= 2, usage
    assert usage["day"]["input_tokens"] == 0  # none reported


def test_generate_counts_every_call_a_strategy_made_and_a_failed_request_s(
    stack: LimitedStack,
) -> None:
    """``/v1/generate`` (and its batch) keeps the same books as the proxy: a strategy's calls
    are the caller's, one by one, and so is the call of a request that failed."""
    key_id, key = created_key(stack.gateway, "generator")
    headers = {"Authorization": f"Bearer {key}"}
    asked = [{"role": "user", "content": "What is the capital of France?"}]
    url = f"{stack.gateway.url}/v1/generate"
    voted = httpx.post(url, json={"model": "paraphrase-vote:fake", "messages": asked},
                       headers=headers, timeout=120)  # fmt: skip
    assert voted.status_code == 200, voted.text
    broken = httpx.post(url, json={"model": "broken", "messages": asked}, headers=headers,
                        timeout=120)  # fmt: skip
    assert broken.status_code == 503, broken.text
    batch = httpx.post(
        f"{url}/batch",
        json={"requests": [{"model": "fake", "messages": asked}] * 2},
        headers=headers,
        timeout=120,
    )
    assert batch.status_code == 200, batch.text
    usage = wait_for_usage(stack, key_id, lambda day: day["requests"] == 3 and day["calls"] > 4)
    # the vote: a rewording call and at least two answers; the broken route: one; the batch: two
    assert usage["day"]["calls"] >= 3 + 1 + 2, usage


def test_limits_changed_with_patch_apply_within_the_key_cache(stack: LimitedStack) -> None:
    key_id, key = created_key(stack.gateway, "patched")
    client = stack.gateway.client(key)
    for _ in range(3):
        ask(client)
    changed = stack.patch(key_id, {"rpm": 1})
    assert changed.status_code == 200 and changed.json()["limits"]["rpm"] == 1, changed.text
    time.sleep(KEY_CACHE_S + 0.2)
    ask(client)
    with pytest.raises(openai.RateLimitError):
        ask(client)
    assert stack.patch(key_id, {"rpm": None}).status_code == 200
    time.sleep(KEY_CACHE_S + 0.2)
    ask(client)


def test_the_metrics_count_refusals_by_limit_never_by_key(stack: LimitedStack) -> None:
    key_id, key = created_key(stack.gateway, "counted", "--rpm", "1")
    ask(stack.gateway.client(key))
    with pytest.raises(openai.RateLimitError):
        ask(stack.gateway.client(key))
    metrics = httpx.get(f"{stack.gateway.url}/metrics", timeout=30).text
    assert 'steadfast_key_limit_rejections_total{limit="rpm"}' in metrics
    assert "key-" not in metrics and key_id not in metrics
