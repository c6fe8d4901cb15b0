"""Wire contracts of the perturb service — METHOD.md §1.1 step 1 and §2.1."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared.contracts.base import Contract, Problem
from shared.contracts.verify import Share, Stage, Task, VerifyOptions

Kind = Literal["plain", "toned"]
Tone = Literal["formal", "casual", "polite", "confident", "neutral", "supportive", "inquisitive"]
RejectionStage = Literal["clean", "duplicate", Stage]


class ParaphraseRequest(Contract, kw_only=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    k: Annotated[int, msgspec.Meta(ge=1, le=50)] = 10
    generator: Annotated[str, msgspec.Meta(min_length=1)] = "local"
    plain_share: Share = 0.7
    toned_share: Share = 0.4
    plain_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 14
    toned_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 8
    max_candidates: Annotated[int, msgspec.Meta(ge=1, le=2000)] = 120
    time_budget_s: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 75.0
    seed: int | None = None
    #: ISO 639-1 code; detected from the question when absent
    language: str | None = None
    task: Task | None = None
    verify: VerifyOptions = msgspec.field(default_factory=VerifyOptions)


class CandidateScores(Contract, kw_only=True):
    overlap: float | None = None
    judge: float | None = None
    semantic: float | None = None


class Paraphrase(Contract, kw_only=True):
    text: str
    kind: Kind
    tone: Tone | None = None
    hint: str | None = None
    scores: CandidateScores = msgspec.field(default_factory=CandidateScores)
    generator: str = ""
    seed: int | None = None
    sample_index: int = 0
    prompt_version: str = ""


class RejectedCandidate(Contract, kw_only=True):
    text: str
    kind: Kind
    stage: RejectionStage
    reason: str
    tone: Tone | None = None
    hint: str | None = None
    scores: CandidateScores = msgspec.field(default_factory=CandidateScores)


class ParaphraseResponse(Contract, kw_only=True):
    question: str
    accepted: list[Paraphrase]
    rejected: list[RejectedCandidate]
    candidates_generated: int
    rounds: int
    elapsed_s: float
    complete: bool
    #: why fewer than k were accepted (budget, candidate cap, generator failures)
    incomplete_reason: str | None = None
    prompt_version: str = ""
    semantic_check: str = ""
    language: str | None = None


class ParaphraseBatchRequest(Contract, kw_only=True):
    requests: Annotated[list[ParaphraseRequest], msgspec.Meta(min_length=1, max_length=500)]


class ParaphraseBatchItem(Contract, kw_only=True):
    result: ParaphraseResponse | None = None
    error: Problem | None = None


class ParaphraseBatchResponse(Contract, kw_only=True):
    results: list[ParaphraseBatchItem]


class DistractorRequest(Contract, kw_only=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    correct_answer: Annotated[str, msgspec.Meta(min_length=1, max_length=5000)]
    mode: Literal["plausible", "out_of_context"] = "plausible"
    context: str | None = None
    n: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1
    generator: str = "local"
    seed: int | None = None
    language: str | None = None


class DistractorResponse(Contract, kw_only=True):
    distractors: list[str]
    mode: str
    generator: str
    complete: bool
    incomplete_reason: str | None = None
    prompt_version: str = ""


class PermutationRequest(Contract, kw_only=True):
    options: Annotated[list[str], msgspec.Meta(min_length=2, max_length=26)]
    scheme: Literal["swap", "cyclic"] = "cyclic"


class OptionOrder(Contract, kw_only=True):
    #: the options in presentation order
    options: list[str]
    #: ``positions[i]`` is the letter at which original option i stands in this order
    positions: list[str]
    #: ``order[j]`` is the index of the original option shown at position j
    order: list[int]


class PermutationResponse(Contract, kw_only=True):
    scheme: str
    orders: list[OptionOrder]
