"""Wire contracts of the perturb service — docs/method.md §1.1 step 1 and §2.1."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import (
    MAX_ALSO_CORRECT,
    AnswerText,
    Contract,
    LanguageCode,
    Problem,
    RouteName,
    StoredSeed,
    Task,
)
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.gateway import MAX_SAMPLES, ModelCalls
from steadfast.shared.contracts.verify import Share, Stage, VerifyOptions

Kind = Literal["plain", "toned"]
Tone = Literal["formal", "casual", "polite", "confident", "neutral", "supportive", "inquisitive"]
#: ``clean``: nothing left after cleaning; ``duplicate``: same text as the original or an earlier
#: candidate; ``states_answer``: it states one of the request's ``answers``; ``unverified``: the
#: verify service failed, so the candidate could not be checked
RejectionStage = Literal["clean", "duplicate", "states_answer", "unverified", Stage]
#: where a paraphrase comes from: written by the generator, or given with the request
Provenance = Literal["generated", "given"]

#: the most paraphrases a request may bring (k's own limit)
MAX_GIVEN_PARAPHRASES = 50
#: a paraphrase's text: not blank
GivenText = Annotated[str, msgspec.Meta(min_length=1, max_length=20000, pattern=r"\S")]


#: a round's calls of one kind made as one generator request of this many samples
SamplesPerRequest = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        le=MAX_SAMPLES,
        description=(
            "a round's calls of one kind made as one generator request of up to this many "
            "samples of one prompt, in one hint or tone (the prompt is read once); each "
            "sample still counts as a call. 1: every call a request of its own"
        ),
    ),
]


class GivenParaphrase(Contract, kw_only=True):
    """A paraphrase the caller brings (a published paraphrase set, one of their own)."""

    text: GivenText
    kind: Kind = "plain"
    tone: Tone | None = None


#: a given paraphrase: its text alone, or an object with its kind and tone
GivenParaphraseIn = GivenText | GivenParaphrase


def given_sets_line(given: int, unverified: int) -> str:
    """How many sets the items brought, in the words every report uses."""
    how = f"{unverified} of them taken unverified" if unverified else "verified like generated ones"
    return f"{given} paraphrase set(s) given with the items ({how})"


#: the longest time budget of one paraphrase set, in seconds
MAX_TIME_BUDGET_S = 3600


class ParaphraseRequest(Contract, kw_only=True):
    """``POST /v1/paraphrases``: a question to write and verify up to k paraphrases of
    (docs/method.md §1.1), or the given paraphrases to verify."""

    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    k: Annotated[int, msgspec.Meta(ge=1, le=50)] = 10
    generator: RouteName = "local"
    plain_share: Share = 0.7
    toned_share: Share = 0.4
    plain_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 14
    toned_per_round: Annotated[int, msgspec.Meta(ge=0, le=64)] = 8
    #: candidates one generator call writes, as a numbered list in one style (1: a call each)
    candidates_per_call: Annotated[int, msgspec.Meta(ge=1, le=20)] = 5
    samples_per_request: SamplesPerRequest = 1
    #: tell a round's calls why the previous round's candidates were rejected
    feedback: bool = True
    max_candidates: Annotated[int, msgspec.Meta(ge=1, le=2000)] = 120
    #: generation stops at the budget: no round starts after it and the round's requests
    #: still out are dropped; the candidates already written are still verified, so the
    #: response can come a verification later
    time_budget_s: Annotated[float, msgspec.Meta(gt=0, le=MAX_TIME_BUDGET_S)] = 75.0
    #: sampling temperature of the generator (each candidate also has its own seed)
    temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] = 0.8
    #: after a round whose candidates were mostly repeats or too close to the question or an
    #: accepted paraphrase (a model writing the same few rewordings again), the next round
    #: samples this much hotter, up to ``max_temperature``; 0 (the default, the method's)
    #: keeps ``temperature`` throughout
    temperature_step: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.0
    max_temperature: Annotated[float, msgspec.Meta(ge=0.0, le=2.0)] = 1.2
    #: makes the hint/tone choices and the sampling reproducible; drawn and reported when absent
    seed: StoredSeed | None = None
    #: ISO 639-1 code; detected from the question when absent
    language: LanguageCode | None = None
    task: Task | None = None
    verify: VerifyOptions = msgspec.field(default_factory=VerifyOptions)
    #: use the gateway's response cache for the generator's and the judge's calls (false: every
    #: call goes upstream)
    cache: bool = True
    #: paraphrases brought by the caller, used instead of generated ones: nothing is generated,
    #: each is verified like a generated candidate (unless ``verify_given`` is false) and the
    #: set is every one that passes; ``k`` is then ignored
    given: (
        Annotated[
            list[GivenParaphraseIn], msgspec.Meta(min_length=1, max_length=MAX_GIVEN_PARAPHRASES)
        ]
        | None
    ) = None
    #: false: the given paraphrases are taken as they are, unverified
    verify_given: bool = True
    #: the question's known answers: a candidate that states one the question does not gives
    #: the answer away and is rejected before verification (stage ``states_answer``), generated
    #: or given (unless ``verify_given`` is false); numbers, answers under three characters and
    #: everyday words ("May", "yes") are not looked for (``shared.answers.screenable_answers``)
    answers: Annotated[list[AnswerText], msgspec.Meta(max_length=MAX_ALSO_CORRECT)] = msgspec.field(
        default_factory=list
    )


class CandidateScores(Contract, kw_only=True):
    """The verification scores of a candidate paraphrase: word overlap, the judge's P(YES)
    and verdict, and the semantic similarity."""

    overlap: float | None = None
    #: the judge's mean P(YES) over the orders where logprobs exist
    judge: float | None = None
    judge_verdict: Literal["yes", "no"] | None = None
    semantic: float | None = None


class Paraphrase(Contract, kw_only=True):
    """An accepted paraphrase: its text, kind and tone, scores, and the call that wrote it."""

    text: str
    kind: Kind
    tone: Tone | None = None
    hint: str | None = None
    scores: CandidateScores = msgspec.field(default_factory=CandidateScores)
    generator: str = ""
    seed: int | None = None
    #: the generator request that wrote it (its sample index and seed) and its line in that
    #: request's lists, counted on through its samples when it asked for several
    sample_index: int = 0
    line: int = 1
    #: the sampling temperature of the request that wrote it (none: given, not generated)
    temperature: float | None = None
    #: what the call was told of earlier rejections, when anything
    feedback: str | None = None
    prompt_version: str = ""
    provenance: Provenance = "generated"


class RejectedCandidate(Contract, kw_only=True):
    """A candidate paraphrase that was rejected: the stage that rejected it and why."""

    text: str
    kind: Kind
    stage: RejectionStage
    reason: str
    tone: Tone | None = None
    hint: str | None = None
    scores: CandidateScores = msgspec.field(default_factory=CandidateScores)
    sample_index: int = 0
    provenance: Provenance = "generated"


class Verification(Contract, kw_only=True):
    """How a set's candidates were verified (the last verification of the set)."""

    stages: list[Stage] = msgspec.field(default_factory=list)
    semantic_check: str = ""
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    judge_threshold: JudgeThreshold | None = None
    #: the set's paraphrases were given with the request (``stages`` empty: taken unverified)
    provenance: Provenance = "generated"


