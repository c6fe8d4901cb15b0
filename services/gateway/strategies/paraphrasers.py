"""Where paraphrase-vote's paraphrases come from: the answering model itself (one call, the
prompt in :mod:`prompts`), or the perturb service (a ``generator`` route, optional verification)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from steadfast.services.gateway.domain.errors import GatewayError, GenerationFailed
from steadfast.services.gateway.strategies import prompts
from steadfast.services.gateway.strategies.question import AnswerSettings
from steadfast.shared.contracts.base import MAX_STORED_INT, Task
from steadfast.shared.contracts.gateway import GenerateRequest, ModelCalls
from steadfast.shared.contracts.perturb import ParaphraseRequest, ParaphraseResponse
from steadfast.shared.contracts.verify import VerifyOptions, VerifyStages
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.metering import MeteredCaller

PARAPHRASE_TEMPERATURE = 0.7
DEFAULT_SEED = 0
#: the fields of perturb's request that come from the caller's strategy options
CALLER_OPTIONS = frozenset({"generator", "verify", "task"})
#: perturb's verification switched off: only cleaning and de-duplication remain
NO_VERIFICATION = VerifyOptions(stages=VerifyStages(lexical=False, judge=False, semantic="off"))


class ParaphraseOptionsRefused(GatewayError):
    """The perturb service refused the paraphrase options (an unknown ``generator`` route,
    ``verify`` settings it cannot use): the caller's error, not a vote of the original alone."""

    caller_error = True

    def __init__(self, status: int, field: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.field = field
        self.detail = detail

    @classmethod
    def from_problem(cls, failure: ServiceCallError) -> ParaphraseOptionsRefused:
        problem = failure.problem
        field = problem.errors[0].field if problem.errors else "generator"
        return cls(failure.status or 400, field, f"perturb: {problem.detail or problem.title}")


@dataclass
class Paraphrases:
    """Paraphrases written for a strategy, with notes on what fell short."""

    texts: list[str]
    notes: list[str] = field(default_factory=list)
    #: the calls another service made to write them (the answering model's are metered already)
    model_calls: ModelCalls | None = None
    #: the call that writes them failed (not: it wrote none that could be used)
    failed: bool = False


class Paraphraser(Protocol):
    """Writes k paraphrases of a question for a strategy (the answering model, or the perturb
    service)."""

    async def paraphrase(self, question: str, k: int) -> Paraphrases: ...


@dataclass
class ModelParaphraser:
    """The answering model writes the paraphrases (sampled at a fixed seed: reproducible)."""

    model: MeteredCaller
    settings: AnswerSettings

    async def paraphrase(self, question: str, k: int) -> Paraphrases:
        seed = self.settings.seed
        request = GenerateRequest(
            model=self.settings.route,
            messages=prompts.paraphrase_messages(question, k),
            temperature=PARAPHRASE_TEMPERATURE,
            # not the route's default, which k rewordings of a long maths problem overrun;
            # doubled because a rewording may run longer than the question
            max_tokens=2 * prompts.restatement_tokens(question, k),
            seed=DEFAULT_SEED if seed is None else seed,
            cache=self.settings.cache,
        )
        try:
            reply = await self.model.generate(request)
        except GenerationFailed as failure:
            note = f"paraphrase generation failed ({failure.outcome}: {failure.detail})"
            return Paraphrases(texts=[], notes=[note], failed=True)
        return _enough(prompts.paraphrase_lines(reply.text, question, k), k)


class ParaphraseClient(Protocol):
    """The perturb service's ``POST /v1/paraphrases``, as a strategy calls it."""

    async def paraphrases(self, request: ParaphraseRequest) -> ParaphraseResponse: ...


@dataclass
class PerturbParaphraser:
    """The perturb service writes (and, when asked, verifies) the paraphrases, at a fixed seed
    like :class:`ModelParaphraser`."""

    client: ParaphraseClient
    generator: str
    verify: bool | VerifyOptions
    task: Task | None = None
    seed: int | None = None
    cache: bool = True

    async def paraphrase(self, question: str, k: int) -> Paraphrases:
        request = ParaphraseRequest(
            question=question,
            k=k,
            generator=self.generator,
            task=self.task,
            seed=DEFAULT_SEED if self.seed is None else _stored_seed(self.seed),
            verify=_verification(self.verify),
            cache=self.cache,
        )
        try:
            response = await self.client.paraphrases(request)
        except ServiceCallError as failure:
            if _is_callers_error(failure):
                raise ParaphraseOptionsRefused.from_problem(failure) from failure
            note = (
                f"paraphrase generation failed (perturb {failure.status}: {failure.problem.detail})"
            )
            return Paraphrases(texts=[], notes=[note], failed=True)
        result = _enough([paraphrase.text for paraphrase in response.accepted], k)
        if response.incomplete_reason:
            result.notes.append(f"perturb: {response.incomplete_reason}")
        result.model_calls = response.model_calls
        return result


def _is_callers_error(failure: ServiceCallError) -> bool:
    """perturb refused an option the caller chose (``generator``, ``verify``...), naming it.
    A refusal of anything else (the question the strategy passed on) is no fault of the
    caller's options."""
    if not failure.refused:
        return False
    problem = failure.problem
    field = problem.errors[0].field if problem.errors else "generator"
    return field.split(".")[0].split("[")[0] in CALLER_OPTIONS


def _verification(verify: bool | VerifyOptions) -> VerifyOptions:
    if isinstance(verify, VerifyOptions):
        return verify
    return VerifyOptions() if verify else NO_VERIFICATION


def _enough(texts: list[str], k: int) -> Paraphrases:
    notes = [] if len(texts) >= k else [f"only {len(texts)} of {k} paraphrases were usable"]
    return Paraphrases(texts=texts[:k], notes=notes)


def _stored_seed(seed: int) -> int:
    """perturb takes a seed it can store (31 bits); a chat request's may be any 64-bit one, so
    it is folded into that range, which keeps it reproducible."""
    return seed % (MAX_STORED_INT + 1)
