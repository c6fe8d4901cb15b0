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