class ParaphraseResponse(Contract, kw_only=True):
    """A question's paraphrase set: the accepted and rejected candidates, how it was made and
    verified, and whether it is complete."""

    question: str
    #: the result: the first ceil(plain_share·k) plain paraphrases plus the toned ones, cut to k
    #: (k plain ones when the request asks for no toned candidate: ``toned_per_round`` 0)
    accepted: list[Paraphrase]
    rejected: list[RejectedCandidate]
    #: verified paraphrases beyond the result (more of one kind than its target)
    surplus: list[Paraphrase] = msgspec.field(default_factory=list)
    candidates_generated: int
    rounds: int
    #: generator calls made (each writes up to ``candidates_per_call`` candidates; a request
    #: of several samples makes a call a sample)
    generator_calls: int = 0
    elapsed_s: float
    complete: bool
    #: why fewer than k were accepted (budget, candidate cap, generator failures)
    incomplete_reason: str | None = None
    #: model calls that failed, with their reasons (each failed call is counted, never dropped)
    generation_failures: list[str] = msgspec.field(default_factory=list)
    seed: int = 0
    generator: str = ""
    prompt_version: str = ""
    judge_prompt_version: str | None = None
    semantic_check: str = ""
    #: how the candidates were verified: the stages that ran, the judge route, and the
    #: threshold it was held to with where that comes from
    verification: Verification | None = None
    language: LanguageCode | None = None
    #: the model calls made for this set: the generator's and the verify service's judge's
    model_calls: ModelCalls = msgspec.field(default_factory=ModelCalls)


class ParaphraseBatchRequest(Contract, kw_only=True):
    """``POST /v1/paraphrases/batch``: paraphrase requests for many questions."""

    requests: Annotated[list[ParaphraseRequest], msgspec.Meta(min_length=1, max_length=500)]


class ParaphraseBatchItem(Contract, kw_only=True):
    """Exactly one of ``result`` and ``error`` is set."""

    result: ParaphraseResponse | None = None
    error: Problem | None = None


class ParaphraseBatchResponse(Contract, kw_only=True):
    """One item per request, in the requests' order."""

    results: list[ParaphraseBatchItem]


class DistractorRequest(Contract, kw_only=True):
    """``POST /v1/distractors``: wrong answers to write for a question, plausible or out of
    context (docs/method.md §2.1)."""

    question: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    correct_answer: AnswerText
    #: other answers that are also correct (aliases): a distractor never matches one either
    also_correct: Annotated[list[AnswerText], msgspec.Meta(max_length=MAX_ALSO_CORRECT)] = (
        msgspec.field(default_factory=list)
    )
    mode: Literal["plausible", "out_of_context"] = "plausible"
    context: str | None = None
    n: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1
    generator: RouteName = "local"
    seed: StoredSeed | None = None
    language: LanguageCode | None = None


class DistractorResponse(Contract, kw_only=True):
    """The distractors written, with the generator, seed and failures."""

    distractors: list[str]
    mode: str
    generator: str
    complete: bool
    incomplete_reason: str | None = None
    prompt_version: str = ""
    #: the seed the distractors were drawn with (the one asked for, else the one drawn), to
    #: ask for the same again
    seed: int | None = None
    #: model calls that failed (each a turn lost), with their reasons, complete or not
    generation_failures: list[str] = msgspec.field(default_factory=list)


class PermutationRequest(Contract, kw_only=True):
    """``POST /v1/permutations``: options to put in every order of a scheme."""

    options: Annotated[list[str], msgspec.Meta(min_length=2, max_length=26)]
    #: ``swap`` (two options: A↔B) or ``cyclic`` (every rotation; needed for three or more)
    scheme: Literal["swap", "cyclic"] = "cyclic"


class OptionOrder(Contract, kw_only=True):
    """One order of the options, and where each original option stands in it."""

    #: the options in presentation order
    options: list[str]
    #: ``positions[i]`` is the letter at which original option i stands in this order
    positions: list[str]
    #: ``order[j]`` is the index of the original option shown at position j
    order: list[int]


class PermutationResponse(Contract, kw_only=True):
    """Every option order of the scheme."""

    scheme: str
    orders: list[OptionOrder]
