"""Which happening a "how many times" question counts."""

from __future__ import annotations

import pytest

from steadfast.services.verify.domain.direction import direction_difference
from steadfast.services.verify.domain.events import counted_event_changed

GREG = (
    "Greg has an alarm set to ring three times a day as a reminder. When the alarm goes off, it "
    "continues to ring until Greg turns it off. The first time it went off today, it rang four "
    "times. The second time it went off, it rang for three times as long as the first time. The "
    "third time, it rang for half as long as the second time. How many times did the alarm ring "
    "in all?"
)


@pytest.mark.parametrize(
    ("original", "candidate", "why"),
    [
        # accepted in a bench run (judge 0.57): 3 times it went off, 22 times it rang
        (
            GREG,
            "How many times did the alarm go off today, given that it was set to ring three times "
            "a day and the first ring lasted four times, the second ring lasted three times as "
            "long as the first, and the third ring lasted half as long as the second?",
            "counts the times it did 'go', where the original counts the times it did 'ring'",
        ),
        # the same happening in another form or another word, or more said of it
        (GREG, "... How many times did the alarm ring altogether today?", None),
        (GREG, "... How many times did the alarm sound in all?", None),
        (GREG, "... How many times has the alarm rung in all?", None),
        # two verbs the story never tells apart in one sentence are one happening
        (
            "Tom goes to the gym. He visits it 3 times a week. How many times does he visit the "
            "gym in a year?",
            "Tom visits the gym 3 times a week. How many times does he go to the gym in a year?",
            None,
        ),
        # reviewers' faithful rewordings: a verb of must or may, or one place gone to
        (
            "John has a 2-liter water bottle and needs to drink 6 liters of water a day. How "
            "many times does John have to refill his bottle each day?",
            "John has a 2-liter bottle and needs 6 liters a day. How many times does John need "
            "to refill his bottle each day?",
            None,
        ),
        (
            "On weekends, Maria goes to the park and visits her grandmother. How many times "
            "does Maria go to the park in 4 weekends?",
            "On weekends Maria goes to the park and visits her grandmother. How many times does "
            "Maria visit the park in 4 weekends?",
            None,
        ),
        # another thing (not this check's) or no "how many times"
        (GREG, "How many rings did the alarm make in all?", None),
        (
            "The phone rang 3 times and the alarm rang twice. How many times did the alarm ring?",
            "The phone rang 3 times and the alarm rang twice. How many times did the phone ring?",
            None,
        ),
    ],
)
def test_another_happening_counted(original: str, candidate: str, why: str | None) -> None:
    assert counted_event_changed(original, candidate) == why


def test_the_direction_check_refuses_it() -> None:
    candidate = "How many times did the alarm go off today?"
    assert direction_difference(GREG, candidate) == counted_event_changed(GREG, candidate)
    assert direction_difference(GREG, candidate) is not None
