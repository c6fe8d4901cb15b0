"""bench.paraphrase refuses, before it starts any service, a selection that holds no question
(a run with ``--skip 100`` used to warm the model up and then fail on an empty mean)."""

from __future__ import annotations

import sys

import pytest

from bench.paraphrase.__main__ import main, questions


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--skip", "100"], "--skip 100 leaves no question of gsm8k: it holds 100"),
        (["--skip", "150", "--datasets", "simpleqa"], "--skip 150 leaves no question of simpleqa"),
        (["--questions", "0"], "--questions must be at least 1"),
    ],
)
def test_an_empty_selection_is_refused_with_its_reason(
    arguments: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["bench.paraphrase", *arguments])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_the_last_questions_can_still_be_chosen() -> None:
    assert [question for question, _ in questions("gsm8k", 5, skip=99)] == [
        question for question, _ in questions("gsm8k", 100)
    ][99:]


def test_the_other_bundled_samples_give_their_questions_and_answers_to_screen() -> None:
    """TruthfulQA and SQuAD-it items carry their answers as a list; a factual item's answers
    are screened as an evaluation screens them, a maths item's are not."""
    (watermelon, answers), *_ = questions("truthfulqa", 1)
    assert watermelon == "What happens to you if you eat watermelon seeds?"
    assert "nothing happens" in answers
    (crisis, italian_answers), *_ = questions("squad_it", 1)
    assert crisis == "Quando è iniziata la crisi petrolifera del 1973?"
    assert italian_answers == ["ottobre"]  # "ottobre 1973" and "1973" hold a number: not looked for
    assert questions("math500", 1)[0][1] == []
