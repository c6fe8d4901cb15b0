"""Majority answer and agreement, gold answers, item assembly, answer prompts."""

from __future__ import annotations

import msgspec

from steadfast.services.evaluator.domain.item_results import assemble_item, majority_of
from steadfast.services.evaluator.domain.job_results import summarise
from steadfast.services.evaluator.domain.pipeline import (
    answer_request,
    gold_of,
    grade_requests,
    models_of,
    paraphrase_set_id,
    request_key,
)
from steadfast.services.evaluator.domain.prompts import (
    CHOICE_INSTRUCTION,
    FACTUAL_INSTRUCTION,
    MATH_INSTRUCTION,
)
from steadfast.services.evaluator.records import AnswerRecord
from steadfast.shared.contracts.evaluator import EvaluationItem, EvaluationSettings, ItemResult
from steadfast.shared.contracts.perturb import ParaphraseRequest
from steadfast.shared.contracts.scoring import Gold


def answer(
    variant: int, text: str | None, value: str | None, status: str = "graded"
) -> AnswerRecord:
    return AnswerRecord(0, "m", variant, f"v{variant}", status, text=text, value=value)


def test_majority_and_agreement() -> None:
    answers = [answer(0, "Paris.", "paris"), answer(1, "paris", "paris"), answer(2, "Lyon", "lyon")]
    majority = majority_of(answers)
    assert majority.value == "paris" and majority.text == "Paris."
    assert majority.agreement == 2 / 3


def test_tie_goes_to_the_original_else_first_seen() -> None:
    tied = [answer(0, "b", "b"), answer(1, "a", "a"), answer(2, "b", "b"), answer(3, "a", "a")]
    assert majority_of(tied).value == "b"
    original_alone = [answer(0, "c", "c"), answer(1, "a", "a"), answer(2, "b", "b")]
    assert majority_of(original_alone).value == "c"
    without_original = [answer(1, "a", "a"), answer(2, "b", "b")]
    assert majority_of(without_original).value == "a"


def test_unparseable_and_failed_answers() -> None:
    answers = [
        answer(0, "no idea what", None),
        answer(1, "42", "42"),
        answer(2, None, None, status="failed"),
    ]
    majority = majority_of(answers)
    assert majority.value == "42"
    assert majority.agreement is None  # one readable answer agrees with itself: no share
    assert majority_of([answer(0, None, None, status="failed")]).agreement is None
    disagreeing = [*answers, answer(3, "41", "41")]
    assert majority_of(disagreeing).agreement == 1 / 2  # of the readable answers (method §1.4)


def test_gold_by_task() -> None:
    item = EvaluationItem(question="q", answer="7", answers=["seven"])
    assert gold_of("factual", item) == Gold(answers=["seven", "7"])
    assert gold_of("math", item) == Gold(answers=["seven"], answer="7")
    assert gold_of("factual", EvaluationItem(question="q")) is None
    choice = EvaluationItem(question="q", options=["a", "b"], correct_option="B", task="choice")
    assert gold_of("factual", choice) == Gold(correct_option="B")


def test_models_and_mixed_task_grading() -> None:
    settings = EvaluationSettings(model="a", models=["b", "a"])
    assert models_of(settings) == ["b", "a"]
    assert models_of(EvaluationSettings(model="a", models=["b"])) == ["a", "b"]
    fact = EvaluationItem(question="q1", answers=["x"])
    maths = EvaluationItem(question="q2", answer="3", task="math")
    graded = [
        (fact, Gold(answers=["x"]), "x"),
        (maths, Gold(answer="3"), "3"),
        (fact, Gold(answers=["x"]), "y"),
    ]
    requests = grade_requests(EvaluationSettings(model="m"), graded)
    assert [(indices, request.task) for indices, request in requests] == [
        ([0, 2], "factual"),
        ([1], "math"),
    ]


