"""What the verify service's handlers use, built once by its app factory."""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.verify.domain.judges import JudgePool
from steadfast.services.verify.domain.pipeline import ThresholdLookup
from steadfast.services.verify.domain.semantic import SemanticModels


@dataclass(frozen=True)
class VerifyComponents:
    """The verify service's judges, semantic models and calibrated thresholds, each a handler
    dependency."""

    judges: JudgePool
    semantic_models: SemanticModels
    thresholds: ThresholdLookup
