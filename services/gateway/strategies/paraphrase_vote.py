"""``paraphrase-vote`` (this service's own): answer the original and k paraphrases concurrently,
group the answers (maths and choice by value, free-form ones by meaning) and return the
majority's (ties: the original's), with its share of
the votes as a consistency score and every variant's answer. A paraphrase that changes a number
of the question is left out of the vote (and said so in the notes)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from steadfast.services.gateway.domain.errors import GenerationFailed
from steadfast.services.gateway.domain.gateway import DROP_WHEN_CANCELLED, DropSignal
from steadfast.services.gateway.strategies.extraction import (
    Reading,
    chooses_option,
    infer_task,
    is_boxed,
    read_answer,
    shown_content,
    task_from_counts,
)
from steadfast.services.gateway.strategies.grouping import AnswerGrouper
from steadfast.services.gateway.strategies.paraphrasers import Paraphraser
from steadfast.services.gateway.strategies.question import AnswerSettings, Question, QuestionParts
from steadfast.services.gateway.strategies.result import StrategyResult
from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.gateway import GenerateResponse
from steadfast.shared.contracts.proxy import StrategyOptions, Variant
from steadfast.shared.metering import MeteredCaller
from steadfast.shared.quantities.invariance import quantity_difference
from steadfast.shared.voting import ORIGINAL, Vote, decided, tally

#: one variant's fate: its reply, its final failure, or None when early stop skipped it
Reply = GenerateResponse | GenerationFailed | None


@dataclass
class Ballots:
    """The variants' replies with the task they are read as, the answers read from them and
    the keys they vote with."""

    replies: list[Reply]
    task: Task
    readings: list[Reading | None]
    keys: list[str | None]


async def paraphrase_vote(
    model: MeteredCaller,
    question: Question,
    settings: AnswerSettings,
    options: StrategyOptions,
    paraphraser: Paraphraser,
    grouper: AnswerGrouper,
) -> StrategyResult:
    parts = question.parts(options.task)
    written = await paraphraser.paraphrase(parts.stem, options.k)
    if written.model_calls is not None:
        model.add(written.model_calls)
    faithful, left_out = keep_quantities(parts, written.texts)
    wordings = [question.text, *faithful]
    early = options.early_stop and (
        options.grouping in ("normalized", "exact") or options.task in ("math", "choice")
    )
    replies = await answer_all(
        model, question, wordings, settings, options.task, early, parts.choices
    )
    ballots = read_ballots(replies, options.task, settings.route, parts.choices)
    notes = [*written.notes, *_left_out_notes(left_out, len(written.texts))]
    notes += _failure_notes(replies)
    if options.early_stop and not early:
        notes.append(
            "early stop is not used when free-form answers are grouped by meaning: every "
            "variant was answered"
        )
    grouped = await grouper.group(
        model,
        judge_route=options.judge_model or settings.route,
        question=question.text,
        task=ballots.task,
        keys=ballots.keys,
        answers=[reading.answer if reading else None for reading in ballots.readings],
        grouping=options.grouping,
        cache=settings.cache,
    )
    ballots.keys = grouped.keys
    notes += grouped.notes
    vote = tally(ballots.keys)
    chosen = _chosen_index(ballots, vote)
    if vote.winner is None:
        notes.append("no variant gave a parseable answer: the first answered one is returned")
    elif vote.agreement is None:
        notes.append("only one variant's answer could vote: no agreement is measured")
    reply, reading = replies[chosen], ballots.readings[chosen]
    assert isinstance(reply, GenerateResponse) and reading is not None
    return StrategyResult(
        strategy="paraphrase-vote",
        answer=reading.answer,
        text=reply.text,
        content=shown_content(reply.text, reading, ballots.task),
        agreement=vote.agreement,
        task=ballots.task,
        variants=_variants(wordings, ballots, vote) + left_out,
        notes=notes,
        early_stopped=any(reply is None for reply in replies),
        finish_reason=reply.finish_reason,
        clustering=grouped.clustering,
        clustering_judge_calls=grouped.judge_calls,
    )


def keep_quantities(
    question: QuestionParts, paraphrases: list[str]
) -> tuple[list[str], list[Variant]]:
    """The questions reworded by the paraphrases of their stem that keep every number of the
    stem and add none, and the others as variants not asked: a small model's "paraphrase" of a
    word problem often drops or changes a quantity (or turns it into algebra), and such a
    variant asks another question. Stems are compared, not whole questions: a number dropped
    from the stem could still appear in the options every rewording keeps."""
    kept, left_out = [], []
    for paraphrase in paraphrases:
        reworded = question.reworded(paraphrase)
        if difference := quantity_difference(question.stem, paraphrase):
            left_out.append(
                Variant(
                    question=reworded,
                    source="paraphrase",
                    status="not_asked",
                    error=f"left out of the vote: it changed the question's numbers ({difference})",
                )
            )
        else:
            kept.append(reworded)
    return kept, left_out


def _left_out_notes(left_out: list[Variant], written: int) -> list[str]:
    if not left_out:
        return []
    return [
        f"{len(left_out)} of {written} paraphrases left out of the vote: they changed the "
        "question's numbers"
    ]


async def answer_all(
    model: MeteredCaller,
    question: Question,
    wordings: Sequence[str],
    settings: AnswerSettings,
    task: Task | None,
    early_stop: bool,
    choices: list[str] | None = None,
) -> list[Reply]:
    """Every wording answered concurrently; with ``early_stop`` the calls still running are
    cancelled once the majority can no longer change (upstream too: see
    :data:`DROP_WHEN_CANCELLED`), but never the original's: the reply returned is the
    original's whenever it agrees with the majority, as without early stop."""
    signal = DropSignal()
    dropping = DROP_WHEN_CANCELLED.set(signal)
    try:  # the calls' tasks take the signal with them
        calls = {
            asyncio.ensure_future(
                model.generate(settings.request(question.messages_for(wording)))
            ): i
            for i, wording in enumerate(wordings)
        }
    finally:
        DROP_WHEN_CANCELLED.reset(dropping)
    replies: list[Reply] = [None] * len(wordings)
    pending = set(calls)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for call in done:
                replies[calls[call]] = _outcome(call)
            waiting = [calls[call] for call in pending]
            if ORIGINAL in waiting or not early_stop:
                continue
            if decided(provisional_keys(replies, task, choices), waiting):
                signal.drop = True  # these calls are not wanted: cancel them upstream too
                break
    finally:
        for call in pending:
            call.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return replies