def test_answer_prompts_follow_the_method() -> None:
    settings = EvaluationSettings(model="m", system_prompt="Be brief.")
    maths = EvaluationItem(question="1+1?", task="math")
    request = answer_request(settings, maths, "m", "What is one plus one?")
    assert request.temperature == 0 and request.messages[0].role == "system"
    assert "\\boxed{}" in request.messages[1].content
    assert request.messages[1].content.endswith("What is one plus one?")
    choice = EvaluationItem(question="Pick", options=["red", "blue"], correct_option="A")
    text = (
        answer_request(EvaluationSettings(model="m", task="choice"), choice, "m", "Pick")
        .messages[0]
        .content
    )
    assert "A. red\nB. blue" in text
    factual = answer_request(EvaluationSettings(model="m"), EvaluationItem(question="q"), "m", "q")
    assert "I don't know" in factual.messages[0].content


def test_the_answer_request_names_the_items_task_for_strategy_models() -> None:
    # the item's own task wins over the evaluation's
    settings = EvaluationSettings(model="paraphrase-vote:m", task="factual")
    maths = answer_request(settings, EvaluationItem(question="1+1?", task="math"), "m", "1+1?")
    factual = answer_request(settings, EvaluationItem(question="Who?"), "m", "Who?")
    assert (maths.task, factual.task) == ("math", "factual")


def test_the_default_layout_is_one_user_message_with_the_instruction_first() -> None:
    factual = answer_request(EvaluationSettings(model="m"), EvaluationItem(question="q"), "m", "q")
    assert [(m.role, m.content) for m in factual.messages] == [
        ("user", f"{FACTUAL_INSTRUCTION}\n\nQuestion: q")
    ]
    with_context = EvaluationItem(question="q", task="math", context="c")
    request = answer_request(EvaluationSettings(model="m"), with_context, "m", "q")
    assert request.messages[0].content == f"Context:\nc\n\n{MATH_INSTRUCTION}\n\nProblem: q"


def test_the_instruction_in_the_system_message_leaves_the_question_alone() -> None:
    """What a self-paraphrase model needs: it rewrites the last user message, all of it."""
    settings = EvaluationSettings(model="m", task="math", instruction_role="system")
    request = answer_request(settings, EvaluationItem(question="1+1?"), "m", "What is 1 + 1?")
    assert [(m.role, m.content) for m in request.messages] == [
        ("system", MATH_INSTRUCTION),
        ("user", "What is 1 + 1?"),
    ]
    briefed = EvaluationSettings(model="m", system_prompt="Be brief.", instruction_role="system")
    request = answer_request(briefed, EvaluationItem(question="q", context="c"), "m", "q")
    assert [(m.role, m.content) for m in request.messages] == [
        ("system", f"Be brief.\n\n{FACTUAL_INSTRUCTION}\n\nContext:\nc"),
        ("user", "q"),
    ]
    choice = EvaluationItem(question="Pick", options=["red", "blue"], correct_option="A")
    chosen = EvaluationSettings(model="m", task="choice", instruction_role="system")
    request = answer_request(chosen, choice, "m", "Pick")
    assert request.messages[1].content == "Question: Pick\nA. red\nB. blue"
    passage = EvaluationItem(question="Pick", options=["red", "blue"], context="c")
    request = answer_request(chosen, passage, "m", "Pick")
    assert [(m.role, m.content) for m in request.messages] == [
        ("system", f"{CHOICE_INSTRUCTION}\n\nContext:\nc"),
        ("user", "Question: Pick\nA. red\nB. blue"),
    ]
    # stored answers are reused by the exact request: the two layouts never share one
    item = EvaluationItem(question="q")
    in_user = answer_request(EvaluationSettings(model="m"), item, "m", "q")
    in_system_settings = EvaluationSettings(model="m", instruction_role="system")
    in_system = answer_request(in_system_settings, item, "m", "q")
    assert request_key(in_user) != request_key(in_system)


def test_a_self_paraphrase_model_puts_every_models_instruction_in_the_system_message() -> None:
    item = EvaluationItem(question="q")
    mixed = EvaluationSettings(models=["local", "paraphrase-vote:local"])
    for model in ("local", "paraphrase-vote:local"):
        request = answer_request(mixed, item, model, "q")
        assert [(m.role, m.content) for m in request.messages] == [
            ("system", FACTUAL_INSTRUCTION),
            ("user", "q"),
        ]
    # a route whose name merely contains ":" is no strategy; a layout set explicitly is kept
    plain = EvaluationSettings(models=["local", "ollama:qwen"])
    assert answer_request(plain, item, "ollama:qwen", "q").messages[0].role == "user"
    kept = EvaluationSettings(models=["canonicalize:local"], instruction_role="user")
    assert answer_request(kept, item, "canonicalize:local", "q").messages[0].role == "user"


