"""``single-prompt`` (the study's strategy): one call in which the model restates the question
itself, reads the restatements with the original and gives one final answer."""

from __future__ import annotations

import dataclasses

from steadfast.services.gateway.strategies import prompts
from steadfast.services.gateway.strategies.extraction import infer_task, read_answer, shown_content
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.result import StrategyResult
from steadfast.shared.contracts.proxy import StrategyOptions, Variant
from steadfast.shared.metering import MeteredCaller


async def single_prompt(
    model: MeteredCaller, question: Question, settings: AnswerSettings, options: StrategyOptions
) -> StrategyResult:
    prompt = prompts.SINGLE_PROMPT.format(n=options.k, question=question.text)
    # the caller's stop strings bound the answer, not the restatements written before it
    call = dataclasses.replace(
        with_restatement_allowance(settings, question.text, options.k), stop=None
    )
    response = await model.generate(call.request(question.messages_for(prompt)))
    reply = stopped_in_answer(response.text, settings.stop)
    final = prompts.final_answer(reply)
    choices = question.parts(options.task).choices
    task = options.task or infer_task(final, choices=choices)
    reading = read_answer(final, task, choices, cut=response.finish_reason == "length")
    original = Variant(
        question=question.text,
        source="original",
        answer=reading.answer,
        text=reply,
        value=reading.key,
        in_majority=True,
    )
    written = [
        Variant(question=text, source="paraphrase", status="not_asked")
        for text in prompts.restatements(reply)
    ]
    notes = (
        [] if "final answer" in response.text.lower() else ["the reply has no final-answer line"]
    )
    return StrategyResult(
        strategy="single-prompt",
        answer=reading.answer,
        text=reply,
        content=shown_content(final, reading, task),
        agreement=None,
        task=task,
        variants=[original, *written],
        notes=notes,
        finish_reason=response.finish_reason,
    )


def stopped_in_answer(reply: str, stop: list[str] | None) -> str:
    """The reply ended at the first of the caller's ``stop`` strings after its first final-answer
    label: they bound the answer, neither the restatements before it nor a model running on."""
    start = prompts.final_answer_start(reply)
    if start is None:
        return reply
    ends = [index for text in stop or [] if text and (index := reply.find(text, start)) >= 0]
    return reply[: min(ends)] if ends else reply


#: the least room the working and the final-answer line get: a caller's ``max_tokens`` sized
#: for a bare answer (8 for an option letter) would cut the working off before its final line
WORKING_TOKENS = 128


def with_restatement_allowance(settings: AnswerSettings, question: str, k: int) -> AnswerSettings:
    """``max_tokens`` bounds the answer, but the reply also holds ``k`` restatements of the
    question and the working: the restatements get their own allowance (about a token per four
    characters, plus the labels), the working and answer at least :data:`WORKING_TOKENS`."""
    if settings.max_tokens is None:
        return settings
    allowance = prompts.restatement_tokens(question, k)
    room = max(settings.max_tokens, WORKING_TOKENS)
    return dataclasses.replace(settings, max_tokens=room + allowance)