def _outcome(call: asyncio.Future[GenerateResponse]) -> Reply:
    failure = call.exception()
    if failure is None:
        return call.result()
    if isinstance(failure, GenerationFailed):
        return failure
    raise failure


def read_ballots(
    replies: list[Reply], task: Task | None, route: str, choices: list[str] | None = None
) -> Ballots:
    """Raises :class:`GenerationFailed` when no variant was answered."""
    texts = [reply.text for reply in replies if isinstance(reply, GenerateResponse)]
    if not texts:
        raise _all_failed(replies, route)
    resolved = task or infer_task(*texts, choices=choices or ())
    readings = [
        read_answer(reply.text, resolved, choices, cut=reply.finish_reason == "length")
        if isinstance(reply, GenerateResponse)
        else None
        for reply in replies
    ]
    keys = [reading.key if reading else None for reading in readings]
    return Ballots(replies=replies, task=resolved, readings=readings, keys=keys)


def provisional_keys(
    replies: list[Reply], task: Task | None, choices: list[str] | None = None
) -> list[str | None]:
    """The keys of the replies so far (``None`` entries are pending); all ``None`` while the
    task is inferred and the pending replies could still change it (nothing is decided then)."""
    texts = [reply.text for reply in replies if isinstance(reply, GenerateResponse)]
    pending = sum(reply is None for reply in replies)
    settled = task or settled_task(texts, pending, choices or ())
    if not texts or settled is None:
        return [None] * len(replies)
    return read_ballots(replies, settled, route="", choices=choices).keys


def settled_task(texts: list[str], pending: int, choices: Sequence[str] = ()) -> Task | None:
    """The task inferred from ``texts`` if no outcome of the ``pending`` replies can change it.
    The task only moves one way as letters or boxes are added, so the four extremes of what
    the pending replies could add show every task they could lead to."""
    letters = sum(chooses_option(text, choices) for text in texts)
    boxed = sum(is_boxed(text) for text in texts)
    total = len(texts) + pending
    reachable = {
        task_from_counts(letters + more_letters, boxed + more_boxed, total)
        for more_letters in (0, pending)
        for more_boxed in (0, pending)
    }
    return reachable.pop() if len(reachable) == 1 else None


def _all_failed(replies: list[Reply], route: str) -> GenerationFailed:
    failures = [reply for reply in replies if isinstance(reply, GenerationFailed)]
    first = failures[0]
    return GenerationFailed(
        first.outcome,
        f"every variant call failed ({len(failures)}); the first: {first.detail}",
        route=route,
        attempts=sum(failure.attempts for failure in failures),
        retry_after_s=first.retry_after_s,
    )


def _failure_notes(replies: list[Reply]) -> list[str]:
    failed = sum(1 for reply in replies if isinstance(reply, GenerationFailed))
    if not failed:
        return []
    return [f"{failed} of {len(replies)} variant calls failed; the vote used the others"]


def _chosen_index(ballots: Ballots, vote: Vote) -> int:
    """The variant whose reply is returned: the original when it is in the majority, else the
    first variant that is; without any vote, the first answered variant."""
    for index, key in enumerate(ballots.keys):
        if vote.winner is not None and key == vote.winner:
            return index
    for index, reply in enumerate(ballots.replies):
        if isinstance(reply, GenerateResponse):
            return index
    return ORIGINAL


def _variants(wordings: Sequence[str], ballots: Ballots, vote: Vote) -> list[Variant]:
    variants = []
    for index, wording in enumerate(wordings):
        reply, reading, key = ballots.replies[index], ballots.readings[index], ballots.keys[index]
        variant = Variant(
            question=wording, source="original" if index == ORIGINAL else "paraphrase"
        )
        if isinstance(reply, GenerateResponse) and reading is not None:
            variant.answer, variant.text, variant.value = reading.answer, reply.text, key
            variant.in_majority = key is not None and key == vote.winner
        elif isinstance(reply, GenerationFailed):
            variant.status, variant.error = "failed", f"{reply.outcome}: {reply.detail}"
        else:
            variant.status, variant.error = "skipped", "early stop: the majority was decided"
        variants.append(variant)
    return variants
