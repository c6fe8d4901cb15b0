"""The reliability proxy as users run it: the official ``openai`` client (sync and async,
streaming and not) pointed at a real gateway process, whose upstream model is the
OpenAI-compatible stand-in answering according to the question's wording."""

from __future__ import annotations

import http.client
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam
from prometheus_client.parser import text_string_to_metric_families

from steadfast.services.gateway.strategies.prompts import SINGLE_PROMPT
from steadfast.shared.clients.gateway import GatewayClient
from steadfast.shared.contracts.gateway import ChatMessage, GenerateRequest
from steadfast.shared.http_client import ServiceCallError
from steadfast.supervisor import Supervisor, service_ports
from tests.conftest import free_port_block
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.routes import stand_in_routes
from tests.fakes.stand_in import Fault, count_words, last_user_text

VOTE = "paraphrase-vote:fake"
STREAM_HOLD_S = 1.0


@dataclass
class Scenario:
    """What the stand-in model says: paraphrases per question, answers per wording."""

    paraphrases: dict[str, list[str]] = field(default_factory=dict)
    #: candidates the perturb service's generator gets, one a call, in turn
    perturb_candidates: dict[str, list[str]] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    #: wordings answered only after this many seconds
    slow: dict[str, float] = field(default_factory=dict)
    #: wordings whose answer is cut short by max_tokens
    cut: set[str] = field(default_factory=set)
    #: wordings the model's safety filter blocks
    blocked: set[str] = field(default_factory=set)
    #: answers the answer-equivalence judge calls the same (it says NO to any other pair)
    same_answers: list[frozenset[str]] = field(default_factory=list)
    default: str = "I don't know"
    #: every reply the stand-in gave, in order
    given: list[str] = field(default_factory=list)

    def respond(self, body: dict[str, Any]) -> Reply:
        text = self.reply(body)
        self.given.append(text)
        cut = last_user_text(body["messages"]) in self.cut
        return Reply(text, finish_reason="length" if cut else "stop")

    def reply(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        question = last_user_text(messages)
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if system.startswith("You write paraphrases"):
            asked = question.split("\n")[0].removeprefix("Question: ")  # then "Write k ..."
            wordings = self.paraphrases.get(asked, [])
            return "\n".join(f"{index}. {text}" for index, text in enumerate(wordings, 1))
        if system.startswith("You paraphrase questions"):  # the perturb service's generator
            original = question.partition("Question to rewrite: ")[2]  # the last line
            candidates = self.perturb_candidates[original]
            candidates.append(candidates.pop(0))
            return candidates[-1]
        if system.startswith("You judge whether two questions are equivalent"):  # verify's
            return "YES"
        if system.startswith("You compare two answers"):  # the vote's answer judge
            found = re.findall(r"<answer_[12]>\n(.*?)\n</answer_[12]>", question, re.DOTALL)
            return "YES" if frozenset(found) in self.same_answers else "NO"
        return self.answers.get(question, self.default)

    def fault(self, body: dict[str, Any]) -> Fault | None:
        wording = last_user_text(body["messages"])
        if wording in self.failing:
            return Fault.error(500, after_s=self.slow.get(wording, 0.0))
        if wording in self.blocked:
            return Fault.refuse()
        return Fault.delay(self.slow[wording]) if wording in self.slow else None


@dataclass
class Proxy:
    url: str
    fake: Any
    scenario: Scenario

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key="unused", max_retries=0)

    def async_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=f"{self.url}/v1", api_key="unused", max_retries=0)

    def calls_since(self, start: int) -> list[dict[str, Any]]:
        return self.fake.calls[start:]


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    scenario = Scenario()
    directory = tmp_path_factory.mktemp("proxy")
    with FakeOpenAIServer(responder=scenario.respond, fault_for=scenario.fault) as fake:
        routes = directory / "models.toml"
        routes.write_text(stand_in_routes(fake.url, "fake", timeout_s=10))
        ports = service_ports(free_port_block(5))
        supervisor = Supervisor(
            ports=ports,
            env={
                "STEADFAST_DATA_DIR": str(directory),
                "STEADFAST_MODELS_FILE": str(routes),
                # a streamed answer slower than this starts its stream before it is ready
                "STEADFAST_GATEWAY_STREAM_HOLD_S": str(STREAM_HOLD_S),
                "STEADFAST_GATEWAY_STREAM_KEEPALIVE_S": "0.2",
            },
            services=("gateway", "perturb", "verify"),
            log_dir=directory / "logs",
        )
        with supervisor:
            assert all(supervisor.wait_ready(90).values()), _log(directory)
            yield Proxy(f"http://127.0.0.1:{ports['gateway']}", fake, scenario)


def _log(directory: Path) -> str:
    log = directory / "logs" / "gateway.log"
    return log.read_text()[-3000:] if log.exists() else "no log"


def _spider_scenario(proxy: Proxy, question: str) -> list[str]:
    """The original wording trips the model (18); three of four paraphrases get 24."""
    paraphrases = [f"{question} (wording {letter})" for letter in "abcd"]
    proxy.scenario.paraphrases[question] = paraphrases
    proxy.scenario.answers.update(
        {
            question: "Each has 6 legs, so \\boxed{18}.",
            paraphrases[0]: "8 legs each: \\boxed{24}",
            paraphrases[1]: "\\boxed{24}",
            paraphrases[2]: "That makes 21, so \\boxed{21}",
            paraphrases[3]: "3 x 8 = \\boxed{24}",
        }
    )
    return paraphrases


