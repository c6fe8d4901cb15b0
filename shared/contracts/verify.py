"""Wire contracts of the verify service (``/v1/verify``) — METHOD.md §1.1 steps 2–3."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared.contracts.base import Contract

SemanticCheck = Literal["embedding", "nli", "off"]
Stage = Literal["lexical", "judge", "semantic"]
Task = Literal["factual", "math", "choice"]

Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class VerifyStages(Contract, kw_only=True):
    lexical: bool = True
    judge: bool = True
    semantic: SemanticCheck = "embedding"


class VerifyThresholds(Contract, kw_only=True):
    """Defaults are METHOD.md's (overlap, nli) and the calibrated values (judge, embedding)."""

    #: reject when overlap with the original or an accepted paraphrase is >= this
    overlap: Share = 0.8
    #: accept when P(YES) >= this, where the backend gives logprobs
    judge_p_yes: Share = 0.5
    #: accept when the cosine similarity of the sentence embeddings is >= this
    embedding: Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)] = 0.80
    #: accept when the mean of both entailment directions is >= this
    nli: Share = 0.75


class VerifySettings(Contract, kw_only=True):
    """How candidates are verified; embedded in paraphrase requests as ``verify``."""

    stages: VerifyStages = msgspec.field(default_factory=VerifyStages)
    thresholds: VerifyThresholds = msgspec.field(default_factory=VerifyThresholds)
    #: gateway route of the judge; default: the generator's route (or ``local``)
    judge_model: str | None = None
    #: ask the judge with the texts in both orders and keep the stricter verdict
    bidirectional: bool = True
    #: gateway route that serves the NLI model (for ``semantic="nli"``)
    nli_model: str | None = None


class VerifyRequest(VerifySettings, kw_only=True):
    original: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    candidates: Annotated[list[str], msgspec.Meta(min_length=1, max_length=500)]
    #: paraphrases accepted earlier: the lexical filter compares against these too
    accepted: list[str] = msgspec.field(default_factory=list)
    task: Task | None = None
    #: run every stage for every candidate instead of stopping at the first rejection
    explain_all: bool = False


class CandidateVerdict(Contract, kw_only=True):
    text: str
    accepted: bool
    #: the stage that rejected the candidate (None when accepted)
    deciding_stage: Stage | None = None
    reason: str | None = None
    overlap: float | None = None
    judge_verdict: Literal["yes", "no"] | None = None
    judge_p_yes: float | None = None
    semantic: float | None = None
    semantic_check: SemanticCheck | None = None


class VerifyResponse(Contract, kw_only=True):
    results: list[CandidateVerdict]
    semantic_check: SemanticCheck
    judge_model: str | None = None
