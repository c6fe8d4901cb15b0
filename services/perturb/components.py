"""What the perturb service's handlers use, built once by its app factory."""

from __future__ import annotations

from dataclasses import dataclass

from steadfast.services.perturb.domain.distractors import DistractorWriter
from steadfast.services.perturb.domain.paraphrasing import ParaphraseBuilder
from steadfast.services.perturb.settings import PerturbSettings


@dataclass(frozen=True)
class PerturbComponents:
    """The perturb service's settings and domain services, each a handler dependency."""

    settings: PerturbSettings
    paraphraser: ParaphraseBuilder
    distractor_writer: DistractorWriter