def _prompt_tokens(calls: list[dict[str, Any]]) -> int:
    return sum(count_words(str(m["content"])) for call in calls for m in call["messages"])


def test_the_vote_overrules_the_original_wording_sync(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have altogether?"
    _spider_scenario(proxy, question)
    start = proxy.fake.call_count
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": 4, "task": "math"}},
    )
    calls = proxy.calls_since(start)
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == "8 legs each: \\boxed{24}"
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert info["answer"] == "24" and info["agreement"] == pytest.approx(0.6)
    assert [variant["value"] for variant in info["variants"]] == ["18", "24", "24", "21", "24"]
    # one paraphrase call and five answers, and the usage is summed over all of them
    assert len(calls) == info["calls"] == 6
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == _prompt_tokens(calls)
    single = proxy.client().chat.completions.create(
        model="fake", messages=[{"role": "user", "content": question}]
    )
    assert single.choices[0].message.content == "Each has 6 legs, so \\boxed{18}."
    assert "steadfast" not in (single.model_extra or {})


async def test_streaming_with_the_async_client(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have in total?"
    _spider_scenario(proxy, question)
    stream = await proxy.async_client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"steadfast": {"k": 4, "task": "math"}},
    )
    chunks = [chunk async for chunk in stream]
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "8 legs each: \\boxed{24}"
    finishing = [chunk for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason]
    assert [chunk.choices[0].finish_reason for chunk in finishing] == ["stop"]
    assert finishing[0].model_extra["steadfast"]["agreement"] == pytest.approx(0.6)  # type: ignore[index]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0


def test_streaming_with_the_sync_client(proxy: Proxy) -> None:
    question = "Name the capital of France."
    proxy.scenario.paraphrases[question] = ["Which city is France's capital?"]
    proxy.scenario.answers.update({question: "Paris", "Which city is France's capital?": "paris."})
    with proxy.client().chat.completions.create(
        model="paraphrase-vote:fake",
        messages=[{"role": "user", "content": question}],
        stream=True,
        extra_body={"steadfast": {"k": 1}},
    ) as stream:
        chunks = list(stream)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "Paris"
    assert chunks[-1].model_extra["steadfast"]["agreement"] == 1.0  # type: ignore[index]


async def test_single_prompt_with_the_async_client(proxy: Proxy) -> None:
    question = "Name the capital of Italy."
    proxy.scenario.answers[SINGLE_PROMPT.format(n=5, question=question)] = (
        "Restatement: Which city is the capital of Italy?\nFinal answer: Rome"
    )
    start = proxy.fake.call_count
    completion = await proxy.async_client().chat.completions.create(
        model="single-prompt:fake", messages=[{"role": "user", "content": question}]
    )
    assert proxy.fake.call_count - start == 1
    assert completion.choices[0].message.content == "Rome"
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert info["strategy"] == "single-prompt" and info["answer"] == "Rome"
    assert info["variants"][1]["question"] == "Which city is the capital of Italy?"


