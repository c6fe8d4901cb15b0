"""The audit (docs/method.md §1.4) through the five real services: a paraphrase that a lenient
first check let through, and whose answer is the only "flip", is checked again before the
metrics, removed from its set for every model with its reason, and the flip is gone."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import httpx

from steadfast.services.verify.domain.prompts import ANSWER_FIT
from tests.e2e.stack import ITEM, TinyWorld, job, running_stack, wait_finished
from tests.fakes.openai_server import Reply

#: items whose paraphrases change the question (shaky flips on items 0-4, see stack.answer)
CHANGED = range(0, 5)
AUDIT_SYSTEM = "You check a rewording"


class ChangedWorld(TinyWorld):
    """The equivalence question lets every paraphrase through (P(YES) 0.6, above METHOD's
    0.5); the audit's question says NO (P(YES) 0.1) for the paraphrases of items 0-4."""

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        if "<question_a>" not in messages[-1]["content"]:
            return super().__call__(body)
        match = ITEM.search(messages[-1]["content"])
        changed = match is not None and int(match.group(1)) in CHANGED
        p = 0.1 if system.startswith(AUDIT_SYSTEM) and changed else 0.6
        verdict = "YES" if p >= 0.5 else "NO"
        return Reply(text=verdict, top_logprobs=[("YES", math.log(p)), ("NO", math.log(1 - p))])


def _finished(url: str, body: dict[str, Any]) -> dict[str, Any]:
    created = httpx.post(f"{url}/v1/evaluations", json=body, timeout=30)
    assert created.status_code == 202, created.text
    job_id = created.json()["id"]
    assert wait_finished(url, job_id)["status"] == "succeeded"
    report = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=json", timeout=60).json()
    report["id"] = job_id
    return report


def _metric(report: dict[str, Any], model: str, name: str) -> Any:
    summary = next(m for m in report["models"] if m["model"] == model)
    return summary["metrics"][name]


def test_the_audit_removes_changed_paraphrases_before_the_metrics(
    tmp_path: Path, port_block: int
) -> None:
    k = 2
    with running_stack(tmp_path, port_block, world=ChangedWorld()) as stack:
        url = stack.evaluator
        unaudited = _finished(url, job(20, k, audit="off", seed=1))
        audited = _finished(url, job(20, k, seed=1))

        # without the audit, shaky "flips" on items 0-4 (right on the original only)
        flips = _metric(unaudited, "shaky", "flip_rate")
        assert flips["value"] > 0 and unaudited["audit"]["mode"] == "off"
        assert unaudited["audit"]["checked"] == 0

        audit = audited["audit"]
        # items 0-4 (flips) and 5-9 (right only on paraphrases) disagree; 0-4 fail the audit
        assert (audit["checked"], audit["removed"], audit["unchecked"]) == (20, 10, 0)
        assert audit["audit_threshold"]["source"] == "method_default"
        assert audit["model_calls"]["calls"] >= 4 * 20  # two questions, both orders
        for item in audited["items"]:
            number = int(item["id"].split("-")[1])
            reasons = [v["audited_out"] for v in item["variants"] if v["index"] > 0]
            if number in CHANGED:
                assert all(r and r.startswith("audit: ") for r in reasons), item["id"]
            else:
                assert reasons == [None] * k, item["id"]
        # the flips rested on changed paraphrases: with them removed there is none
        after = _metric(audited, "shaky", "flip_rate")
        assert after["value"] in (0, None), after
        assert _metric(audited, "steady", "A_strict")["value"] == 1.0

        html = httpx.get(f"{url}/v1/evaluations/{audited['id']}/report?format=html", timeout=60)
        assert "How far to trust these numbers" in html.text
        text = re.sub(r"<[^>]+>", " ", html.text)
        assert "10 removed from their sets for every model" in text
        assert "paraphrase removed" in text and "Rephrased a: Item 0" in text


QUESTION_FIELD = re.compile(r"<question>\n(.*?)\n</question>", re.DOTALL)


class AnswerWorld(TinyWorld):
    """Both equivalence questions let every paraphrase through (P(YES) 0.9); asked whether
    the item's answer is right, the judge says yes for every original and paraphrase except
    the paraphrases of items 0-4, which (it says) ask something else."""

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        messages = body["messages"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        user = messages[-1]["content"]
        if "<question_a>" in user:
            p = 0.9
        elif system == ANSWER_FIT.system:
            field = QUESTION_FIELD.search(user)
            question = field.group(1) if field else ""
            match = ITEM.search(question)
            changed = match is not None and int(match.group(1)) in CHANGED
            p = 0.05 if changed and question.startswith("Rephrased") else 0.9
        else:
            return super().__call__(body)
        verdict = "YES" if p >= 0.5 else "NO"
        return Reply(text=verdict, top_logprobs=[("YES", math.log(p)), ("NO", math.log(1 - p))])


def test_the_audit_removes_paraphrases_the_items_answer_no_longer_answers(
    tmp_path: Path, port_block: int
) -> None:
    """The demo's case: a paraphrase both judge questions let through ("What is the main city
    in Australia?" for "What is the capital city of Australia?"), for which the item's answer
    is no longer right, made the only flip; the answer check removes it."""
    k = 2
    with running_stack(tmp_path, port_block, world=AnswerWorld()) as stack:
        audited = _finished(stack.evaluator, job(20, k, seed=1))

    audit = audited["audit"]
    assert (audit["checked"], audit["removed"], audit["unchecked"]) == (20, 10, 0)
    for item in audited["items"]:
        number = int(item["id"].split("-")[1])
        reasons = [v["audited_out"] for v in item["variants"] if v["index"] > 0]
        if number in CHANGED:
            assert all(r and r.startswith("answer: the answer 'alpha-") for r in reasons), reasons
        else:
            assert reasons == [None] * k, item["id"]
    after = _metric(audited, "shaky", "flip_rate")
    assert after["value"] in (0, None), after
