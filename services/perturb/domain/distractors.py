"""Distractor generation, docs/method.md §2.1: wrong but plausible, or unrelated, answers."""

from __future__ import annotations

import random

from steadfast.services.perturb.domain.cleaning import clean_candidate
from steadfast.services.perturb.domain.errors import unknown_route
from steadfast.services.perturb.domain.prompts import DISTRACTOR_PROMPT_VERSION, distractor_messages
from steadfast.shared.answers import names_a_correct_answer, normalize_factual
from steadfast.shared.contracts.gateway import GenerateRequest, gateway_outcome
from steadfast.shared.contracts.perturb import DistractorRequest, DistractorResponse
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.language import detect_language
from steadfast.shared.metering import ModelCaller

ATTEMPTS_PER_DISTRACTOR = 4


def acceptable(candidate: str, correct_answers: list[str], kept: list[str]) -> bool:
    """Not a correct answer (nor containing one), and distinct from the ones kept."""
    normalized = normalize_factual(candidate)
    if not normalized or names_a_correct_answer(candidate, correct_answers):
        return False
    return all(normalized != normalize_factual(other) for other in kept)


class DistractorWriter:
    """Writes distinct wrong answers to a question (docs/method.md §2.1), none of them a
    correct answer."""

    def __init__(self, generator: ModelCaller) -> None:
        self._generator = generator

    async def write(self, request: DistractorRequest) -> DistractorResponse:
        seed = request.seed if request.seed is not None else random.randrange(2**31)
        language = request.language or detect_language(
            f"{request.context or ''} {request.question}"
        )
        kept: list[str] = []
        failures: list[str] = []
        attempts = ATTEMPTS_PER_DISTRACTOR * request.n
        correct_answers = [request.correct_answer, *request.also_correct]
        for attempt in range(attempts):
            if len(kept) >= request.n:
                break
            try:
                text = await self._ask(request, kept, language, seed, attempt)
            except ServiceCallError as error:
                if (route_error := unknown_route(error)) is not None:
                    raise route_error from error
                outcome = gateway_outcome(error.problem) or error.status
                failures.append(f"{outcome}: {error.problem.detail}")
                continue
            if acceptable(text, correct_answers, kept):
                kept.append(text)
        complete = len(kept) >= request.n
        reason = None
        if not complete:
            reason = f"{len(kept)} of {request.n} distinct distractors after {attempts} attempts"
            if failures:
                reason += f"; {len(failures)} model call(s) failed, last: {failures[-1]}"
        return DistractorResponse(
            distractors=kept,
            mode=request.mode,
            generator=request.generator,
            complete=complete,
            incomplete_reason=reason,
            prompt_version=DISTRACTOR_PROMPT_VERSION,
            seed=seed,
            generation_failures=failures,
        )

    async def _ask(
        self,
        request: DistractorRequest,
        kept: list[str],
        language: str | None,
        seed: int,
        attempt: int,
    ) -> str:
        messages = distractor_messages(
            mode=request.mode,
            question=request.question,
            correct_answer=request.correct_answer,
            context=request.context,
            avoid=kept,
            language=language,
        )
        response = await self._generator.generate(
            GenerateRequest(
                model=request.generator,
                messages=messages,
                # the first attempt is greedy; repeats sample, so a retry can differ
                temperature=0.0 if attempt == 0 else 0.9,
                max_tokens=64,
                seed=seed + attempt,
                sample_index=attempt,
            )
        )
        return clean_candidate(response.text)
