"""What every strategy returns, before it is put on the wire."""

from __future__ import annotations

from dataclasses import dataclass, field

from steadfast.shared.contracts.base import Task
from steadfast.shared.contracts.gateway import FinishReason
from steadfast.shared.contracts.proxy import Clustering, StrategyName, Variant


@dataclass
class StrategyResult:
    """What a strategy answered: the final answer and reply, the agreement across wordings,
    and every variant."""

    strategy: StrategyName
    #: the final answer (maths: the value; otherwise the reply or its final-answer line)
    answer: str | None
    #: the full reply of the variant the answer came from
    text: str
    #: what a chat client is shown as the assistant's message
    content: str
    agreement: float | None
    task: Task
    variants: list[Variant]
    notes: list[str] = field(default_factory=list)
    early_stopped: bool = False
    #: why the reply the answer came from ended (``length``: cut by ``max_tokens``)
    finish_reason: FinishReason = "stop"
    #: how a vote grouped the answers, and the judge calls it made
    clustering: Clustering | None = None
    clustering_judge_calls: int = 0

    @property
    def failed_variants(self) -> int:
        return sum(1 for variant in self.variants if variant.status == "failed")
