"""The gateway with ``STEADFAST_GATEWAY_AUTH=keys``: its endpoints for callers take an API key
of the one key store (made with ``steadfast keys create``, kept in the evaluator's database), the
official openai client raises its usual errors without one, a revoked key stops working within
the verdicts' lifetime, and the other services still call it with the internal token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from steadfast.shared.internal_token import internal_headers
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.routes import stand_in_routes

TOKEN = "proxy-keys-internal-token"
KEY_CACHE_S = 0.5


@dataclass
class KeyedGateway:
    url: str
    data_dir: Path

    def client(self, key: str) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=key, max_retries=0)

    def keys(self, *args: str) -> str:
        """``steadfast keys ...`` as an operator runs it, against the same data directory."""
        env = {**os.environ, "STEADFAST_DATA_DIR": str(self.data_dir)}
        for variable in ("DATABASE_URL", "STEADFAST_DATABASE_URL"):
            env.pop(variable, None)
        done = subprocess.run(
            [sys.executable, "-m", "steadfast.cli", "keys", *args],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return done.stdout


def answer_or_reword(body: dict[str, object]) -> str:
    """The stand-in model: a rewording when asked for one (perturb's generation), else the
    answer."""
    prompt = str(body.get("messages", "")).lower()
    return (
        "Which city is the capital of France?"
        if "rewrit" in prompt or "paraphras" in prompt
        else "Paris"
    )


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedGateway]:
    directory = tmp_path_factory.mktemp("keyed")
    with FakeOpenAIServer(responder=answer_or_reword) as fake:
        routes = directory / "models.toml"
        routes.write_text(stand_in_routes(fake.url, "fake", timeout_s=10))
        ports = service_ports(free_port_block(5))
        env = {
            "STEADFAST_DATA_DIR": str(directory),
            "STEADFAST_MODELS_FILE": str(routes),
            "STEADFAST_GATEWAY_AUTH": "keys",
            "STEADFAST_GATEWAY_KEY_CACHE_S": str(KEY_CACHE_S),
            "STEADFAST_INTERNAL_TOKEN": TOKEN,
        }
        supervisor = Supervisor(ports=ports, env=env, services=("gateway", "perturb", "verify"))
        with supervisor:
            assert all(supervisor.wait_ready(90).values())
            yield KeyedGateway(f"http://127.0.0.1:{ports['gateway']}", directory)


def created_key(gateway: KeyedGateway, name: str, *options: str) -> tuple[str, str]:
    """(the key's id, the key), with the default scopes (proxy among them) and ``options``."""
    lines = gateway.keys("create", name, *options).splitlines()
    key_id = re.search(r"created (key-\w+)", lines[0])
    assert key_id is not None, lines
    return key_id.group(1), lines[1]


def ask(client: openai.OpenAI) -> str | None:
    completion = client.chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "What is the capital of France?"}]
    )
    return completion.choices[0].message.content


def test_a_key_of_the_store_is_served_and_no_key_raises_the_sdk_s_error(
    gateway: KeyedGateway,
) -> None:
    _, key = created_key(gateway, "app")
    assert ask(gateway.client(key)) == "Paris"
    assert [model.id for model in gateway.client(key).models.list()]
    for wrong in ("sf_not-a-key", ""):
        with pytest.raises(openai.AuthenticationError) as refused:
            ask(gateway.client(wrong or "x"))
        body = refused.value.body
        assert isinstance(body, dict) and body.get("code") == "invalid_api_key", body
    with pytest.raises(openai.AuthenticationError):
        gateway.client("sf_not-a-key").models.list()


def test_a_key_without_the_proxy_scope_is_forbidden(gateway: KeyedGateway) -> None:
    lines = gateway.keys("create", "reader", "--scope", "read").splitlines()
    with pytest.raises(openai.PermissionDeniedError) as refused:
        ask(gateway.client(lines[1]))
    assert "`proxy`" in str(refused.value)


def test_a_revoked_key_stops_working_within_the_verdicts_lifetime(gateway: KeyedGateway) -> None:
    key_id, key = created_key(gateway, "to-revoke")
    assert ask(gateway.client(key)) == "Paris"
    gateway.keys("revoke", key_id)
    time.sleep(KEY_CACHE_S + 0.2)
    with pytest.raises(openai.AuthenticationError):
        ask(gateway.client(key))


def test_the_services_call_it_with_the_internal_token_and_a_vote_goes_through_them(
    gateway: KeyedGateway,
) -> None:
    body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}]}
    generate = f"{gateway.url}/v1/generate"
    assert httpx.post(generate, json=body, timeout=30).status_code == 401
    served = httpx.post(generate, json=body, headers=internal_headers(TOKEN), timeout=30)
    assert served.status_code == 200, served.text
    # a vote: the gateway asks perturb for paraphrases, perturb asks the gateway (its token)
    _, key = created_key(gateway, "voter")
    completion = gateway.client(key).chat.completions.create(
        model="paraphrase-vote:fake",
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        extra_body={"steadfast": {"k": 2, "generator": "fake"}},
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert completion.choices[0].message.content == "Paris", info
    # paraphrased by perturb (a generator route), which asks the gateway with the token
    assert [variant["source"] for variant in info["variants"]][:2] == ["original", "paraphrase"]
    assert info["failed_variants"] == 0, info
