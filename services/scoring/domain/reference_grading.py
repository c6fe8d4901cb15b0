"""Answer grading of docs/method.md §1.3 and §2.1: the offline reference grader for factual answers,
strict option-letter parsing for choice items, and the parsing of LLM-judge verdicts.
Maths grading (math-verify) is in :mod:`services.scoring.domain.math_grading`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from steadfast.shared.answers import (
    answer_key,
    contains_phrase,
    is_abstention,
    normalize_factual,
    parse_choice_letter,
    token_f1,
)
from steadfast.shared.contracts.scoring import GradeItem, GradeResult, JudgeVote, Label


class Strength(IntEnum):
    """How strongly an answer matches a reference: none, a token-F1 match, containment, exact."""

    NONE = 0
    F1 = 1  # token F1 at or above the threshold: a weak match
    CONTAINS = 2  # the reference occurs in the answer as whole words
    EXACT = 3


@dataclass(frozen=True)
class Match:
    """An answer's best match against the references: its strength, token F1 and reference."""

    strength: Strength
    f1: float
    reference: str | None

    @property
    def key(self) -> tuple[int, float]:
        return int(self.strength), self.f1


NO_MATCH = Match(Strength.NONE, 0.0, None)


def best_match(answer: str, references: Sequence[str], f1_threshold: float) -> Match:
    """The strongest match of the answer against any reference."""
    normalized = normalize_factual(answer)
    best = NO_MATCH
    for reference in references:
        f1 = token_f1(answer, reference)
        if normalized and normalized == normalize_factual(reference):
            strength = Strength.EXACT
        elif contains_phrase(answer, reference):
            strength = Strength.CONTAINS
        elif f1 >= f1_threshold:
            strength = Strength.F1
        else:
            strength = Strength.NONE
        match = Match(strength, f1, reference)
        if strength and match.key > best.key:
            best = match
    return best


#: a factual answer without a single word ("", "?!"): invalid whichever grader runs
WORDLESS = GradeResult(label="invalid", parsed=None, reason="the answer has no words")


def grade_factual_reference(item: GradeItem, f1_threshold: float) -> GradeResult:
    """Normalised match against any acceptable answer, with abstention detection.

    An abstention is ``not_attempted`` unless the answer still contains an acceptable or a
    known incorrect answer ("I'm not sure, but it is Paris"), which is then graded. When
    ``incorrect_answers`` are given the stronger match wins (exact > containment > token F1,
    then the higher F1): a match with an incorrect answer beats a weak (token-F1 only) match
    with an acceptable one, and a tie goes to incorrect.
    An answer without a single word is ``invalid``."""
    parsed = normalize_factual(item.answer_text) or None
    if parsed is None:
        return WORDLESS
    label, reason = _reference_verdict(item, f1_threshold)
    return GradeResult(
        label=label,
        parsed=parsed,
        reason=reason,
        normalized_value=answer_key("factual", item.answer_text),
    )


def _reference_verdict(item: GradeItem, f1_threshold: float) -> tuple[Label, str]:
    text = item.answer_text
    right = best_match(text, item.gold.answers or [], f1_threshold)
    wrong = best_match(text, item.gold.incorrect_answers or [], f1_threshold)
    # a hedge that still names an answer is graded on it, as the judges are told to
    names_one = max(right.strength, wrong.strength) >= Strength.CONTAINS
    if is_abstention(text) and not names_one:
        return "not_attempted", "the answer abstains"
    if wrong.strength and wrong.key >= right.key:
        return (
            "incorrect",
            f"matches the incorrect answer {wrong.reference!r} ({wrong.strength.name})",
        )
    if right.strength:
        return "correct", f"matches {right.reference!r} ({right.strength.name}, F1 {right.f1:.2f})"
    return "incorrect", "no acceptable answer matches"


