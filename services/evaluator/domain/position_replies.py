"""The positional-bias protocol's reading of replies (docs/method.md §2.3): the strict letter
mapped back to the option it stood for, each option's first-token probability, a model's
swap-and-agree, vote and calibrated choice over every order, and the records for scoring."""

from __future__ import annotations

import math
from collections import Counter

from steadfast.services.evaluator.domain.position_requests import LETTERS
from steadfast.shared.answers import parse_choice_letter
from steadfast.shared.contracts.gateway import TokenAlternative
from steadfast.shared.contracts.position import OrderAnswer, Trial, TrialModelResult
from steadfast.shared.contracts.scoring import PositionRecord


def read_reply(
    order: list[int],
    text: str | None,
    error: str | None,
    logprobs: list[TokenAlternative] | None = None,
) -> OrderAnswer:
    """The strict letter of ``text``, the option it stood for in ``order`` and, given the first
    token's alternatives, each option's probability."""
    if text is None:
        return OrderAnswer(order=order, error=error or "no reply")
    choice = parse_choice_letter(text, len(order))
    chosen = order[LETTERS.index(choice)] if choice is not None else None
    probabilities = option_probabilities(order, logprobs) if logprobs is not None else None
    return OrderAnswer(
        order=order, text=text, choice=choice, chosen=chosen, option_probabilities=probabilities
    )


def option_probabilities(order: list[int], alternatives: list[TokenAlternative]) -> list[float]:
    """Each option's probability of being named by the first token (" B", "B." and "B" all
    name the option at B), by its index in the trial's options."""
    probabilities = [0.0] * len(order)
    for alternative in alternatives:
        # upper case only: a lower-case "a" is more often the article than the option
        letter = alternative.token.strip(" \t\n.:()*")
        if len(letter) == 1 and letter in LETTERS[: len(order)]:
            probabilities[order[LETTERS.index(letter)]] += math.exp(alternative.logprob)
    return probabilities


def model_result(model: str, answers: list[OrderAnswer]) -> TrialModelResult:
    """The model's replies to every order, with docs/method.md §2.3's swap-and-agree, permutation
    vote and (when probabilities were asked for) balanced position calibration."""
    chosen = [answer.chosen for answer in answers]
    complete = all(option is not None for option in chosen)
    consistent = len(set(chosen)) == 1 if complete else None
    votes = Counter(option for option in chosen if option is not None).most_common()
    tied = len(votes) > 1 and votes[0][1] == votes[1][1]
    return TrialModelResult(
        model=model,
        answers=answers,
        consistent=consistent,
        agreed=chosen[0] if consistent else None,
        vote=votes[0][0] if votes and not tied else None,
        calibrated=calibrated_choice(answers),
    )


def calibrated_choice(answers: list[OrderAnswer]) -> int | None:
    """The option with the highest probability averaged over every order (None when an order
    has no probabilities: the average would lean to the slots of the others)."""
    scored = [a.option_probabilities for a in answers if a.option_probabilities is not None]
    if not scored or len(scored) < len(answers):
        return None
    means = [sum(column) / len(scored) for column in zip(*scored, strict=True)]
    best = max(means)
    if best <= 0 or sum(1 for mean in means if math.isclose(mean, best)) > 1:
        return None
    return means.index(best)


def position_records(trial: Trial) -> list[PositionRecord]:
    """One record per reply given: where the reference option stood, and the letter replied."""
    return [
        PositionRecord(
            item_id=trial.item_id,
            model=result.model,
            order=str(index),
            choice=answer.choice,
            correct=LETTERS[answer.order.index(trial.reference)],
            condition=trial.condition,
            n_options=len(trial.options),
        )
        for result in trial.models
        for index, answer in enumerate(result.answers)
        if answer.error is None
    ]