def test_early_stop_drops_the_calls_it_skips(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have between them?"
    paraphrases = _spider_scenario(proxy, question)
    # the original and the first two paraphrases answer at once: 24 leads 2 to 1 with two
    # variants to come, so a third 24 decides it; the last paraphrase is slow
    proxy.scenario.answers[paraphrases[2]] = "\\boxed{24}"
    proxy.scenario.slow[paraphrases[3]] = 3.0
    body = {"messages": [{"role": "user", "content": question}]}
    early = {"k": 4, "task": "math", "early_stop": True}
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        **body,
        extra_body={"steadfast": early},  # type: ignore[arg-type]
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert info["early_stopped"] and info["answer"] == "24"
    assert [v["status"] for v in info["variants"]][-1] == "skipped"
    time.sleep(3.5)  # past the slow answer, had its call gone on
    again = proxy.client().chat.completions.create(
        model=VOTE,
        **body,
        extra_body={"steadfast": {**early, "early_stop": False}},  # type: ignore[arg-type]
    )
    info = again.model_extra["steadfast"]  # type: ignore[index]
    # the paraphrases and the three answers came from the cache; the skipped answer did not
    assert (info["calls"], info["cached_calls"]) == (6, 5)
    assert info["variants"][-1]["value"] == "24"


def test_a_tie_returns_the_original_answer(proxy: Proxy) -> None:
    question = "Which river flows through Vienna?"
    paraphrases = [
        "What river runs through Vienna?",
        "Vienna lies on which river?",
        "River of Vienna?",
    ]
    proxy.scenario.paraphrases[question] = paraphrases
    proxy.scenario.answers.update(
        {
            question: "The Danube",
            paraphrases[0]: "Danube",
            paraphrases[1]: "Wien",
            paraphrases[2]: "Wien",
        }
    )
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": 3, "task": "factual"}},
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert completion.choices[0].message.content == "The Danube"
    assert info["agreement"] == 0.5


def test_a_failing_variant_is_reported_and_the_vote_proceeds(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have, all told?"
    paraphrases = _spider_scenario(proxy, question)
    proxy.scenario.failing.add(paraphrases[0])
    start = proxy.fake.call_count
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": 4, "task": "math"}},
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    failed = info["variants"][1]
    assert failed["status"] == "failed" and failed["error"].startswith("upstream_error")
    assert info["failed_variants"] == 1 and "1 of 5 variant calls failed" in info["notes"][0]
    # 24 still wins, 2 of the 4 voters; the failed paraphrase was retried once by the gateway
    assert info["answer"] == "24" and info["agreement"] == 0.5
    retried = [
        call
        for call in proxy.calls_since(start)
        if last_user_text(call["messages"]) == paraphrases[0]
    ]
    assert len(retried) == 2


def test_every_variant_failing_is_an_openai_error(proxy: Proxy) -> None:
    question = "A question nobody can answer?"
    proxy.scenario.paraphrases[question] = ["Nobody can answer this question?"]
    proxy.scenario.failing.update({question, "Nobody can answer this question?"})
    with pytest.raises(openai.InternalServerError) as raised:
        proxy.client().chat.completions.create(
            model=VOTE,
            messages=[{"role": "user", "content": question}],
            extra_body={"steadfast": {"k": 1}},
        )
    assert raised.value.status_code == 502
    assert raised.value.code == "upstream_error"
    # the gateway has retried: the client is told not to send every call again
    assert raised.value.response.headers["x-should-retry"] == "false"
    assert "every variant call failed (2)" in raised.value.message


def test_context_messages_are_kept_for_every_variant(proxy: Proxy) -> None:
    question = "And how many eyes does it have?"
    proxy.scenario.paraphrases[question] = ["How many eyes has it got?", "Its number of eyes?"]
    context = [
        {"role": "system", "content": "You are a careful zoologist."},
        {"role": "user", "content": "Tell me about the jumping spider."},
        {"role": "assistant", "content": "It is a small hunting spider."},
    ]
    start = proxy.fake.call_count
    proxy.client().chat.completions.create(
        model=VOTE,
        messages=[*context, {"role": "user", "content": question}],  # type: ignore[list-item]
        extra_body={"steadfast": {"k": 2}},
    )
    answering = [
        call
        for call in proxy.calls_since(start)
        if call["messages"][0]["content"] == context[0]["content"]
    ]
    # answered concurrently: in any order
    assert sorted(call["messages"][-1]["content"] for call in answering) == sorted(
        [question, "How many eyes has it got?", "Its number of eyes?"]
    )
    for call in answering:
        assert [
            {"role": message["role"], "content": message["content"]}
            for message in call["messages"][:3]
        ] == context


def test_bad_requests_raise_the_usual_openai_exceptions(proxy: Proxy) -> None:
    client = proxy.client()
    before = _samples(proxy)
    message: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi?"}]
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="paraphrase-vote:nowhere", messages=message)
    assert missing.value.code == "model_not_found" and "nowhere" in missing.value.message
    with pytest.raises(openai.BadRequestError) as unsupported:
        client.chat.completions.create(model=VOTE, messages=message, top_p=0.5)
    assert unsupported.value.param == "top_p"
    assert unsupported.value.code == "unsupported_parameter"
    with pytest.raises(openai.BadRequestError) as several:
        client.chat.completions.create(model=VOTE, messages=message, n=3)
    assert several.value.param == "n" and several.value.code == "unsupported_parameter"
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="fake",
            messages=message,
            extra_body={"steadfast": {"k": 2}},
        )
    with pytest.raises(openai.BadRequestError) as no_question:
        client.chat.completions.create(
            model=VOTE, messages=[{"role": "system", "content": "Be brief."}]
        )
    assert no_question.value.param == "messages"
    with pytest.raises(openai.BadRequestError) as mistyped:
        client.chat.completions.create(model=VOTE, messages=message, extra_body={"seed": "one"})
    assert mistyped.value.param == "seed"
    with pytest.raises(openai.BadRequestError) as quoted:  # a number in quotes is no number
        client.chat.completions.create(
            model=VOTE, messages=message, extra_body={"max_tokens": "64"}
        )
    assert quoted.value.param == "max_tokens"
    grew = _growth(before, _samples(proxy))
    # the caller's errors are counted as rejected, not as failures, and not among the calls per
    # request; a body that could not be read as a request has no strategy to count it under
    rejected, failed = {"outcome": "rejected"}, {"outcome": "failed"}
    assert grew("steadfast_proxy_requests_total", strategy="paraphrase-vote", **rejected) == 4
    assert grew("steadfast_proxy_requests_total", strategy="passthrough", **rejected) == 1
    assert grew("steadfast_proxy_requests_total", strategy="unknown", **rejected) == 2
    assert grew("steadfast_proxy_requests_total", strategy="paraphrase-vote", **failed) == 0
    assert grew("steadfast_proxy_upstream_calls_per_request_count") == 0


QUESTION_BODY = (
    b'{"model": "%s", "messages": [{"role": "user", "content": "Hi?"}], "temperature": %s}'
)


@pytest.mark.parametrize(
    ("raw", "status", "param", "words"),
    [
        (QUESTION_BODY % (VOTE.encode(), b"1e999"), 400, "temperature", "out of range"),
        (QUESTION_BODY % (VOTE.encode(), b"[" * 5000 + b"]" * 5000), 400, None, "too deep"),
    ],
    ids=["out-of-range", "too-deep"],
)
def test_a_body_that_cannot_be_read_is_an_openai_error_counted_as_unknown(
    proxy: Proxy, raw: bytes, status: int, param: str | None, words: str
) -> None:
    before = _samples(proxy)
    code, body = _post_raw(f"{proxy.url}/v1/chat/completions", raw)
    assert code == status, body
    assert body["error"]["param"] == param and words in body["error"]["message"]
    assert body["error"]["type"] == "invalid_request_error"
    unread = {"outcome": "rejected", "strategy": "unknown"}
    assert _growth(before, _samples(proxy))("steadfast_proxy_requests_total", **unread) == 1


