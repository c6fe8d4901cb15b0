"""The self-paraphrase bench's flip rates: measured chunk by chunk through the evaluator, kept in
a record across runs, computed with the scoring service's docs/method.md §1.4 code."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bench.self_paraphrase.__main__ import Row, argument_parser, flip_set_lines, flip_settings
from bench.self_paraphrase.flips import (
    SET_RULES,
    Consistency,
    FlipRecord,
    FlipSettings,
    flip_rates,
    graded_variants,
    measure,
    paraphrase_counts,
)
from bench.self_paraphrase.items import Item
from steadfast.shared.contracts.evaluator import (
    EvaluationAccepted,
    EvaluationCreate,
    EvaluationPage,
    EvaluationProgress,
    EvaluationStatus,
    EvaluationTimings,
    ItemModelResult,
    ItemPage,
    ItemResult,
    StageProgress,
    Variant,
    VariantAnswer,
)
from steadfast.shared.contracts.proxy import StrategyOptions
from steadfast.shared.contracts.scoring import Gold

SETTINGS = FlipSettings(
    route="local",
    strategies=("plain", "paraphrase-vote"),
    flip_k=2,
    max_tokens={"math": 512, "factual": 128},
)


def items(n: int) -> list[Item]:
    return [Item(f"q{i}", "gsm8k", "math", f"{i} + 1?", Gold(answer=str(i + 1))) for i in range(n)]


def item_result(item_id: str, labels: dict[str, list[str | None]]) -> ItemResult:
    """``labels``: per model, the label of the original then of each paraphrase."""
    count = len(next(iter(labels.values())))
    variants = [
        Variant(
            index=index,
            text=f"wording {index}",
            kind="original" if index == 0 else "plain",
            answers=[
                VariantAnswer(model=model, text="x", label=by_variant[index], value="x")  # type: ignore[arg-type]
                for model, by_variant in labels.items()
            ],
        )
        for index in range(count)
    ]
    models = [ItemModelResult(model=model) for model in labels]
    return ItemResult(id=item_id, question="?", status="complete", variants=variants, models=models)


def test_graded_variants_are_the_records_scoring_gets_and_none_when_one_failed() -> None:
    result = item_result("q0", {"local": ["correct", "incorrect", "correct"]})
    records = graded_variants(result, "local")
    assert records is not None
    assert [(r.variant, r.label, r.kind) for r in records] == [
        (0, "correct", "original"),
        (1, "incorrect", "plain"),
        (2, "correct", "plain"),
    ]
    failed = item_result("q0", {"local": ["correct", None, "correct"]})
    assert graded_variants(failed, "local") is None
    assert graded_variants(result, "paraphrase-vote:local") is None


def test_flip_rates_are_method_s_over_the_items_every_strategy_has(tmp_path: Path) -> None:
    record = FlipRecord(tmp_path / "flips.jsonl")
    q0, q1, q2 = items(3)
    plain = {  # q0 flips (original right, majority wrong); q1 holds; q2: original wrong
        "q0": ["correct", "incorrect", "incorrect"],
        "q1": ["correct", "correct", "incorrect"],
        "q2": ["incorrect", "correct", "correct"],
    }
    vote = {"q0": ["correct", "correct", "correct"], "q1": ["correct", "correct", "correct"]}
    for item in (q0, q1, q2):
        records = graded_variants(item_result(item.id, {"local": plain[item.id]}), "local")
        assert records is not None
        record.add(SETTINGS.key("plain", item), records)
    for item in (q0, q1):  # q2 has no paraphrase-vote record yet: left out of both rates
        result = item_result(item.id, {"paraphrase-vote:local": vote[item.id]})
        records = graded_variants(result, "paraphrase-vote:local")
        assert records is not None
        record.add(SETTINGS.key("paraphrase-vote", item), records)

    rates, item_count = flip_rates(FlipRecord(record.path), [q0, q1, q2], SETTINGS)
    assert item_count == 2
    # q1's majority is a tie (correct, incorrect): METHOD breaks it towards correct; q1's
    # paraphrases are the only set with two labels
    assert rates == {
        "plain": Consistency(flip=(0.5, 2), conflict=(0.5, 2)),
        "paraphrase-vote": Consistency(flip=(0.0, 2), conflict=(0.0, 2)),
    }


class RecordingEvaluator:
    """The evaluator client's side of the bench: answers every evaluation at once."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = labels
        self.created: list[EvaluationCreate] = []

    async def evaluations(self, limit: int = 20, offset: int = 0) -> EvaluationPage:
        return EvaluationPage(evaluations=[], total=0, limit=limit, offset=offset)

    async def create_evaluation(self, evaluation: EvaluationCreate, **_: Any) -> Any:
        self.created.append(evaluation)
        return EvaluationAccepted(id=str(len(self.created)), status="queued")

    async def evaluation(self, evaluation_id: str) -> EvaluationStatus:
        evaluation = self.created[int(evaluation_id) - 1]
        return EvaluationStatus(
            id=evaluation_id,
            status="succeeded",
            task=evaluation.task,
            models=evaluation.models,
            k=evaluation.k,
            item_count=len(evaluation.items or []),
            progress=EvaluationProgress(
                paraphrase=StageProgress(), answer=StageProgress(), grade=StageProgress()
            ),
            timings=EvaluationTimings(created_at="2026-11-30T00:00:00+00:00"),
        )

    async def items(self, evaluation_id: str, limit: int = 50, offset: int = 0) -> ItemPage:
        evaluation = self.created[int(evaluation_id) - 1]
        chosen = (evaluation.items or [])[offset : offset + limit]
        results = [
            item_result(item.id or "", {model: list(self.labels) for model in evaluation.models})
            for item in chosen
        ]
        return ItemPage(
            items=results, total=len(evaluation.items or []), limit=limit, offset=offset
        )


