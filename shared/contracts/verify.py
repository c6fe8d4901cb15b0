"""Wire contracts of the verify service (``/v1/verify``): docs/method.md §1.1 steps 2–4, and
the audit's check of §1.4."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import Contract, RouteName, Task
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.gateway import ModelCalls

#: "auto": the NLI model where one is configured, else the embedding check (docs/method.md §1.1's
#: documented fallback); the response names the one that ran
SemanticCheck = Literal["auto", "embedding", "nli", "off"]
#: ``audit``: the judge's second, differently worded question (docs/method.md §1.4 "Audit");
#: ``answer``: the audit's check that the item's answer still answers the rewording
Stage = Literal["form", "direction", "lexical", "numbers", "judge", "semantic", "audit", "answer"]

Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class VerifyStages(Contract, kw_only=True):
    """Which verification stages run on a candidate paraphrase (docs/method.md §1.1)."""

    #: a rewording of a question or a request is a question or a request, never a statement
    #: (which may answer it): this service's addition, a cheap guard the judge needs
    form: bool = True
    #: a rewording asks for the same end of a scale ("largest" never becomes "smallest", "first"
    #: never "last", "start" never "stop"): this service's addition, as the judge reads such a
    #: turned question as the same one
    direction: bool = True
    lexical: bool = True
    #: quantity invariance (docs/method.md §1.1 step 3): reject a candidate that lacks a number
    #: of the original (digits, words, ordinals, fractions, percentages, amounts, years, in
    #: any form of the same value) or adds one; a small judge and embeddings miss changed numbers
    numbers: bool = True
    judge: bool = True
    semantic: SemanticCheck = "auto"


class VerifyThresholds(Contract, kw_only=True):
    """Defaults are docs/method.md's (overlap, judge, nli) and the calibrated embedding value."""

    #: reject when overlap with the original or an accepted paraphrase is >= this
    overlap: Share = 0.8
    #: accept when the judge's mean P(YES) over the orders asked is >= this (where the backend
    #: gives logprobs; else METHOD's reply rule: every reply starts with "Y"). Unset: the judge
    #: route's calibrated threshold, else METHOD's 0.5; the response names the one used
    judge_p_yes: Share | None = None
    #: the same for the audit's second question (``audit``)
    audit_p_yes: Share | None = None
    #: accept when the cosine similarity of the sentence embeddings is >= this
    embedding: Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)] = 0.80
    #: accept when the mean of both entailment directions is >= this
    nli: Share = 0.75
    #: the answer check (``reference_answers``) runs only when the judge finds a reference
    #: answer right for the original with P(YES) >= this (it knows the fact) ...
    answer_known: Share = 0.5
    #: ... and then rejects a candidate for which its P(YES) for that answer is at least this
    #: much lower than for the original
    answer_drop: Share = 0.3


class VerifyOptions(Contract, kw_only=True):
    """How candidates are verified; embedded in paraphrase requests as ``verify``."""

    stages: VerifyStages = msgspec.field(default_factory=VerifyStages)
    thresholds: VerifyThresholds = msgspec.field(default_factory=VerifyThresholds)
    #: gateway route of the judge; default: the generator's route (or ``local``)
    judge_model: RouteName | None = None
    #: ask the judge with the texts in both orders and keep the stricter verdict
    bidirectional: bool = True
    #: ask the gateway for the first token's logprobs to report P(YES) (skipped where unsupported)
    judge_logprobs: bool = True


class VerifyRequest(VerifyOptions, kw_only=True):
    """``POST /v1/verify``: candidate paraphrases to check against the original question."""

    original: Annotated[str, msgspec.Meta(min_length=1, max_length=20000)]
    candidates: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=20000)]],
        msgspec.Meta(min_length=1, max_length=500),
    ]
    #: paraphrases accepted earlier: the lexical filter compares against these too
    accepted: list[str] = msgspec.field(default_factory=list)
    task: Task | None = None
    #: run every stage for every candidate instead of stopping at the first rejection
    explain_all: bool = False
    #: use the gateway's response cache for the judge's calls (false: every call goes upstream)
    cache: bool = True
    #: also ask the judge a second, differently worded equivalence question, both orders (the
    #: audit's check, docs/method.md §1.4); a candidate passes only if both questions do
    audit: bool = False
    #: the route asked the audit's question; default: the judge's
    audit_judge_model: RouteName | None = None
    #: with ``audit``: the original's correct answers. The audit's judge is asked whether each
    #: is a correct answer to the original; when one is (P(YES) >= ``answer_known``), a
    #: candidate for which it is much less sure (by ``answer_drop``) asks something else
    #: and is rejected at stage ``answer`` ("Which is the largest city in Australia?" for "What
    #: is the capital city of Australia?", answer "Canberra")
    reference_answers: Annotated[
        list[Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]],
        msgspec.Meta(max_length=3),
    ] = msgspec.field(default_factory=list)


class JudgeVote(Contract, kw_only=True):
    """The judge's answer for one order of the two texts."""

    order: Literal["original_first", "candidate_first"]
    reply: str
    verdict: Literal["yes", "no"]
    p_yes: float | None = None


class CandidateVerdict(Contract, kw_only=True):
    """One candidate's verdict: accepted or not, the stage that rejected it, and the scores
    of every stage that ran."""

    text: str
    accepted: bool
    #: the stage that rejected the candidate (None when accepted)
    deciding_stage: Stage | None = None
    reason: str | None = None
    #: highest overlap with the original or an accepted paraphrase
    overlap: float | None = None
    #: the verdict: mean P(YES) at the threshold, or every order's reply "YES" without logprobs
    judge_verdict: Literal["yes", "no"] | None = None
    #: the mean P(YES) over the orders asked, where logprobs exist (one order only when the
    #: first already failed the candidate: the second is then not asked, unless ``explain_all``)
    judge_p_yes: float | None = None
    judge_votes: list[JudgeVote] | None = None
    #: the same for the audit's second question, when asked
    audit_verdict: Literal["yes", "no"] | None = None
    audit_p_yes: float | None = None
    audit_votes: list[JudgeVote] | None = None
    #: P(YES) that the reference answer the answer check used is a correct answer to this
    #: candidate (when that check ran on it)
    answer_p_yes: float | None = None
    #: cosine similarity (embedding) or mean bidirectional entailment probability (nli)
    semantic: float | None = None
    semantic_check: SemanticCheck | None = None
    #: set when a stage could not run (e.g. the judge's model call failed); the candidate is
    #: rejected by that stage, with this reason
    error: str | None = None


class VerifyResponse(Contract, kw_only=True):
    """The verdicts, in the candidates' order, with the checks and judge thresholds used."""

    results: list[CandidateVerdict]
    semantic_check: SemanticCheck
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    #: the P(YES) threshold the judge was held to, and where it comes from (when it ran)
    judge_threshold: JudgeThreshold | None = None
    audit_judge_model: str | None = None
    audit_prompt_version: str | None = None
    audit_threshold: JudgeThreshold | None = None
    #: the answer check: the reference answer it held candidates to and P(YES) that it is a
    #: correct answer to the original (below ``answer_known``: no candidate was held to it)
    answer_reference: str | None = None
    answer_p_yes_original: float | None = None
    stages_run: list[Stage] = msgspec.field(default_factory=list)
    #: the judge's model calls for this request (the only stage that calls a model)
    model_calls: ModelCalls = msgspec.field(default_factory=ModelCalls)
