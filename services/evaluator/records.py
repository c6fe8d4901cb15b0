"""Records the evaluator's domain and its adapters both hold: a paraphrase set, an answer as
stored, the outcome of one answer request. Plain data: the steps that make them are the
domain's, where they are kept is the adapters'."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from steadfast.services.evaluator.errors import UpstreamError
from steadfast.shared.contracts.gateway import TokenAlternative
from steadfast.shared.contracts.perturb import Paraphrase, Provenance, Verification


@dataclass
class ParaphraseSet:
    """A verified paraphrase set with its provenance (docs/method.md §1.1)."""

    id: str
    question: str
    generator: str
    k: int
    seed: int | None
    prompt_version: str
    semantic_check: str
    complete: bool
    incomplete_reason: str | None
    candidates_generated: int
    paraphrases: list[Paraphrase]
    rejected: list[dict[str, Any]] = field(default_factory=list)
    verification: Verification | None = None

    @property
    def source(self) -> Provenance:
        return self.verification.provenance if self.verification else "generated"

    @property
    def verified(self) -> bool:
        """False for given paraphrases taken as they are (``verify_given`` false)."""
        return self.source == "generated" or bool(self.verification and self.verification.stages)


@dataclass
class AnswerRecord:
    """One model's answer to one variant of an item, as stored: its status, and once there,
    its text, label, the value compared, or why it failed."""

    position: int
    model: str
    variant: int
    prompt: str
    status: str
    text: str | None = None
    label: str | None = None
    value: str | None = None
    error: str | None = None
    error_stage: str | None = None


@dataclass(frozen=True)
class Generated:
    """The outcome of one answer request: ``text`` or ``error``."""

    text: str | None = None
    error: UpstreamError | None = None
    cached: bool = False
    #: the first token's alternatives, when ``top_logprobs`` was asked for
    logprobs: list[TokenAlternative] | None = None
    #: the reply stopped at its token limit (``finish_reason`` "length")
    cut: bool = False