def test_a_body_announced_too_large_is_a_413_counted_as_unknown(proxy: Proxy) -> None:
    before = _samples(proxy)
    host, port = proxy.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:  # the size is refused from the header: no need to send the body
        connection.putrequest("POST", "/v1/chat/completions")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(64 * 2**20))
        connection.endheaders()
        response = connection.getresponse()
        code, body = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert code == 413 and body["error"]["type"] == "invalid_request_error", body
    unread = {"outcome": "rejected", "strategy": "unknown"}
    assert _growth(before, _samples(proxy))("steadfast_proxy_requests_total", **unread) == 1


def test_a_body_too_deep_for_the_self_paraphrase_endpoint_is_a_400_counted_as_unknown(
    proxy: Proxy,
) -> None:
    before = _samples(proxy)
    code, problem = _post_raw(f"{proxy.url}/v1/self-paraphrase", b"[" * 5000 + b"]" * 5000)
    assert code == 400 and problem["errors"][0]["field"] == "body", problem
    assert "too deep" in problem["detail"]
    unread = {"outcome": "rejected", "strategy": "unknown"}
    assert _growth(before, _samples(proxy))("steadfast_proxy_requests_total", **unread) == 1


def test_a_plain_route_passes_the_conversation_through(proxy: Proxy) -> None:
    # no user message is needed when no strategy looks for the question
    start = proxy.fake.call_count
    only_system: list[ChatCompletionMessageParam] = [{"role": "system", "content": "Say hi."}]
    completion = proxy.client().chat.completions.create(model="fake", messages=only_system)
    assert completion.choices[0].message.content == proxy.scenario.default
    assert proxy.calls_since(start)[0]["messages"] == [{"role": "system", "content": "Say hi."}]


@pytest.mark.parametrize(
    ("sampling", "upstream"),
    [({}, 1), ({"temperature": 0.9}, 2), ({"temperature": 0.9, "seed": 7}, 1)],
)
def test_only_answers_asking_again_would_repeat_are_cached(
    proxy: Proxy, sampling: dict[str, Any], upstream: int
) -> None:
    # a sampled answer without a seed is a new draw each time: a cached one would repeat it
    messages: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": f"Tell me a number ({sorted(sampling.items())})."}
    ]
    start = proxy.fake.call_count
    for _ in range(2):
        proxy.client().chat.completions.create(model="fake", messages=messages, **sampling)
    assert proxy.fake.call_count - start == upstream


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return _post_raw(url, json.dumps(body).encode())


def _post_raw(url: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=raw, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _samples(proxy: Proxy) -> Samples:
    """The gateway's metric samples by (name, sorted labels)."""
    with urllib.request.urlopen(f"{proxy.url}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _growth(before: Samples, after: Samples) -> Callable[..., float]:
    """How much a sample (by name and labels) grew from ``before`` to ``after``."""

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    return grew


def test_self_paraphrase_endpoint_and_metrics(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have in all?"
    _spider_scenario(proxy, question)
    before = _samples(proxy)
    status, body = _post(
        f"{proxy.url}/v1/self-paraphrase",
        {"model": "fake", "question": question, "k": 4, "task": "math", "early_stop": False},
    )
    assert status == 200, body
    assert body["answer"] == "24" and body["agreement"] == pytest.approx(0.6)
    assert body["strategy"] == "paraphrase-vote" and len(body["variants"]) == 5
    assert body["calls"] == 6 and body["usage"]["input_tokens"] > 0 and body["latency_s"] > 0
    status, problem = _post(f"{proxy.url}/v1/self-paraphrase", {"model": "fake", "k": 2})
    assert status == 400 and problem["errors"][0]["field"] == "question"
    blank = {"model": "fake", "question": " \n", "k": 2}
    status, problem = _post(f"{proxy.url}/v1/self-paraphrase", blank)
    assert status == 400 and problem["errors"][0]["field"] == "question"
    assert "empty" in problem["detail"]
    status, problem = _post(f"{proxy.url}/v1/self-paraphrase", {"model": "fake", "k": "five"})
    assert status == 400 and problem["errors"][0]["field"] == "k"
    grew = _growth(before, _samples(proxy))
    unread = {"outcome": "rejected", "strategy": "unknown"}
    assert grew("steadfast_proxy_requests_total", **unread) == 1
    ok = {"outcome": "ok", "strategy": "paraphrase-vote"}
    assert grew("steadfast_proxy_requests_total", **ok) == 1
    rejected = {"outcome": "rejected", "strategy": "paraphrase-vote"}
    assert grew("steadfast_proxy_requests_total", **rejected) == 2
    # the agreement 0.6 fell in the 0.6 bucket, not the 0.5 one
    assert grew("steadfast_proxy_agreement_ratio_count") == 1
    assert grew("steadfast_proxy_agreement_ratio_sum") == pytest.approx(0.6)
    assert grew("steadfast_proxy_agreement_ratio_bucket", le="0.6") == 1
    assert grew("steadfast_proxy_agreement_ratio_bucket", le="0.5") == 0
    # six calls upstream: the paraphrases and five answers
    assert grew("steadfast_proxy_upstream_calls_per_request_count") == 1
    assert grew("steadfast_proxy_upstream_calls_per_request_sum") == 6


def test_a_generator_route_gets_the_paraphrases_from_the_perturb_service(proxy: Proxy) -> None:
    question = "How many wheels do 4 tricycles have?"
    written = ["What is the wheel count of four tricycles?", "Four tricycles: how many wheels?"]
    proxy.scenario.perturb_candidates[question] = list(written)
    proxy.scenario.answers.update(
        {question: "\\boxed{12}", written[0]: "\\boxed{12}", written[1]: "\\boxed{16}"}
    )
    start = proxy.fake.call_count
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": 2, "task": "math", "generator": "fake"}},
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert sorted(variant["question"] for variant in info["variants"][1:]) == sorted(written)
    assert info["answer"] == "12" and info["agreement"] == pytest.approx(2 / 3)
    generated = [
        call
        for call in proxy.calls_since(start)
        if call["messages"][0]["content"].startswith("You paraphrase questions")
    ]
    assert generated, "perturb's generator calls reached the upstream model through the gateway"


@pytest.mark.parametrize("seed", [2**40, -7])
def test_any_64_bit_seed_reaches_the_perturb_service_in_its_range(proxy: Proxy, seed: int) -> None:
    question = f"How many wheels do {seed % 10 + 2} bicycles have?"
    reworded = f"Kindly work out: {question}"  # (a note after the "?" would be cleaned away)
    proxy.scenario.perturb_candidates[question] = [reworded]
    proxy.scenario.answers.update({question: "\\boxed{4}", reworded: "\\boxed{4}"})
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        seed=seed,
        extra_body={"steadfast": {"k": 1, "task": "math", "generator": "fake"}},
    )
    info = completion.model_extra["steadfast"]  # type: ignore[index]
    assert info["answer"] == "4" and len(info["variants"]) == 2
    with pytest.raises(openai.BadRequestError) as too_large:
        proxy.client().chat.completions.create(
            model=VOTE, messages=[{"role": "user", "content": question}], seed=2**63
        )
    assert too_large.value.param == "seed"


@pytest.mark.parametrize("field", ["generator", "judge_model"])
def test_an_unknown_generator_or_judge_route_is_the_callers_error(proxy: Proxy, field: str) -> None:
    # an unknown generator once answered 200 by the original alone, with an agreement of 1.0
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "2 + 2?"}]
    start = proxy.fake.call_count
    with pytest.raises(openai.NotFoundError) as unknown:
        proxy.client().chat.completions.create(
            model=VOTE, messages=messages, extra_body={"steadfast": {field: "gpt-9"}}
        )
    assert unknown.value.param == f"steadfast.{field}" and "gpt-9" in unknown.value.message
    assert unknown.value.code == "model_not_found" and proxy.fake.call_count == start
    body = {"model": "fake", "question": "2 + 2?", "strategy": "paraphrase-vote", field: "gpt-9"}
    status, problem = _post(f"{proxy.url}/v1/self-paraphrase", body)
    assert status == 404 and problem["errors"][0]["field"] == field


