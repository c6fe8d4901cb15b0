"""What the scoring service's handlers use, built once by its app factory."""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.scoring.domain.grader import Judges, MathGrader


@dataclass(frozen=True)
class ScoringComponents:
    """The graders the scoring service's handlers hand work to, each a handler dependency."""

    math_pool: MathGrader
    judges: Judges
