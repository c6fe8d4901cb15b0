"""The state of building one paraphrase set, and the response it becomes."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from steadfast.services.perturb.domain.paraphrase_rounds import CallSpec, Progress, request_targets
from steadfast.services.perturb.domain.prompts import PARAPHRASE_PROMPT_VERSION
from steadfast.shared.contracts.perturb import (
    GivenParaphrase,
    ParaphraseRequest,
    ParaphraseResponse,
    Provenance,
    Verification,
)
from steadfast.shared.contracts.verify import VerifyResponse
from steadfast.shared.language import detect_language
from steadfast.shared.metering import MeteredCaller, ModelCaller


@dataclass
class ParaphraseRun:
    """The state of building one set."""

    request: ParaphraseRequest
    started: float
    seed: int
    language: str | None
    progress: Progress
    #: the generator wrapped for this set, so its calls and the judge's are counted
    model: MeteredCaller
    rng: random.Random = field(init=False)
    semantic_check: str = ""
    judge_version: str | None = None
    verification: Verification | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        # "auto" is resolved by the verify service, which names the check that ran
        semantic = self.request.verify.stages.semantic
        self.semantic_check = "" if semantic == "auto" else semantic

    @property
    def deadline(self) -> float:
        return self.started + self.request.time_budget_s

    @classmethod
    def start(cls, request: ParaphraseRequest, generator: ModelCaller) -> ParaphraseRun:
        if request.given is not None:  # every given paraphrase that passes is in the set
            count = len(request.given)
            progress = Progress(count, count, count, seen=[request.question])
        else:
            progress = Progress(
                request.k,
                *request_targets(request),
                seen=[request.question],
                temperature=request.temperature,
            )
        return cls(
            request=request,
            started=time.monotonic(),
            seed=request.seed if request.seed is not None else random.randrange(2**31),
            language=request.language or detect_language(request.question),
            progress=progress,
            model=MeteredCaller(generator),
        )


def verification_of(
    response: VerifyResponse, earlier: Verification | None, provenance: Provenance = "generated"
) -> Verification:
    """How this round was verified; the threshold of an earlier round when no candidate of this
    one reached the judge."""
    threshold = response.judge_threshold or (earlier.judge_threshold if earlier else None)
    return Verification(
        stages=response.stages_run,
        semantic_check=response.semantic_check,
        judge_model=response.judge_model,
        judge_prompt_version=response.judge_prompt_version,
        judge_threshold=threshold,
        provenance=provenance,
    )


def given_candidates(given: list[str | GivenParaphrase]) -> list[tuple[CallSpec, int, str]]:
    """The caller's paraphrases as candidates, each numbered by its place in the request."""
    candidates = []
    for line, paraphrase in enumerate(given, 1):
        if isinstance(paraphrase, str):
            paraphrase = GivenParaphrase(text=paraphrase)
        spec = CallSpec(paraphrase.kind, 1, 0, 0, tone=paraphrase.tone, provenance="given")
        candidates.append((spec, line, paraphrase.text.strip()))
    return candidates


def response_of(run: ParaphraseRun, reason: str | None) -> ParaphraseResponse:
    selection = run.progress.selection()
    if run.request.given is not None:  # in the caller's order
        selection.sort(key=lambda paraphrase: paraphrase.line)
    complete = len(selection) >= run.progress.k
    return ParaphraseResponse(
        question=run.request.question,
        accepted=selection,
        rejected=run.progress.rejected,
        surplus=run.progress.surplus(),
        candidates_generated=run.progress.generated,
        rounds=run.progress.rounds,
        generator_calls=run.progress.calls,
        elapsed_s=round(time.monotonic() - run.started, 3),
        complete=complete,
        incomplete_reason=None if complete else reason,
        generation_failures=run.progress.failures,
        seed=run.seed,
        generator=run.request.generator,
        prompt_version=PARAPHRASE_PROMPT_VERSION,
        judge_prompt_version=run.judge_version,
        semantic_check=run.semantic_check,
        verification=run.verification,
        language=run.language,
        model_calls=run.model.summary(),
    )