def test_measure_asks_the_evaluator_only_for_items_without_a_record(tmp_path: Path) -> None:
    path = tmp_path / "flips.jsonl"
    evaluator = RecordingEvaluator(["correct", "correct", "incorrect"])
    gsm8k = items(3)
    run = measure(evaluator, [gsm8k[:2]], SETTINGS, FlipRecord(path), 2, 60, 0.0)  # type: ignore[arg-type]
    asyncio.run(run)
    first = evaluator.created[0]
    assert first.models == ["local", "paraphrase-vote:local"]
    assert first.k == 2 and [item.id for item in first.items or []] == ["q0", "q1"]
    assert first.max_candidates == SETTINGS.max_candidates
    assert first.time_budget_s == SETTINGS.paraphrase_budget_s
    assert first.instruction_role == "system" and "|instruction=system|" in SETTINGS.key(
        "plain", gsm8k[0]
    )

    again = RecordingEvaluator(["correct", "correct", "incorrect"])
    asyncio.run(measure(again, [gsm8k], SETTINGS, FlipRecord(path), 2, 60, 0.0))  # type: ignore[arg-type]
    assert [[item.id for item in e.items or []] for e in again.created] == [["q2"]]
    rates, item_count = flip_rates(FlipRecord(path), gsm8k, SETTINGS)
    assert item_count == 3
    every_item_split = Consistency(flip=(0.0, 3), conflict=(1.0, 3))
    assert rates == {"plain": every_item_split, "paraphrase-vote": every_item_split}


def test_an_item_one_strategy_failed_on_is_recorded_for_none(tmp_path: Path) -> None:
    # a later run would answer the strategy on a new paraphrase set, unlike the others
    class VoteFailsOnQ1(RecordingEvaluator):
        async def items(self, evaluation_id: str, limit: int = 50, offset: int = 0) -> ItemPage:
            page = await super().items(evaluation_id, limit, offset)
            for result in page.items:
                if result.id == "q1":
                    result.variants[1].answers[1].label = None
            return page

    path = tmp_path / "flips.jsonl"
    evaluator = VoteFailsOnQ1(["correct", "incorrect"])
    asyncio.run(measure(evaluator, [items(2)], SETTINGS, FlipRecord(path), 2, 60, 0.0))  # type: ignore[arg-type]
    recorded = FlipRecord(path).variants
    assert sorted(key.rsplit("|", 1)[1] for key in recorded) == ["q0", "q0"]
    assert FlipRecord(path).missing(SETTINGS, items(2)) == [items(2)[1]]


def test_the_table_says_how_full_the_flip_rate_sets_are(tmp_path: Path) -> None:
    path = tmp_path / "flips.jsonl"
    asyncio.run(
        measure(
            RecordingEvaluator(["correct", "correct"]),
            [items(2)],
            SETTINGS,
            FlipRecord(path),
            2,
            60,
            0.0,
        )  # type: ignore[arg-type]
    )
    asyncio.run(
        measure(
            RecordingEvaluator(["correct"] * 3), [items(3)], SETTINGS, FlipRecord(path), 2, 60, 0.0
        )  # type: ignore[arg-type]
    )
    counts = paraphrase_counts(FlipRecord(path), items(3), SETTINGS)
    assert counts == [1, 1, 2]
    rows = [Row("gsm8k", strategy, [], flip_paraphrases=counts) for strategy in SETTINGS.strategies]
    assert flip_set_lines(rows, flip_k=2) == [
        "gsm8k flip-rate sets: 1.3 paraphrases per item (k=2); 2 of 3 sets short of k"
    ]


