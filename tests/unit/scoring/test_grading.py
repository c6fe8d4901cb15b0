"""Grading of factual (reference grader and judge verdicts), maths and choice answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from steadfast.services.scoring.domain import math_grading
from steadfast.services.scoring.domain.grader import grade_with_judges
from steadfast.services.scoring.domain.math_grading import _sympy_equal, grade_math
from steadfast.services.scoring.domain.reference_grading import (
    combine_votes,
    grade_choice,
    grade_factual_reference,
    judge_messages,
    parse_verdict,
)
from steadfast.shared.answers import ABSTENTION_KEY
from steadfast.shared.contracts.base import Problem
from steadfast.shared.contracts.scoring import Gold, GradeItem, GradeRequest, GradeResult, JudgeVote


def factual(answer: str, answers: list[str], incorrect: list[str] | None = None) -> GradeItem:
    return GradeItem(
        question="q?", answer_text=answer, gold=Gold(answers=answers, incorrect_answers=incorrect)
    )


@pytest.mark.parametrize(
    ("answer", "gold", "label"),
    [
        ("Paris", ["Paris"], "correct"),
        ("It is the city of Paris.", ["Paris"], "correct"),
        ("paris, france", ["Paris, France"], "correct"),
        ("La Città del Vaticano", ["città del vaticano"], "correct"),
        ("Lyon", ["Paris"], "incorrect"),
        ("Parisian", ["Paris"], "incorrect"),
        ("I don't know.", ["Paris"], "not_attempted"),
        ("Non lo so", ["Roma"], "not_attempted"),
        ("I'm not sure, but I think it is Paris", ["Paris"], "correct"),
        ("   ", ["Paris"], "invalid"),
        ("?!", ["Paris"], "invalid"),
        ("George Washington Carver", ["George Washington"], "correct"),
        ("Washington George", ["George Washington Carver"], "correct"),  # token F1 0.8
        ("George", ["George Washington Carver"], "incorrect"),  # token F1 0.5
        # a name's last letter is not an article: another numeral or letter is another answer
        ("World War II", ["World War I"], "incorrect"),
        ("It was World War I.", ["World War I"], "correct"),
        ("Vitamin C", ["Vitamin A"], "incorrect"),
        ("Queen Elizabeth II", ["Elizabeth I"], "incorrect"),
        ("The Beatles", ["Beatles"], "correct"),
    ],
)
def test_reference_grader(answer: str, gold: list[str], label: str) -> None:
    assert grade_factual_reference(factual(answer, gold), 0.8).label == label


def test_reference_grader_keeps_the_grouping_key() -> None:
    assert grade_factual_reference(factual("The Eiffel Tower!", ["x"]), 0.8).normalized_value == (
        "eiffel tower"
    )
    abstained = grade_factual_reference(factual("I don't know", ["x"]), 0.8)
    assert abstained.normalized_value == ABSTENTION_KEY


def test_a_hedge_that_names_a_known_incorrect_answer_is_incorrect() -> None:
    hedged = factual("I'm not sure, but I think it is London", ["Paris"], ["London"])
    assert grade_factual_reference(hedged, 0.8).label == "incorrect"
    only_hedged = factual("I'm not sure.", ["Paris"], ["London"])
    assert grade_factual_reference(only_hedged, 0.8).label == "not_attempted"


def test_token_f1_threshold_is_a_match() -> None:
    item = factual("Barack Hussein Obama the president", ["Barack Obama president"])
    assert grade_factual_reference(item, 0.8).label == "correct"
    assert grade_factual_reference(item, 0.95).label == "incorrect"


def test_incorrect_answers_win_over_a_weak_match() -> None:
    # TruthfulQA style: two weak (F1) matches: the higher F1 wins (0.78 against 0.59)
    item = factual(
        "Nothing in particular happens if you crack your knuckles",
        ["Nothing in particular happens when you crack knuckles often"],
        ["You get arthritis if you crack your knuckles"],
    )
    assert grade_factual_reference(item, 0.5).label == "correct"
    # a containment match with an incorrect answer beats a weak match with the right one
    contained = factual(
        "Cracking them gives you arthritis.",
        ["Cracking them gives you nothing"],
        ["arthritis"],
    )
    assert grade_factual_reference(contained, 0.5).label == "incorrect"
    wrong = factual(
        "You will get arthritis if you crack your knuckles",
        ["Nothing happens if you crack your knuckles"],
        ["you get arthritis if you crack your knuckles"],
    )
    result = grade_factual_reference(wrong, 0.5)
    assert result.label == "incorrect" and "incorrect answer" in result.reason


@pytest.mark.parametrize(
    ("reply", "gold", "label", "value"),
    [
        (r"So the answer is \boxed{\frac{1}{2}}.", "0.5", "correct", "0.5"),
        (r"\boxed{3} first... finally \boxed{4}", "4", "correct", "4"),
        ("She has 18 + 6 = 24 apples", "24", "correct", "24"),
        ("The total is $1,234.", "1234", "correct", "1234"),
        ("So the total is 12, as required.", "12", "correct", "12"),
        (r"\boxed{12,}", "12", "correct", "12"),
        (r"\boxed{x^2 + 2x + 1}", "(x+1)^2", "correct", "x^2+2x+1"),
        (r"\boxed{\sqrt{8}}", r"2\sqrt{2}", "correct", r"\sqrt{8}"),
        (r"\boxed{17}", "18", "incorrect", "17"),
        # the digit ending an expression is not the answer
        (r"So the answer is $\pi/2$.", "2", "incorrect", r"\pi/2"),
        ("The result is 2^{10}.", "10", "incorrect", "2^{10}"),
        ("The result is 2^{10}.", "1024", "correct", "2^{10}"),
        ("I cannot solve this.", "3", "invalid", None),
    ],
)
def test_math_grading(reply: str, gold: str, label: str, value: str | None) -> None:
    result = grade_math(reply, gold)
    assert result.label == label
    assert result.normalized_value == value


@pytest.mark.parametrize(
    ("reply", "options", "label", "parsed"),
    [
        ("B", ["x", "y"], "correct", "B"),
        (" (b). ", ["x", "y"], "correct", "B"),
        ("A", ["x", "y"], "incorrect", "A"),
        ("C", ["x", "y"], "invalid", None),
        ("C", ["x", "y", "z"], "incorrect", "C"),
        ("The answer is B", ["x", "y"], "invalid", None),
        ("A or B", None, "invalid", None),
    ],
)
def test_choice_grading(
    reply: str, options: list[str] | None, label: str, parsed: str | None
) -> None:
    item = GradeItem(
        question="q", answer_text=reply, gold=Gold(correct_option="B"), options=options
    )
    result = grade_choice(item)
    assert (result.label, result.parsed) == (label, parsed)


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("A", "correct"),
        ("b.", "incorrect"),
        ("C", "not_attempted"),
        ("CORRECT", "correct"),
        ("NOT_ATTEMPTED: it declines", "not_attempted"),
        ("**INCORRECT**", "incorrect"),
        ("Maybe", "invalid"),
        ("D", "invalid"),
    ],
)
def test_parse_verdict(reply: str, label: str) -> None:
    assert parse_verdict(reply) == label


def _votes(*labels: str) -> list[JudgeVote]:
    return [JudgeVote(model=f"j{i}", label=label, raw=label) for i, label in enumerate(labels)]  # type: ignore[arg-type]


def test_combine_votes_majority_and_ties() -> None:
    assert combine_votes(_votes("correct", "correct", "incorrect")).label == "correct"
    assert combine_votes(_votes("correct", "incorrect")).label == "incorrect"
    assert combine_votes(_votes("correct", "not_attempted")).label == "not_attempted"
    assert combine_votes(_votes("invalid", "correct")).label == "correct"
    assert combine_votes(_votes("invalid")).label == "invalid"
    assert len(combine_votes(_votes("correct", "correct")).votes or []) == 2


def test_judge_prompt_shows_the_question_and_every_gold_answer() -> None:
    item = factual("Lyon", ["Paris", "Paname"], ["Lyon"])
    item = GradeItem(question="Capital of France?", answer_text="Lyon", gold=item.gold)
    user = judge_messages(item)[1]["content"]
    assert "Capital of France?" in user and "- Paris" in user and "- Paname" in user
    assert "Known incorrect answers" in user and "Predicted answer: Lyon" in user


def test_code_in_a_maths_answer_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    # unparseable for math-verify (the trailing backslash): it used to reach sympify's eval
    answer = f"#### __import__('pathlib').Path({str(marker)!r}).touch()#\\\\"
    result = grade_math(answer, "5")
    assert not marker.exists()
    assert result.label in ("incorrect", "invalid")


def test_a_number_longer_than_python_reads_is_graded_not_an_error() -> None:
    result = grade_math("The answer is " + "1" * 5000, "11")
    assert result.label == "incorrect"


@pytest.mark.parametrize("value", ["9^9^9^9", "x+1", "1" * 100, "__import__('os')"])
def test_the_sympy_fallback_reads_only_short_plain_arithmetic(value: str) -> None:
    assert _sympy_equal("5", value) is None
    assert _sympy_equal("1/2", "0.5") is True


def test_one_answer_that_cannot_be_graded_leaves_the_batch_standing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = math_grading.grade_math

    def grade(answer: str, gold: str, timeout_s: int = 5) -> GradeResult:
        if answer == "boom":
            raise ValueError("a parser gave up")
        return real(answer, gold, timeout_s)

    monkeypatch.setattr(math_grading, "grade_math", grade)
    results = math_grading.grade_math_batch([("#### 4", "4"), ("boom", "4")], 5)
    assert [result.label for result in results] == ["correct", "invalid"]
    assert "ValueError" in (results[1].reason or "")


class RecordingJudges:
    """Judges that say CORRECT to every call and remember what they were asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def replies(self, calls: list[tuple[str, list[dict[str, str]]]]) -> list[str | Problem]:
        self.asked += [messages[-1]["content"] for _, messages in calls]
        return ["CORRECT"] * len(calls)


async def test_the_llm_grader_labels_a_wordless_answer_invalid_without_asking_a_judge() -> None:
    items = [factual(answer, ["Paris"]) for answer in ("Paris", "?!", "  ", "It is Paris")]
    judges = RecordingJudges()
    request = GradeRequest(task="factual", items=items, grader="llm", judge_models=["a", "b"])
    results = await grade_with_judges(request, judges)
    assert [result.label for result in results] == ["correct", "invalid", "invalid", "correct"]
    assert results[1].reason == "the answer has no words"
    assert len(judges.asked) == 4
    assert not any("?!" in prompt for prompt in judges.asked)