def test_an_unknown_answering_route_with_verified_paraphrases_is_still_model_not_found(
    proxy: Proxy,
) -> None:
    # perturb, asked for a set by an unknown route, once named it as its own generator: a 422
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "2 + 2?"}]
    start = proxy.fake.call_count
    with pytest.raises(openai.NotFoundError) as unknown:
        proxy.client().chat.completions.create(
            model="paraphrase-vote:nowhere",
            messages=messages,
            extra_body={"steadfast": {"verify": True}},
        )
    assert unknown.value.param == "model" and unknown.value.code == "model_not_found"
    body = {"model": "nowhere", "question": "2 + 2?", "strategy": "paraphrase-vote", "verify": True}
    status, problem = _post(f"{proxy.url}/v1/self-paraphrase", body)
    assert status == 404 and problem["errors"][0]["field"] == "model"
    assert proxy.fake.call_count == start


def test_the_usage_of_verified_paraphrases_covers_perturbs_and_verifys_calls(
    proxy: Proxy,
) -> None:
    question = "How many wheels do 5 tricycles have?"
    written = [
        "What is the wheel count of five tricycles?",
        "What number of wheels are on five tricycles?",
    ]
    proxy.scenario.perturb_candidates[question] = list(written)
    proxy.scenario.answers.update(
        {question: "\\boxed{15}", written[0]: "\\boxed{15}", written[1]: "\\boxed{20}"}
    )
    start, replied = proxy.fake.call_count, len(proxy.scenario.given)
    upstream_before = _upstream_calls_observed(proxy)
    verify = {"stages": {"semantic": "off"}}
    status, body = _post(
        f"{proxy.url}/v1/self-paraphrase",
        {"model": "fake", "question": question, "k": 2, "generator": "fake", "verify": verify},
    )
    assert status == 200, body
    calls, replies = proxy.calls_since(start), proxy.scenario.given[replied:]
    systems = [call["messages"][0]["content"] for call in calls]
    assert any(system.startswith("You paraphrase questions") for system in systems)
    assert any(system.startswith("You judge whether") for system in systems)
    assert len(body["variants"]) == 3 and body["answer"] == "15", body["notes"]
    # every call of the request, perturb's generation and verify's judge included
    assert (body["calls"], body["cached_calls"]) == (len(calls), 0)
    assert body["usage"] == {
        "input_tokens": _prompt_tokens(calls),
        "output_tokens": sum(count_words(reply) for reply in replies),
    }
    assert _upstream_calls_observed(proxy) - upstream_before == len(calls)


def _upstream_calls_observed(proxy: Proxy) -> float:
    with urllib.request.urlopen(f"{proxy.url}/metrics", timeout=10) as response:
        metrics = response.read().decode()
    name = "steadfast_proxy_upstream_calls_per_request_sum "
    line = next((line for line in metrics.splitlines() if line.startswith(name)), name + "0")
    return float(line.removeprefix(name))