def test_item_assembly_reports_failures_and_status() -> None:
    item = EvaluationItem(id="x", question="q", answers=["a"])
    answers = [
        AnswerRecord(0, "m", 0, "q", "graded", text="a", label="correct", value="a"),
        AnswerRecord(0, "m", 1, "q1", "failed", error="gateway: timeout (after 3 attempts)"),
        AnswerRecord(0, "m", 2, "q2", "graded", text="no idea", label="invalid", value=None),
    ]
    result = assemble_item(
        item_key="x",
        item=item,
        models=["m"],
        paraphrase_set=None,
        answers=answers,
        paraphrase_error="paraphrase set incomplete: 1 of 3 accepted",
    )
    assert result.status == "partial"
    assert [e.stage for e in result.errors] == ["paraphrase", "answer"]
    assert result.models[0].original_label == "correct" and result.models[0].failed == 1
    assert (result.models[0].answered, result.models[0].unparsed) == (2, 1)
    assert result.models[0].agreement is None and result.models[0].majority_answer == "a"
    assert result.gold == ["a"]


def test_the_paraphrase_set_id_ignores_the_cache_switch_only() -> None:
    request = ParaphraseRequest(question="How many legs do 3 spiders have?", k=5, generator="m")
    uncached = msgspec.structs.replace(request, cache=False)
    other_seed = msgspec.structs.replace(request, seed=7)
    assert paraphrase_set_id(uncached) == paraphrase_set_id(request)
    assert paraphrase_set_id(other_seed) != paraphrase_set_id(request)


def test_a_model_summary_adds_up_its_items_counts_and_averages_their_agreement() -> None:
    def item_of(key: str, values: list[str | None], failed: int) -> ItemResult:
        answers = [
            AnswerRecord(0, "m", i, "q", "graded", text=value or "?", value=value)
            for i, value in enumerate(values)
        ]
        answers += [AnswerRecord(0, "m", len(values) + i, "q", "failed") for i in range(failed)]
        return assemble_item(
            item_key=key,
            item=EvaluationItem(id=key, question="q"),
            models=["m"],
            paraphrase_set=None,
            answers=answers,
        )

    items = [item_of("a", ["1", "1", None], 1), item_of("b", ["2", "3", "3", None], 0)]
    [summary] = summarise(["m"], items, None)
    assert (summary.answered, summary.unparsed, summary.failed) == (7, 2, 1)
    assert summary.mean_agreement == (1.0 + 2 / 3) / 2


def test_an_item_result_names_the_language_its_models_were_asked_in() -> None:
    from steadfast.services.evaluator.domain.report import languages_of

    def assembled(question: str, asked_in: str = "en") -> ItemResult:
        return assemble_item(
            item_key="x", item=EvaluationItem(question=question), models=["m"],
            paraphrase_set=None, answers=[], asked_in=asked_in,
        )  # fmt: skip

    italian = assembled("Quando è stata la seconda crisi petrolifera?", asked_in="it")
    english = assembled("When was the second oil crisis?")
    # the language it was asked in, not the one its text is in now (a row from before)
    older = assembled("Quando è stata la prima crisi petrolifera?")
    assert (italian.language, english.language, older.language) == ("it", "en", "en")
    assert languages_of([italian, english, older]) == "it (1 item), en (2 items)"


def test_an_item_result_names_its_own_task_and_a_mixed_sample_counts_them() -> None:
    from steadfast.services.evaluator.domain.report import described_counts, tasks_of

    def assembled(task: str | None) -> ItemResult:
        item = msgspec.convert({"question": "q", "task": task}, EvaluationItem)
        return assemble_item(item_key="x", item=item, models=["m"], paraphrase_set=None, answers=[])

    maths, own_factual, default = assembled("math"), assembled("factual"), assembled(None)
    assert (maths.task, own_factual.task, default.task) == ("math", "factual", None)
    tasks = tasks_of([own_factual, maths, default, maths], "factual")
    assert described_counts(tasks) == "factual (2 items), math (2 items)"
    assert described_counts(tasks_of([default], "math")) == "math (1 item)"
