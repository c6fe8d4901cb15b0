"""The rounds of building a paraphrase set, docs/method.md §1.1: the targets of each kind, the
progress so far, the calls of the next round, and the feedback and rejections it records."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from steadfast.services.perturb.domain.cleaning import text_key
from steadfast.services.perturb.domain.prompts import FEEDBACK, HINTS, TONES
from steadfast.shared.contracts.perturb import (
    CandidateScores,
    Kind,
    Paraphrase,
    ParaphraseRequest,
    Provenance,
    RejectedCandidate,
    RejectionStage,
    Tone,
)


@dataclass(frozen=True)
class CallSpec:
    """One generator request: ``samples`` lists of ``count`` candidates of one kind in one
    style."""

    kind: Kind
    count: int
    sample_index: int
    seed: int
    hint: str | None = None
    tone: Tone | None = None
    feedback: str | None = None
    provenance: Provenance = "generated"
    samples: int = 1
    temperature: float | None = None


@dataclass
class Progress:
    """How far the set has come: the paraphrases accepted of each kind, the candidates rejected
    and seen, and the calls and rounds spent."""

    k: int
    plain_target: int
    toned_target: int
    plain: list[Paraphrase] = field(default_factory=list)
    toned: list[Paraphrase] = field(default_factory=list)
    rejected: list[RejectedCandidate] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    generated: int = 0
    requested: int = 0
    calls: int = 0
    rounds: int = 0
    #: why the last round's candidates were rejected, told to the next round's calls
    feedback: str | None = None
    #: the sampling temperature of the next round
    temperature: float = 0.8
    #: model calls of the current round that failed (of those, down for now: ``transient``), or
    #: were cancelled at the time budget
    failed_calls: int = 0
    transient_calls: int = 0
    cancelled_calls: int = 0

    def selection(self) -> list[Paraphrase]:
        return (self.plain[: self.plain_target] + self.toned)[: self.k]

    def surplus(self) -> list[Paraphrase]:
        chosen = {id(p) for p in self.selection()}
        return [p for p in self.plain + self.toned if id(p) not in chosen]

    def needs_plain(self) -> bool:
        return len(self.plain) < self.plain_target

    def needs_toned(self) -> bool:
        if len(self.selection()) >= self.k:
            return False
        return len(self.toned) < self.toned_target or not self.needs_plain()


def targets(k: int, plain_share: float, toned_share: float) -> tuple[int, int]:
    """Plain and toned targets: shares of k, rounded up."""
    return math.ceil(plain_share * k - 1e-9), math.ceil(toned_share * k - 1e-9)


def request_targets(request: ParaphraseRequest) -> tuple[int, int]:
    """The targets of a request: a kind it does not want (none per round, or a share of 0)
    leaves all k places to the other, or a set without toned paraphrases could never grow past
    the plain target and would spend the whole candidate cap trying."""
    if request.toned_per_round == 0 or request.toned_share == 0:
        return request.k, 0
    if request.plain_per_round == 0 or request.plain_share == 0:
        return 0, request.k
    return targets(request.k, request.plain_share, request.toned_share)


def plan_round(
    request: ParaphraseRequest, progress: Progress, rng: random.Random, base_seed: int
) -> list[CallSpec]:
    """The requests of the next round: the candidates to ask for, ``candidates_per_call`` a
    call and up to ``samples_per_request`` calls of one kind a request, each request with its
    hint or tone drawn from ``rng``."""
    room = request.max_candidates - progress.requested
    plain = request.plain_per_round if progress.needs_plain() else 0
    toned = request.toned_per_round if progress.needs_toned() else 0
    if plain == toned == 0 and len(progress.selection()) < request.k:
        plain, toned = request.plain_per_round, request.toned_per_round
    feedback = progress.feedback if request.feedback else None
    specs: list[CallSpec] = []
    tones = list(TONES)
    for kind, wanted in (("plain", plain), ("toned", toned)):
        while wanted > 0 and room > 0:
            count = min(request.candidates_per_call, wanted, room)
            samples = max(1, min(request.samples_per_request, wanted // count, room // count))
            # a request of m samples takes m call indexes (sample indexes and seeds), as m
            # requests would: a gateway that sends a sample a request uses them all
            index = progress.calls + sum(spec.samples for spec in specs)
            style = {"hint": rng.choice(HINTS)} if kind == "plain" else {"tone": rng.choice(tones)}
            spec = CallSpec(
                kind,  # type: ignore[arg-type]
                count,
                index,
                base_seed + index,
                feedback=feedback,
                samples=samples,
                temperature=progress.temperature,
                **style,
            )
            specs.append(spec)
            wanted, room = wanted - count * samples, room - count * samples
    return specs


def feedback_of(
    rejected: list[RejectedCandidate], earlier: Sequence[RejectedCandidate] = ()
) -> str | None:
    """Why a round's candidates were rejected, its two most frequent reasons in words (none
    when nothing was rejected on its merits). A stage whose reasons name the words at fault
    (direction, numbers) adds its most frequent one: "asks 'largest city' where the original
    asks 'capital'" tells the generator what to keep where the stage's general words do not.
    A repeat of a candidate rejected on its merits (this round or ``earlier``) counts as that
    rejection: in a demo run the generator wrote "What temperature does water boil at sea
    level?" fifteen times and was told only that it repeated itself, never that the rewording
    drops "degrees Celsius"."""
    rejected = as_first_rejected(rejected, earlier)
    stages = Counter(r.stage for r in rejected if r.stage in FEEDBACK)
    reasons = []
    for stage, _ in stages.most_common(2):
        reason = FEEDBACK[stage]
        if stage in _NAMES_ITS_WORDS:
            said = Counter(
                r.reason.removeprefix(_NUMBERS_PREFIX) for r in rejected if r.stage == stage
            )
            reason += f" (one rewording: {said.most_common(1)[0][0]})"
        reasons.append(reason)
    return "; ".join(reasons) or None


def first_rejections(rejected: Iterable[RejectedCandidate]) -> dict[str, RejectedCandidate]:
    """The first rejection on its merits of each text (not as a repeat), by its text's key."""
    first: dict[str, RejectedCandidate] = {}
    for candidate in rejected:
        if candidate.stage not in _NOT_ON_MERITS:
            first.setdefault(text_key(candidate.text), candidate)
    return first