def _ask(model: str, question: str, **extra: Any) -> GenerateRequest:
    context = ChatMessage(role="system", content="Answer with a boxed number.")
    return GenerateRequest(
        model=model, messages=[context, ChatMessage(role="user", content=question)], **extra
    )


def _five_paraphrase_scenario(proxy: Proxy, question: str) -> None:
    """The default k is 5: the original says 18, four of the five paraphrases say 24."""
    paraphrases = [f"{question} (wording {letter})" for letter in "abcde"]
    proxy.scenario.paraphrases[question] = paraphrases
    proxy.scenario.answers.update(
        {
            question: "Each has 6 legs, so \\boxed{18}.",
            paraphrases[0]: "That makes 21, so \\boxed{21}",
            paraphrases[1]: "8 legs each: \\boxed{24}",
            paraphrases[2]: "\\boxed{24}",
            paraphrases[3]: "3 x 8 = \\boxed{24}",
            paraphrases[4]: "So \\boxed{24}",
        }
    )


async def test_generate_with_a_strategy_model_returns_the_majority_answer(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have, summed over all?"
    _five_paraphrase_scenario(proxy, question)
    client = GatewayClient(proxy.url)
    start = proxy.fake.call_count
    response = await client.generate(_ask(VOTE, question))
    calls = proxy.calls_since(start)
    assert response.text == "8 legs each: \\boxed{24}"
    assert response.route == VOTE
    assert (response.model, response.backend) == ("fake-model", "openai")
    assert response.finish_reason == "stop" and response.cached is False
    # one paraphrase call and six answers; the usage is summed over all of them
    assert len(calls) == 7
    assert response.usage.input_tokens == _prompt_tokens(calls)
    assert response.usage.output_tokens == sum(count_words(text) for text in _replies(proxy, calls))
    # the context message reached every answer call
    answers = [call for call in calls if call["messages"][0]["content"].startswith("Answer with")]
    assert len(answers) == 6
    plain = await client.generate(_ask("fake", question))
    assert plain.text == "Each has 6 legs, so \\boxed{18}." and plain.route == "fake"
    start = proxy.fake.call_count
    again = await client.generate(_ask(VOTE, question))
    assert again.text == response.text and again.usage == response.usage
    assert again.cached is True and proxy.fake.call_count == start


async def test_a_strategy_model_groups_the_answers_by_the_requests_task(proxy: Proxy) -> None:
    # nothing boxed: without a task the replies are free-form answers, grouped by meaning
    # ("24 legs." and "There are 24." are one answer); as maths, by their last number; either
    # way four of the six say 24, where comparing texts would have tied and kept the original
    question = "How many legs do 3 spiders have, adding them up?"
    paraphrases = [f"{question} (wording {letter})" for letter in "abcde"]
    proxy.scenario.paraphrases[question] = paraphrases
    replies = ["I count 18 legs.", "24 legs.", "There are 24.", "21 legs", "Total: 24", "It is 24"]
    proxy.scenario.answers.update(zip([question, *paraphrases], replies, strict=True))
    client = GatewayClient(proxy.url)
    as_text = await client.generate(_ask(VOTE, question))
    as_maths = await client.generate(_ask(VOTE, question, task="math"))
    assert as_text.text == as_maths.text == "24 legs."


def _replies(proxy: Proxy, calls: list[dict[str, Any]]) -> list[str]:
    return [proxy.scenario.reply(call) for call in calls]


async def test_a_batch_mixes_plain_and_strategy_routes_in_order(proxy: Proxy) -> None:
    question = "How many legs do 3 spiders have, counted up?"
    _five_paraphrase_scenario(proxy, question)
    client = GatewayClient(proxy.url)
    batch = await client.generate_batch(
        [_ask("fake", question), _ask(VOTE, question), _ask("paraphrase-vote:nowhere", question)]
    )
    plain, voted, missing = batch.results
    assert plain.result is not None and plain.result.text == "Each has 6 legs, so \\boxed{18}."
    assert plain.result.route == "fake"
    assert voted.result is not None and voted.result.text == "8 legs each: \\boxed{24}"
    assert voted.result.route == VOTE
    assert missing.result is None and missing.error is not None
    assert missing.error.status == 404 and missing.error.errors[0].field == "model"


@pytest.mark.parametrize("model", ["paraphrase-vote:nowhere", "no-such-strategy:fake"])
async def test_an_unknown_strategy_route_is_a_404_naming_model(proxy: Proxy, model: str) -> None:
    start = proxy.fake.call_count
    with pytest.raises(ServiceCallError) as missing:
        await GatewayClient(proxy.url).generate(_ask(model, "How many legs has a cat?"))
    assert missing.value.status == 404
    assert missing.value.problem.errors is not None
    assert missing.value.problem.errors[0].field == "model"
    assert model in (missing.value.problem.detail or "")
    assert proxy.fake.call_count == start


async def test_a_strategy_model_rejects_logprobs_and_needs_a_question(proxy: Proxy) -> None:
    client = GatewayClient(proxy.url)
    before = _samples(proxy)
    with pytest.raises(ServiceCallError) as logprobs:
        await client.generate(_ask(VOTE, "How many legs has a dog?", top_logprobs=2))
    assert logprobs.value.status == 422
    assert logprobs.value.problem.errors is not None
    assert logprobs.value.problem.errors[0].field == "top_logprobs"
    only_system = GenerateRequest(
        model=VOTE, messages=[ChatMessage(role="system", content="Be brief.")]
    )
    with pytest.raises(ServiceCallError) as no_question:
        await client.generate(only_system)
    assert no_question.value.status == 400
    assert no_question.value.problem.errors is not None
    assert no_question.value.problem.errors[0].field == "messages"
    grew = _growth(before, _samples(proxy))
    rejected = {"outcome": "rejected", "strategy": "paraphrase-vote"}
    assert grew("steadfast_proxy_requests_total", **rejected) == 2


def test_an_sdk_reply_sent_back_as_context_is_accepted(proxy: Proxy) -> None:
    client = proxy.client()
    first: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Say hi."}]
    reply = client.chat.completions.create(model="fake", messages=first).choices[0].message
    # the SDK serialises its own message with refusal, annotations, tool_calls... as null
    follow_up = [*first, reply, {"role": "user", "content": "Again?"}]
    start = proxy.fake.call_count
    client.chat.completions.create(
        model=VOTE,
        messages=follow_up,  # type: ignore[arg-type]
        extra_body={"steadfast": {"k": 1}},
    )
    sent = proxy.calls_since(start)[-1]["messages"]
    assert sent[1] == {"role": "assistant", "content": reply.content}


def test_settings_clients_send_at_their_neutral_value_are_accepted(proxy: Proxy) -> None:
    # e.g. NextChat sends the penalties and top_p with every request
    completion = proxy.client().chat.completions.create(
        model="fake",
        messages=[{"role": "user", "content": "Neutral settings?"}],
        top_p=1,
        presence_penalty=0,
        frequency_penalty=0,
        logprobs=False,
        tools=[],
        response_format={"type": "text"},
        metadata={"session": "s1"},
        store=False,
        n=None,
        stream=None,  # type: ignore[call-overload]
    )
    assert completion.choices[0].message.content == proxy.scenario.default


@pytest.mark.parametrize(
    ("settings", "param"),
    [
        ({"presence_penalty": 0.5}, "presence_penalty"),
        ({"response_format": {"type": "json_object"}}, "response_format"),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
            "tools",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "Weather?"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "weather", "arguments": "{}"},
                            }
                        ],
                    },
                    {"role": "user", "content": "Well?"},
                ]
            },
            "messages[1].tool_calls",
        ),
    ],
)
def test_settings_the_proxy_cannot_honour_are_refused_by_name(
    proxy: Proxy, settings: dict[str, Any], param: str
) -> None:
    request: dict[str, Any] = {"model": VOTE, "messages": [{"role": "user", "content": "Hi?"}]}
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.client().chat.completions.create(**{**request, **settings})
    assert refused.value.param == param and refused.value.code == "unsupported_parameter"


