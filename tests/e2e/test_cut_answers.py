"""A maths reply cut at its token limit before it stated a final answer (docs/method.md D25),
through the five real services: the stand-in model's reply stops with ``finish_reason``
"length", the gateway passes that on, and the evaluator labels the reply ``invalid`` instead of
reading a step's number as the model's answer, so it makes no flip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from steadfast.services.evaluator.domain.prompts import MATH_INSTRUCTION
from tests.e2e.stack import ITEM, TinyWorld, running_stack, wait_finished
from tests.fakes.openai_server import Reply

LOOPED = "Step 1: add 20 to the total.\nStep 2: add 20 to the total.\nStep 3: add 20 to"
#: the items on whose paraphrases ``shaky`` loops until its token limit
LOOPING = {0, 1}


class LoopingWorld(TinyWorld):
    """Maths items "Item i: what is i plus 100?"; ``steady`` boxes the right sum everywhere,
    ``shaky`` too, except on the paraphrases of items 0 and 1, where it loops and is cut."""

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        user = body["messages"][-1]["content"]
        match = ITEM.search(user)
        if match is None or not user.startswith(MATH_INSTRUCTION):
            return super().__call__(body)
        item = int(match.group(1))
        if body["model"] == "shaky-model" and "Rephrased " in user and item in LOOPING:
            return Reply(text=LOOPED, finish_reason="length")
        return rf"{item} + 100 = {item + 100}, so \boxed{{{item + 100}}}"


def test_a_maths_reply_cut_before_its_answer_is_invalid_and_makes_no_flip(
    tmp_path: Path, port_block: int
) -> None:
    items = [
        {"id": f"item-{i}", "question": f"Item {i}: what is {i} plus 100?", "answer": str(i + 100)}
        for i in range(4)
    ]
    body = {
        "models": ["steady", "shaky"],
        "k": 2,
        "task": "math",
        "generator": "writer",
        "items": items,
        "verify": {"stages": {"lexical": False, "judge": True, "semantic": "off"}},
        "metrics": {"bootstrap": 20},
    }
    with running_stack(tmp_path, port_block, world=LoopingWorld()) as stack:
        created = httpx.post(f"{stack.evaluator}/v1/evaluations", json=body, timeout=30)
        assert created.status_code == 202, created.text
        job_id = created.json()["id"]
        assert wait_finished(stack.evaluator, job_id)["status"] == "succeeded"
        report = httpx.get(
            f"{stack.evaluator}/v1/evaluations/{job_id}/report?format=json", timeout=60
        ).json()

    shaky = {
        (item["id"], variant["index"]): answer
        for item in report["items"]
        for variant in item["variants"]
        for answer in variant["answers"]
        if answer["model"] == "shaky"
    }
    assert len(shaky) == 4 * 3
    for (item_id, index), answer in shaky.items():
        looped = index > 0 and int(item_id.split("-")[1]) in LOOPING
        if looped:
            assert answer["label"] == "invalid" and answer["value"] is None, (item_id, answer)
        else:
            assert answer["label"] == "correct", (item_id, index, answer)
    summary = next(m for m in report["models"] if m["model"] == "shaky")
    # without the rule the looped replies read as "20", wrong, and flip items 0 and 1
    assert summary["metrics"]["flip_rate"]["value"] in (0, None), summary["metrics"]["flip_rate"]
