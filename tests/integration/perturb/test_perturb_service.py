"""perturb → gateway (stand-in upstream) and perturb → verify → gateway, all real processes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from steadfast.shared.clients.perturb import PerturbClient
from steadfast.shared.contracts.perturb import (
    DistractorRequest,
    ParaphraseRequest,
    PermutationRequest,
)
from steadfast.shared.contracts.verify import VerifyOptions, VerifyThresholds
from steadfast.shared.http_client import ServiceCallError, get_session
from steadfast.shared.language import detect_language
from tests.integration.perturb.stack import ITALIAN, ITALIAN_REWORDING, QUESTION, running_stack

VERIFY = VerifyOptions(thresholds=VerifyThresholds(embedding=0.5))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], Any]]:
    services = ("gateway", "verify", "perturb")
    with running_stack(tmp_path_factory.mktemp("perturb"), services) as running:
        yield running


def _client(stack: tuple[dict[str, str], Any]) -> PerturbClient:
    return PerturbClient(stack[0]["perturb"])


async def test_paraphrases_are_generated_verified_and_recorded(
    stack: tuple[dict[str, str], Any],
) -> None:
    _, upstream = stack
    upstream.clear()
    result = await _client(stack).paraphrases(
        ParaphraseRequest(
            question=QUESTION,
            k=4,
            generator="fake",
            seed=11,
            plain_per_round=4,
            toned_per_round=2,
            verify=VERIFY,
        )
    )
    assert result.complete, result.incomplete_reason
    assert [p.kind for p in result.accepted] == ["plain"] * 3 + ["toned"]
    texts = [p.text for p in result.accepted]
    assert len(set(texts)) == 4 and all(not t.startswith('"') for t in texts)  # quotes cleaned
    assert all(p.prompt_version == "paraphrase-v9" and p.seed is not None for p in result.accepted)
    assert all(p.scores.judge_verdict == "yes" and p.scores.semantic for p in result.accepted)
    assert result.judge_prompt_version == "judge-v3" and result.semantic_check == "embedding"
    # the pool's pears rewording is rejected by the judge, repeats by the lexical filter
    stages = {r.stage for r in result.rejected}
    assert "judge" in stages and stages <= {"judge", "lexical", "duplicate", "semantic"}
    accounted = len(result.accepted) + len(result.surplus) + len(result.rejected)
    assert accounted == result.candidates_generated
    generator_calls = [c for c in upstream.calls if "You paraphrase" in c["messages"][0]["content"]]
    # several candidates a call: a plain call of four, a toned one of two, in one round
    assert len(generator_calls) == result.generator_calls < result.candidates_generated
    async with get_session().get(f"{stack[0]['perturb']}/metrics") as response:
        metrics = await response.text()
    assert 'steadfast_paraphrase_candidates_total{outcome="accepted"} 4.0' in metrics
    assert 'steadfast_paraphrase_sets_total{complete="true"}' in metrics


async def test_an_italian_question_is_paraphrased_in_italian(
    stack: tuple[dict[str, str], Any],
) -> None:
    result = await _client(stack).paraphrases(
        ParaphraseRequest(
            question=ITALIAN,
            k=1,
            generator="fake",
            plain_per_round=1,
            toned_per_round=1,
            verify=VERIFY,
        )
    )
    assert result.language == "it" and result.complete
    assert result.accepted[0].text == ITALIAN_REWORDING
    assert detect_language(result.accepted[0].text) == "it"


async def test_batch_and_unknown_generator(stack: tuple[dict[str, str], Any]) -> None:
    client = _client(stack)
    good = ParaphraseRequest(
        question=QUESTION,
        k=1,
        generator="fake",
        plain_per_round=2,
        toned_per_round=1,
        verify=VERIFY,
    )
    bad = ParaphraseRequest(question=QUESTION, k=1, generator="no-such-route")
    batch = await client.paraphrases_batch([good, bad])
    assert batch.results[0].result is not None and batch.results[0].result.complete
    assert batch.results[1].error is not None and batch.results[1].error.status == 422
    with pytest.raises(ServiceCallError) as error:
        await client.paraphrases(bad)
    assert error.value.status == 422
    assert error.value.problem.errors and error.value.problem.errors[0].field == "generator"


async def test_distractors_and_permutations(stack: tuple[dict[str, str], Any]) -> None:
    client = _client(stack)
    distractors = await client.distractors(
        DistractorRequest(
            question="What is the capital of France?",
            correct_answer="Paris",
            generator="fake",
            n=1,
        )
    )
    assert distractors.distractors == ["Lyon"] and distractors.complete
    orders = await client.permutations(PermutationRequest(options=["yes", "no"], scheme="swap"))
    assert [o.options for o in orders.orders] == [["yes", "no"], ["no", "yes"]]