def test_an_empty_question_is_refused(proxy: Proxy) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        proxy.client().chat.completions.create(
            model=VOTE, messages=[{"role": "user", "content": "  "}]
        )
    assert refused.value.param == "messages" and "empty" in refused.value.message


def test_the_models_list_names_every_route_and_strategy(proxy: Proxy) -> None:
    names = [model.id for model in proxy.client().models.list()]
    assert "fake" in names and VOTE in names
    assert {"single-prompt:fake", "canonicalize:fake"} <= set(names)


def _raw_stream(proxy: Proxy, body: dict[str, Any]) -> tuple[int, list[str]]:
    """The status and the server-sent events (``data: ...`` and comment lines) of a stream."""
    request = urllib.request.Request(
        f"{proxy.url}/v1/chat/completions",
        data=json.dumps({**body, "stream": True}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, [e for e in response.read().decode().split("\n\n") if e]


def test_a_slow_streamed_answer_starts_its_stream_and_keeps_it_alive(proxy: Proxy) -> None:
    question = "How many legs do 5 spiders have?"
    paraphrase = "Five spiders: how many legs?"
    proxy.scenario.paraphrases[question] = [paraphrase]
    proxy.scenario.answers.update({question: "\\boxed{40}", paraphrase: "\\boxed{40}"})
    # the answers take longer than the gateway holds a stream back
    proxy.scenario.slow.update({question: STREAM_HOLD_S + 0.5, paraphrase: STREAM_HOLD_S + 0.5})
    status, events = _raw_stream(
        proxy,
        {
            "model": VOTE,
            "messages": [{"role": "user", "content": question}],
            "steadfast": {"k": 1, "task": "math"},
            "stream_options": {"include_usage": True},
        },
    )
    assert status == 200
    assert ": keep-alive" in events
    data = [json.loads(e.removeprefix("data: ")) for e in events if e.startswith("data: {")]
    assert data[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert len({chunk["id"] for chunk in data}) == 1
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in data if c["choices"])
    assert content == "\\boxed{40}"
    assert data[-1]["usage"]["total_tokens"] > 0 and events[-1] == "data: [DONE]"
    assert all("usage" in chunk and chunk["usage"] is None for chunk in data[:-1])
    assert events.index(": keep-alive") < len(events) - 3  # before the answer's chunks


@pytest.mark.parametrize("include_usage", [True, False])
def test_a_streamed_answer_has_usage_null_until_the_last_chunk_only_when_asked(
    proxy: Proxy, include_usage: bool
) -> None:
    body = {
        "model": "fake",
        "messages": [{"role": "user", "content": "Name the capital of Peru."}],
        "stream": True,
        "stream_options": {"include_usage": include_usage},
    }
    status, events = _raw_stream(proxy, body)
    assert status == 200 and events[-1] == "data: [DONE]"
    data = [json.loads(e.removeprefix("data: ")) for e in events if e.startswith("data: {")]
    if include_usage:
        assert [chunk["usage"] for chunk in data[:-1]] == [None] * (len(data) - 1)
        assert data[-1]["choices"] == [] and data[-1]["usage"]["total_tokens"] > 0
    else:
        assert not any("usage" in chunk for chunk in data)


def test_a_failure_after_the_stream_started_is_an_error_the_sdk_raises(proxy: Proxy) -> None:
    question = "A slow question nobody can answer?"
    paraphrase = "Nobody can answer this slow question?"
    proxy.scenario.paraphrases[question] = [paraphrase]
    proxy.scenario.failing.update({question, paraphrase})
    proxy.scenario.slow.update({question: STREAM_HOLD_S, paraphrase: STREAM_HOLD_S})
    stream = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        stream=True,
        extra_body={"steadfast": {"k": 1}},
    )
    with pytest.raises(openai.APIError) as raised:
        for _ in stream:
            pass
    assert "every variant call failed (2)" in raised.value.message


def test_an_answer_cut_by_max_tokens_finishes_with_length(proxy: Proxy) -> None:
    question = "Name the capital of Spain, at length."
    prompt = SINGLE_PROMPT.format(n=5, question=question)
    proxy.scenario.answers[prompt] = "Restatement: Spain's capital?\nFinal answer: Mad"
    proxy.scenario.cut.add(prompt)
    completion = proxy.client().chat.completions.create(
        model="single-prompt:fake", messages=[{"role": "user", "content": question}]
    )
    assert completion.choices[0].finish_reason == "length"


def test_a_passed_through_answer_the_filter_blocked_is_an_empty_content_filter_finish(
    proxy: Proxy,
) -> None:
    question = "Something the filter blocks?"
    proxy.scenario.blocked.add(question)
    before = _samples(proxy)
    completion = proxy.client().chat.completions.create(
        model="fake", messages=[{"role": "user", "content": question}]
    )
    choice = completion.choices[0]
    assert (choice.finish_reason, choice.message.content) == ("content_filter", "")
    # an answer, if an empty one: counted as refused, not as a failure of the model
    grew = _growth(before, _samples(proxy))
    counted = {"strategy": "passthrough"}
    assert grew("steadfast_proxy_requests_total", **counted, outcome="refused") == 1
    assert grew("steadfast_proxy_requests_total", **counted, outcome="failed") == 0


def test_a_long_conversation_passes_through(proxy: Proxy) -> None:
    # agents' and chats' histories run to hundreds of messages
    history: list[ChatCompletionMessageParam] = [
        {"role": "user" if turn % 2 == 0 else "assistant", "content": f"turn {turn}"}
        for turn in range(499)
    ]
    start = proxy.fake.call_count
    proxy.client().chat.completions.create(model="fake", messages=history)
    assert len(proxy.calls_since(start)[0]["messages"]) == 499


def _vote(proxy: Proxy, question: str, answers: list[str]) -> dict[str, Any]:
    """The vote on ``question``, whose original wording is answered ``answers[0]`` and its
    paraphrases the others, through the official client."""
    paraphrases = [f"{question} (said {letter})" for letter in "abcdefgh"[: len(answers) - 1]]
    proxy.scenario.paraphrases[question] = paraphrases
    proxy.scenario.answers.update(dict(zip([question, *paraphrases], answers, strict=True)))
    completion = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": len(paraphrases), "task": "factual"}},
    )
    info: dict[str, Any] = completion.model_extra["steadfast"]  # type: ignore[index]
    info["content"] = completion.choices[0].message.content
    return info


