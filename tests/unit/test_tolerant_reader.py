"""A response from a newer version of a service, with fields this version lacks, still decodes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from steadfast.shared.contracts.evaluator import EvaluationStatus
from steadfast.shared.contracts.gateway import GenerateResponse, ModelCalls, TokenAlternative, Usage
from steadfast.shared.contracts.perturb import CandidateScores, Paraphrase, ParaphraseResponse
from steadfast.shared.tolerant_reader import decode_response

RESPONSE = ParaphraseResponse(
    question="How many legs do 3 spiders have?",
    accepted=[
        Paraphrase(
            text="Three spiders have how many legs?",
            kind="plain",
            scores=CandidateScores(overlap=0.4, judge_verdict="yes"),
        )
    ],
    rejected=[],
    candidates_generated=4,
    rounds=1,
    elapsed_s=2.5,
    complete=False,
    language="en",
    model_calls=ModelCalls(calls=4, usage=Usage(input_tokens=80, output_tokens=40)),
)


def newer(**additions: Any) -> dict[str, Any]:
    """RESPONSE as a newer callee sends it: ``additions`` maps a dotted path to new fields,
    which come first in their object (so a strict decode meets them before anything else)."""
    body: dict[str, Any] = msgspec.to_builtins(RESPONSE)
    for path, fields in additions.items():
        target = body
        for step in path.split(".") if path != "top" else []:
            target = target[int(step)] if isinstance(target, list) else target[step]
        rest = dict(target)
        target.clear()
        target.update({**fields, **rest})
    return body


def test_fields_a_newer_callee_adds_at_any_depth_are_ignored() -> None:
    body = newer(
        top={"novelty": {"deep": [1, 2]}},
        **{
            "accepted.0": {"rank": 1},
            "accepted.0.scores": {"entailment": 0.9},
            "model_calls.usage": {"reasoning_tokens": 7},
        },
    )
    assert decode_response(msgspec.json.encode(body), ParaphraseResponse) == RESPONSE


def test_an_unchanged_response_decodes_strictly_as_before() -> None:
    encoded = msgspec.json.encode(RESPONSE)
    assert decode_response(encoded, ParaphraseResponse) == RESPONSE


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rounds": "one"}, "Expected `int`, got `str` - at `$.rounds`"),
        ({"language": "English"}, "at `$.language`"),
    ],
)
def test_a_mistyped_known_field_still_fails_beside_an_unknown_one(
    change: dict[str, Any], message: str
) -> None:
    body = newer(top={"novelty": True})
    body.update(change)
    with pytest.raises(msgspec.ValidationError, match=message.replace("$", r"\$")):
        decode_response(msgspec.json.encode(body), ParaphraseResponse)


def test_a_missing_required_field_still_fails() -> None:
    body = newer(top={"novelty": True})
    del body["question"]
    with pytest.raises(msgspec.ValidationError, match="missing required field `question`"):
        decode_response(msgspec.json.encode(body), ParaphraseResponse)


def test_unknown_fields_inside_optional_and_listed_structs_of_another_contract() -> None:
    status = {
        "id": "ev-1",
        "status": "running",
        "name": None,
        "task": "math",
        "models": ["local"],
        "k": 5,
        "dataset_id": None,
        "item_count": 2,
        "progress": {
            "paraphrase": {"done": 0, "failed": 0, "total": 2, "eta_s": 9},
            "answer": {"done": 0, "failed": 0, "total": 48},
            "grade": {"done": 0, "failed": 0, "total": 0},
            "fraction": 0.0,
        },
        "timings": {"created_at": "2026-12-01T05:11:41+00:00", "queued_s": 0.1},
        "errors": [],
        "error_count": 0,
        "message": None,
        "cost": {"usd": 0},
    }
    decoded = decode_response(msgspec.json.encode(status), EvaluationStatus)
    assert decoded.progress.paraphrase.total == 2 and decoded.item_count == 2


def test_unknown_fields_inside_a_list_that_may_be_null() -> None:
    response = GenerateResponse(
        text="B",
        model="local",
        backend="llama",
        finish_reason="stop",
        usage=Usage(input_tokens=5, output_tokens=1),
        latency_s=0.1,
        cached=False,
        logprobs=[TokenAlternative(token="B", logprob=-0.1)],
    )
    body: dict[str, Any] = msgspec.to_builtins(response)
    body["logprobs"][0] = {"bytes": [66], **body["logprobs"][0]}
    assert decode_response(msgspec.json.encode(body), GenerateResponse) == response