def test_an_evaluation_past_its_timeout_is_cancelled_and_its_finished_items_kept(
    tmp_path: Path,
) -> None:
    class NeverDone(RecordingEvaluator):
        cancelled: list[str] = []  # noqa: RUF012

        async def evaluation(self, evaluation_id: str) -> EvaluationStatus:
            status = await super().evaluation(evaluation_id)
            status.status = "running"
            return status

        async def cancel(self, evaluation_id: str) -> None:
            self.cancelled.append(evaluation_id)

        async def items(self, evaluation_id: str, limit: int = 50, offset: int = 0) -> ItemPage:
            page = await super().items(evaluation_id, limit, offset)
            page.items[1].status = "pending"  # q1 was still being answered
            for variant in page.items[1].variants[1:]:
                variant.answers = []
            return page

    path = tmp_path / "flips.jsonl"
    evaluator = NeverDone(["correct", "incorrect"])
    asyncio.run(measure(evaluator, [items(2)], SETTINGS, FlipRecord(path), 2, 0.0, 0.0))  # type: ignore[arg-type]
    assert evaluator.cancelled == ["1"]
    assert FlipRecord(path).missing(SETTINGS, items(2)) == [items(2)[1]]


def test_a_variant_without_the_models_answer_is_no_record() -> None:
    result = item_result("q0", {"local": ["correct", "incorrect"]})
    result.variants[1].answers = []
    assert graded_variants(result, "local") is None


def test_a_failed_evaluation_records_nothing(tmp_path: Path) -> None:
    class Failing(RecordingEvaluator):
        async def evaluation(self, evaluation_id: str) -> EvaluationStatus:
            status = await super().evaluation(evaluation_id)
            status.status = "failed"
            return status

    path = tmp_path / "flips.jsonl"
    asyncio.run(measure(Failing(["correct"]), [items(2)], SETTINGS, FlipRecord(path), 2, 60, 0.0))  # type: ignore[arg-type]
    assert FlipRecord(path).variants == {}


@pytest.mark.parametrize("strategy", ["plain", "paraphrase-vote"])
def test_the_key_names_what_the_measurement_depends_on(strategy: str) -> None:
    key = SETTINGS.key(strategy, items(1)[0])
    assert key.startswith(f"local|{strategy}|") and "flip_k=2" in key and key.endswith("|q0")
    assert ("prompts=" in key) == (strategy != "plain")
    # "<strategy>:<route>" answers with the strategy's default options, whatever the bench's --k
    assert ("|k=5|" in key) == (strategy != "plain")
    # how many rewordings a set may try decides how many paraphrases an item gets
    assert f"|candidates={SETTINGS.max_candidates}/{SETTINGS.paraphrase_budget_s:g}s|" in key
    # sets recorded before perturb filled a set without toned paraphrases held at most 4 of 5
    assert "|sets=k-plain|" in key
    earlier = dataclasses.replace(SETTINGS, sets=SET_RULES["plain-target"])
    assert "|sets=" not in earlier.key(strategy, items(1)[0])


def test_records_of_the_earlier_set_rule_are_reported_only_when_asked_for() -> None:
    parse = argument_parser().parse_args
    assert flip_settings(parse(["--flip-k", "5"])).sets == "k-plain"
    assert flip_settings(parse(["--flip-k", "5", "--flip-sets", "plain-target"])).sets is None


def test_the_command_line_measures_with_the_settings_defaults() -> None:
    # a command-line default of its own once cut every paraphrase set to 120 s, so the load of
    # the machine, not the candidate cap, decided how many paraphrases an item got
    args = argument_parser().parse_args(["--model", "local", "--flip-k", "5"])
    settings = flip_settings(args)
    defaults = FlipSettings(route="local", strategies=settings.strategies, flip_k=5, max_tokens={})
    assert settings.paraphrase_budget_s == defaults.paraphrase_budget_s == 900.0
    assert settings.max_candidates == defaults.max_candidates
    assert settings.instruction_role == defaults.instruction_role
    # the accuracy part's strategies run with the k the flip part's "<strategy>:<route>" use
    assert args.k == StrategyOptions().k