def test_the_same_answer_in_other_words_is_one_answer(proxy: Proxy) -> None:
    answers = ["Paris", "The capital of France is Paris.", "It's Paris."]
    info = _vote(proxy, "What is the capital of France?", answers)
    assert info["agreement"] == 1.0 and info["content"] == "Paris"
    # the cheap steps decided it: no judge call
    assert (info["clustering"], info["clustering_judge_calls"]) == ("semantic", 0)
    assert info["calls"] == 1 + len(answers)  # the paraphrases and the answers, nothing more


def test_two_names_with_nothing_in_common_stay_apart_without_a_judge_call(proxy: Proxy) -> None:
    info = _vote(proxy, "Which French city is the capital?", ["Paris", "Lyon"])
    assert info["agreement"] == 0.5
    assert (info["clustering"], info["clustering_judge_calls"]) == ("semantic", 0)


def test_different_answers_stay_apart_after_one_judge_call(proxy: Proxy) -> None:
    answers = ["Paris", "the largest city on the Rhône"]
    info = _vote(proxy, "What is the capital city of France?", answers)
    assert info["agreement"] == 0.5
    assert (info["clustering"], info["clustering_judge_calls"]) == ("semantic", 1)


def test_the_judge_merges_what_the_cheap_steps_leave_undecided(proxy: Proxy) -> None:
    question = "What is the capital of Australia?"
    proxy.scenario.same_answers.append(frozenset({"Canberra", "Canberra, in the ACT"}))
    answers = ["Canberra", "Canberra, in the ACT", "Canberra", "Sydney"]
    info = _vote(proxy, question, answers)
    # one call merges the two Canberras; Sydney names another city (a cheap step, no call)
    assert info["agreement"] == 0.75 and info["clustering_judge_calls"] == 1
    # exact grouping costs nothing and sees three answers
    plain = proxy.client().chat.completions.create(
        model=VOTE,
        messages=[{"role": "user", "content": question}],
        extra_body={"steadfast": {"k": 3, "task": "factual", "grouping": "exact"}},
    )
    exact = plain.model_extra["steadfast"]  # type: ignore[index]
    assert exact["agreement"] == 0.5
    assert (exact["clustering"], exact["clustering_judge_calls"]) == ("normalised", 0)