def grade_choice(item: GradeItem) -> GradeResult:
    """Strict option letter (docs/method.md §2.1); anything else is ``invalid``."""
    n_options = len(item.options) if item.options else 26
    letter = parse_choice_letter(item.answer_text, n_options)
    if letter is None:
        return GradeResult(
            label="invalid",
            parsed=None,
            reason=f"the reply is not exactly one option letter A–{chr(ord('A') + n_options - 1)}",
        )
    correct = letter == item.gold.correct_option
    return GradeResult(
        label="correct" if correct else "incorrect",
        parsed=letter,
        normalized_value=letter,
        reason=f"chose {letter}, the correct option is {item.gold.correct_option}",
    )


# --- LLM judge --------------------------------------------------------------------------------

JUDGE_SYSTEM_PROMPT = """You grade answers to questions. You see the question, the gold target \
(one or more acceptable answers), possibly answers known to be wrong, and a predicted answer. \
Decide whether the predicted answer is:
A) CORRECT: it contains an acceptable answer and does not contradict it. Hedging is fine if it \
commits to the acceptable answer; small spelling differences and extra correct detail are fine.
B) INCORRECT: it states a different answer, contradicts the gold target, or names several \
candidate answers.
C) NOT_ATTEMPTED: it declines to answer, says it does not know, or gives no answer to the \
question, without stating a wrong one.
Judge only the predicted answer against the gold target; do not solve the question yourself. \
Reply with exactly one letter: A, B or C."""

_VERDICT_WORDS: dict[str, Label] = {
    "CORRECT": "correct",
    "INCORRECT": "incorrect",
    "NOT_ATTEMPTED": "not_attempted",
    "NOT ATTEMPTED": "not_attempted",
}
_VERDICT_LETTERS: dict[str, Label] = {"A": "correct", "B": "incorrect", "C": "not_attempted"}
#: on a tied vote the more cautious verdict wins
_TIE_ORDER: tuple[Label, ...] = ("incorrect", "not_attempted", "correct")


def judge_messages(item: GradeItem) -> list[dict[str, str]]:
    """The grader prompt; it always shows the original question and the gold answers."""
    gold = "\n".join(f"- {answer}" for answer in item.gold.answers or [])
    parts = [f"Question: {item.question}", f"Gold target (acceptable answers):\n{gold}"]
    if item.gold.incorrect_answers:
        wrong = "\n".join(f"- {answer}" for answer in item.gold.incorrect_answers)
        parts.append(f"Known incorrect answers:\n{wrong}")
    parts.append(f"Predicted answer: {item.answer_text}")
    parts.append("Grade: A (CORRECT), B (INCORRECT) or C (NOT_ATTEMPTED)? One letter.")
    return [
        {"role": "system", "content": JUDGE_SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def parse_verdict(reply: str) -> Label:
    """``"A"`` / ``"B."`` / ``"C"`` or the verdict word; anything else is ``invalid``."""
    letter = parse_choice_letter(reply, 3)
    if letter is not None:
        return _VERDICT_LETTERS[letter]
    words = reply.strip().upper().replace("*", "")
    for word in sorted(_VERDICT_WORDS, key=len, reverse=True):
        if words.startswith(word):
            return _VERDICT_WORDS[word]
    return "invalid"


def combine_votes(votes: Sequence[JudgeVote]) -> GradeResult:
    """Majority of the judges' valid verdicts; ties go to the more cautious verdict."""
    valid: Counter[str] = Counter(vote.label for vote in votes if vote.label != "invalid")
    if not valid:
        return GradeResult(
            label="invalid",
            parsed=None,
            reason="no judge gave a verdict that could be read",
            votes=list(votes),
        )
    top = max(valid.values())
    label = next(label for label in _TIE_ORDER if valid.get(label) == top)
    tally = ", ".join(f"{name} {count}" for name, count in sorted(valid.items()))
    return GradeResult(
        label=label,
        parsed=None,
        reason=f"judge majority ({tally} of {len(votes)} votes)",
        votes=list(votes),
    )
