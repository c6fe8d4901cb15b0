"""Items that bring their own paraphrases, through the five real services: nothing is generated,
the given paraphrases are verified like generated ones (a meaning change is rejected with its
reason) unless ``verify_given`` is false, the models are asked exactly the given wordings, and
the results and the report say where the paraphrases came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.stack import TinyWorld, running_stack, wait_finished

QUESTION = "Item {i}: what is the code word for item {i}?"


def given_item(i: int) -> dict[str, Any]:
    """Two faithful rewordings ("Rephrased" marks a paraphrase for the stand-in models) and
    one that asks about another item: the quantity check must reject it."""
    return {
        "id": f"item-{i}",
        "question": QUESTION.format(i=i),
        "answers": [f"alpha-{i}"],
        "paraphrases": [
            f"Rephrased by hand: Item {i}: which code word belongs to item {i}?",
            {
                "text": f"Rephrased casually: Item {i}: code word for item {i}?",
                "kind": "toned",
                "tone": "casual",
            },
            f"Rephrased by hand: Item {i}: what is the code word for item {i + 40}?",
        ],
    }


def body(items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "models": ["steady", "shaky"],
        "generator": "writer",
        "items": items,
        "verify": {"stages": {"lexical": False, "judge": True, "semantic": "off"}},
        "metrics": {"bootstrap": 50},
        **extra,
    }


def paraphrase_calls(calls: list[dict[str, Any]]) -> int:
    return sum(
        1
        for call in calls
        if call["messages"][0]["role"] == "system"
        and "rewrit" in call["messages"][0]["content"].lower()
    )


def test_given_paraphrases_replace_generation_and_are_verified(
    tmp_path: Path, port_block: int
) -> None:
    with running_stack(tmp_path, port_block, world=TinyWorld()) as stack:
        url = stack.evaluator
        verified = httpx.post(f"{url}/v1/evaluate", json=body([given_item(1)]), timeout=120)
        assert verified.status_code == 200, verified.text
        result = verified.json()
        assert paraphrase_calls(stack.upstream.calls) == 0
        [item] = result["items"]
        paraphrases = [v for v in item["variants"] if v["index"] > 0]
        assert [(v["kind"], v["tone"], v["provenance"]) for v in paraphrases] == [
            ("plain", None, "given"),
            ("toned", "casual", "given"),
        ]
        assert item["paraphrases"]["source"] == "given" and item["paraphrases"]["verified"]
        assert item["paraphrases"]["rejected"] == 1  # item 41's question: another number
        assert not item["paraphrases"]["complete"]
        assert "1 of 3 given paraphrases rejected" in item["paraphrases"]["incomplete_reason"]
        verification = result["verification"]
        assert (verification["given_sets"], verification["unverified_sets"]) == (1, 0)
        assert "numbers" in verification["stages"]
        # the models were asked the original and exactly the two accepted wordings
        asked = {
            c["messages"][-1]["content"].rsplit("Question: ", 1)[-1] for c in stack.answer_calls()
        }
        assert asked == {QUESTION.format(i=1)} | {v["text"] for v in paraphrases}
        # shaky answers every rewording of items 0-4 wrongly: both given paraphrases flip
        shaky = next(m for m in item["models"] if m["model"] == "shaky")
        metrics = shaky["metrics"]
        assert (metrics["k"], metrics["original_label"], metrics["p"]["incorrect"]) == (
            2,
            "correct",
            1.0,
        )

        unverified = httpx.post(
            f"{url}/v1/evaluate", json=body([given_item(2)], verify_given=False), timeout=120
        )
        assert unverified.status_code == 200, unverified.text
        result = unverified.json()
        [item] = result["items"]
        assert len(item["variants"]) == 4  # the changed one too: taken as it is
        assert item["paraphrases"]["verified"] is False and item["paraphrases"]["complete"]
        assert result["verification"]["unverified_sets"] == 1
        assert paraphrase_calls(stack.upstream.calls) == 0

        # a persisted job over an uploaded dataset whose items bring a paraphrases column
        dataset = "\n".join(json.dumps(given_item(i)) for i in (3, 4)).encode()
        uploaded = httpx.post(
            f"{url}/v1/datasets", params={"name": "given.jsonl"}, content=dataset, timeout=30
        )
        assert uploaded.status_code == 201, uploaded.text
        job = {**body([]), "dataset_id": uploaded.json()["id"]}
        del job["items"]
        created = httpx.post(f"{url}/v1/evaluations", json=job, timeout=30)
        assert created.status_code == 202, created.text
        job_id = created.json()["id"]
        assert wait_finished(url, job_id)["status"] == "succeeded"
        report = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=json", timeout=60).json()
        assert report["verification"]["given_sets"] == 2
        for item in report["items"]:
            assert [v["provenance"] for v in item["variants"]] == [None, "given", "given"]
        html = httpx.get(f"{url}/v1/evaluations/{job_id}/report?format=html", timeout=60).text
        assert "2 paraphrase set(s) given with the items (verified like generated ones)" in html
        assert "casual, given" in html
        assert paraphrase_calls(stack.upstream.calls) == 0
