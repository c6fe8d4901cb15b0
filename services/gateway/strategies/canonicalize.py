"""``canonicalize``: rewrite the question into a neutral standard form (temperature 0.7, fixed
seed and sample index, so the rewrite is reproducible), then answer the rewrite greedily."""

from __future__ import annotations

from steadfast.services.gateway.domain.errors import GenerationFailed
from steadfast.services.gateway.strategies import prompts
from steadfast.services.gateway.strategies.extraction import infer_task, read_answer, shown_content
from steadfast.services.gateway.strategies.question import AnswerSettings, Question
from steadfast.services.gateway.strategies.result import StrategyResult
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.proxy import StrategyOptions, Variant
from steadfast.shared.metering import MeteredCaller
from steadfast.shared.quantities.invariance import quantity_difference

REWRITE_TEMPERATURE = 0.7
DEFAULT_SEED = 0


async def rewrite(model: MeteredCaller, question: str, settings: AnswerSettings) -> str:
    request = GenerateRequest(
        model=settings.route,
        messages=prompts.canonicalize_messages(question),
        temperature=REWRITE_TEMPERATURE,
        seed=DEFAULT_SEED if settings.seed is None else settings.seed,
        sample_index=0,
        cache=settings.cache,
    )
    return prompts.rewrite_line((await model.generate(request)).text)


async def canonicalize(
    model: MeteredCaller, question: Question, settings: AnswerSettings, options: StrategyOptions
) -> StrategyResult:
    notes: list[str] = []
    parts = question.parts(options.task)
    try:
        rewritten = await rewrite(model, parts.stem, settings)
    except GenerationFailed as failure:
        rewritten = ""
        notes.append(f"the rewrite failed ({failure.outcome}: {failure.detail})")
    wording = parts.reworded(rewritten)
    if not rewritten:
        notes.append("answered the original question: no usable rewrite")
        wording = question.text
    elif lost := quantity_difference(parts.stem, rewritten):
        # small models "standardise" a word problem into algebra, dropping its numbers
        notes.append(f"answered the original question: the rewrite changed its numbers ({lost})")
        wording = question.text
    response = await model.generate(settings.request(question.messages_for(wording), 0.0))
    task = options.task or infer_task(response.text, choices=parts.choices)
    reading = read_answer(
        response.text, task, parts.choices, cut=response.finish_reason == "length"
    )
    variant = Variant(
        question=wording,
        source="canonical" if wording != question.text else "original",
        answer=reading.answer,
        text=response.text,
        value=reading.key,
        in_majority=True,
    )
    return StrategyResult(
        strategy="canonicalize",
        answer=reading.answer,
        text=response.text,
        content=shown_content(response.text, reading, task),
        agreement=None,
        task=task,
        variants=[variant],
        notes=notes,
        finish_reason=response.finish_reason,
    )
