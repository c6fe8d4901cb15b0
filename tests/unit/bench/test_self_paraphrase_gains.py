"""The bench's accuracy gain over the plain call: paired by item, with a bootstrap interval."""

from __future__ import annotations

import argparse

import pytest

from bench.self_paraphrase.__main__ import Answer, Row, gains_over_plain, print_table


def row(strategy: str, correct_items: set[str], order: list[str]) -> Row:
    answers = [
        Answer(
            text="",
            calls=1,
            latency_s=1.0,
            tokens=1,
            item_id=item_id,
            label="correct" if item_id in correct_items else "incorrect",
        )
        for item_id in order
    ]
    return Row("gsm8k", strategy, answers)


def test_the_gain_is_paired_by_item_with_an_interval_around_it() -> None:
    items = [f"q{i}" for i in range(20)]
    plain = row("plain", set(items[:10]), items)
    # right on 14 items: the plain call's 10 but q0 and q1, and 6 more; listed in another order
    vote = row("paraphrase-vote", set(items[2:16]), list(reversed(items)))
    gains = gains_over_plain([plain, vote], resamples=2000)
    mean, low, high = gains["gsm8k", "paraphrase-vote"]
    assert mean == pytest.approx(4 / 20)
    assert low < mean < high
    # 8 items differ (+1 six times, −1 twice): the interval is a few tenths wide, not zero
    assert 0.1 < high - low < 0.6
    assert ("gsm8k", "plain") not in gains


def test_identical_answers_gain_nothing_and_all_right_against_all_wrong_gains_one() -> None:
    items = [f"q{i}" for i in range(5)]
    plain = row("plain", set(), items)
    same = row("canonicalize", set(), items)
    perfect = row("paraphrase-vote", set(items), items)
    gains = gains_over_plain([plain, same, perfect], resamples=200)
    assert gains["gsm8k", "canonicalize"] == (0.0, 0.0, 0.0)
    assert gains["gsm8k", "paraphrase-vote"] == (1.0, 1.0, 1.0)


def test_without_a_plain_row_there_is_no_gain() -> None:
    assert gains_over_plain([row("paraphrase-vote", {"q0"}, ["q0"])]) == {}


def test_a_failed_request_is_counted_not_graded(capsys: pytest.CaptureFixture[str]) -> None:
    items = [f"q{i}" for i in range(4)]
    plain = row("plain", set(), items)
    vote = row("paraphrase-vote", set(items), items)
    # the request for q3 failed: no answer to pair or to average the cost over
    vote.originals[3] = Answer("", 0, 9.0, 0, item_id="q3", label="invalid", error="timeout")
    gains = gains_over_plain([plain, vote], resamples=200)
    assert gains["gsm8k", "paraphrase-vote"] == (1.0, 1.0, 1.0)
    args = argparse.Namespace(
        model="local", k=5, math_tokens=512, factual_tokens=128, flip_k=0, concurrency=2
    )
    print_table([plain, vote], args, wall_s=1.0)
    printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines() if "paraphrase-vote" in line)
    # docs/method.md §1.4: a report says how majority ties were treated
    assert "majority ties kept, broken towards correct" in printed
    # n, accuracy, ... latency mean and p50 over the 3 answered, and 1 error
    assert line.split()[2:4] == ["3", "1.00"]
    assert line.split()[-4:] == ["1.0", "1.0", "1", "1"]