def as_first_rejected(
    rejected: list[RejectedCandidate], earlier: Sequence[RejectedCandidate] = ()
) -> list[RejectedCandidate]:
    """``rejected`` with each repeat replaced by its text's first rejection on its merits, when
    there is one (a repeat of an accepted paraphrase or of the question stays a repeat)."""
    first = first_rejections([*earlier, *rejected])
    return [first.get(text_key(r.text), r) if r.stage == "duplicate" else r for r in rejected]


#: rejections that say nothing of a candidate's meaning or words
_NOT_ON_MERITS: frozenset[RejectionStage] = frozenset(["duplicate", "unverified", "clean"])
#: stages whose rejection reasons name the words at fault, told to the generator as they are
_NAMES_ITS_WORDS = frozenset(["direction", "numbers"])
_NUMBERS_PREFIX = "numbers differ from the original: "


#: rejections that say the generator is writing the same few rewordings again
_REPEATS: frozenset[RejectionStage] = frozenset(["duplicate", "lexical"])


def next_temperature(
    request: ParaphraseRequest, progress: Progress, rejected: list[RejectedCandidate], written: int
) -> float:
    """The next round's temperature: ``temperature_step`` hotter (up to ``max_temperature``)
    after a round in which at least half the candidates written were repeats or too close to
    the question or to an accepted paraphrase. The ninth session measured a fixed 1.1 against
    0.8: hotter sampling broke out of the repeats on short questions but broke names and dates
    elsewhere, so the heat comes only where the repeats are."""
    repeats = sum(1 for candidate in rejected if candidate.stage in _REPEATS)
    if not written or 2 * repeats < written:
        return progress.temperature
    hotter = progress.temperature + request.temperature_step
    return round(max(progress.temperature, min(hotter, request.max_temperature)), 3)


def rejected_candidate(
    text: str,
    spec: CallSpec,
    line: int,
    stage: RejectionStage,
    reason: str,
    scores: CandidateScores | None = None,
) -> RejectedCandidate:
    return RejectedCandidate(
        text=text,
        kind=spec.kind,
        stage=stage,
        reason=reason,
        tone=spec.tone,
        hint=spec.hint,
        scores=scores or CandidateScores(),
        sample_index=spec.sample_index,
        provenance=spec.provenance,
    )
