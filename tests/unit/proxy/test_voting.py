"""Majority, ties and early-stop decisions of the vote."""

from __future__ import annotations

import pytest

from steadfast.shared.voting import decided, tally


def test_majority_wins_with_its_share_of_the_voters() -> None:
    vote = tally(["12", "18", "18", "18", "12"])
    assert (vote.winner, vote.count, vote.voters, vote.tied) == ("18", 3, 5, False)
    assert vote.agreement == pytest.approx(0.6)


def test_a_tie_goes_to_the_original() -> None:
    vote = tally(["7", "9", "9", "7"])
    assert vote.winner == "7" and vote.tied and vote.agreement == 0.5


def test_a_tie_without_the_original_goes_to_the_value_seen_first() -> None:
    vote = tally(["1", "9", "4", "4", "9"])
    assert vote.winner == "9" and vote.tied


def test_unparseable_answers_take_no_part() -> None:
    vote = tally([None, "a", None, "b", "a"])
    assert (vote.winner, vote.count, vote.voters) == ("a", 2, 3)


def test_nobody_voting_has_no_winner_and_no_agreement() -> None:
    vote = tally([None, None])
    assert vote.winner is None and vote.agreement is None


@pytest.mark.parametrize(
    ("keys", "pending", "expected"),
    [
        (["a", "a", "a", None, None], [3, 4], True),  # 3 vs at most 0 + 2
        (["a", "a", "b", None, None], [3, 4], False),  # b could reach 3
        (["a", "b", "b", None, None], [3, 4], False),
        (["a", "a", "b", "c", None], [4], True),  # original leads: a tie would still be its
        ([None, "a", "a", "b", None], [0, 4], False),  # an unanswered original could tie and win
        ([None, "a", "a", "a", None], [0, 4], True),
        (["a", "b", None, None, None], [], True),
        ([None, None, None, None, None], [0, 1, 2, 3, 4], False),
        (["a", None, None, None, None], [2, 3, 4], False),  # unparseable answers do not count
        (["a", "b", "b", "b", "b", None], [5], True),  # b leads the original beyond reach
        (["a", "b", "b", "b", None, None], [4, 5], False),  # the original could tie b and win
    ],
)
def test_decided_only_when_the_remaining_answers_cannot_change_the_winner(
    keys: list[str | None], pending: list[int], expected: bool
) -> None:
    assert decided(keys, pending) is expected
