"""``single-prompt`` (the study's strategy): one call in which the model restates the question
itself, reads the restatements with the original and gives one final answer."""

from __future__ import annotations

import dataclasses

from services.gateway.strategies import prompts
from services.gateway.strategies.extraction import infer_task, read_answer
from services.gateway.strategies.question import AnswerSettings, Question
from services.gateway.strategies.result import StrategyResult
from shared.contracts.proxy import StrategyOptions, Variant
from shared.metering import MeteredCaller


async def single_prompt(
    model: MeteredCaller, question: Question, settings: AnswerSettings, options: StrategyOptions
) -> StrategyResult:
    prompt = prompts.SINGLE_PROMPT.format(n=options.k, question=question.text)
    settings = with_restatement_allowance(settings, question.text, options.k)
    response = await model.generate(settings.request(question.messages_for(prompt)))
    final = prompts.final_answer(response.text)
    task = options.task or infer_task(final)
    reading = read_answer(final, task)
    original = Variant(
        question=question.text,
        source="original",
        answer=reading.answer,
        text=response.text,
        value=reading.key,
        in_majority=True,
    )
    written = [
        Variant(question=text, source="paraphrase", status="not_asked")
        for text in prompts.restatements(response.text)
    ]
    notes = (
        [] if "final answer" in response.text.lower() else ["the reply has no final-answer line"]
    )
    return StrategyResult(
        strategy="single-prompt",
        answer=reading.answer,
        text=response.text,
        content=final,
        agreement=None,
        task=task,
        variants=[original, *written],
        notes=notes,
    )


def with_restatement_allowance(settings: AnswerSettings, question: str, k: int) -> AnswerSettings:
    """``max_tokens`` bounds the answer: the reply also holds ``k`` restatements of the question,
    so they get their own allowance (about a token per four characters, plus the labels)."""
    if settings.max_tokens is None:
        return settings
    allowance = prompts.restatement_tokens(question, k)
    return dataclasses.replace(settings, max_tokens=settings.max_tokens + allowance)
