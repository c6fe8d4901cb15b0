"""Builds a set of verified paraphrases in rounds, docs/method.md §1.1."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from steadfast.services.perturb.domain.cleaning import candidate_lines, same_text
from steadfast.services.perturb.domain.prompts import (
    FEEDBACK,
    HINTS,
    PARAPHRASE_PROMPT_VERSION,
    TONES,
    paraphrase_messages,
)
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import (
    CandidateScores,
    GivenParaphrase,
    Kind,
    Paraphrase,
    ParaphraseRequest,
    ParaphraseResponse,
    Provenance,
    RejectedCandidate,
    RejectionStage,
    Tone,
    Verification,
)
from steadfast.shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.language import detect_language, language_name
from steadfast.shared.metering import MeteredCaller, ModelCaller


class Verifier(Protocol):
    async def verify(self, request: VerifyRequest) -> VerifyResponse: ...


class RequestError(Exception):
    """The request cannot be served as asked; ``field`` names the culprit."""

    title = "Invalid request"

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field


class UnknownRouteError(RequestError):
    """The gateway has no route of the requested name."""

    title = "Unknown model route"


def unknown_route(error: ServiceCallError) -> UnknownRouteError | None:
    """The gateway's 404 (no such route) as an error of the request's ``generator``."""
    if error.status != 404:
        return None
    return UnknownRouteError("generator", error.problem.detail or str(error))


class UpstreamUnavailable(Exception):
    """The generator's model or the verify service is down for now: the set cannot be built
    now, and asking again later may build it. Returned as an incomplete set it would be taken
    as final by an evaluation, and its answers lost."""


class VerifyRejectedError(Exception):
    """The verify service refused the request (4xx): the caller's verify settings are wrong."""

    def __init__(self, error: ServiceCallError) -> None:
        super().__init__(error.problem.detail or error.problem.title)
        self.error = error


@dataclass(frozen=True)
class CallSpec:
    """One generator call: ``count`` candidates of one kind in one style."""

    kind: Kind
    count: int
    sample_index: int
    seed: int
    hint: str | None = None
    tone: Tone | None = None
    feedback: str | None = None
    provenance: Provenance = "generated"


@dataclass
class _Progress:
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


def _failing_stage(verdicts: list[CandidateVerdict]) -> str | None:
    """The first error when no candidate of the round could be judged: every one that reached
    a model stage (judge, entailment) was rejected because the stage failed, not on its merits.
    Asking for more candidates would only spend the cap the same way."""
    reached = [
        v
        for v in verdicts
        if v.accepted or v.error is not None or v.deciding_stage in ("judge", "semantic")
    ]
    errors = [v.error for v in reached if v.error is not None]
    return errors[0] if reached and len(errors) == len(reached) else None


class _VerifyGaveUp(Exception):
    def __init__(self, error: ServiceCallError, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


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
    request: ParaphraseRequest, progress: _Progress, rng: random.Random, base_seed: int
) -> list[CallSpec]:
    """The calls of the next round: the candidates to ask for, ``candidates_per_call`` a call,
    each call with its hint or tone drawn from ``rng``."""
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
            index = progress.calls + len(specs)
            style = {"hint": rng.choice(HINTS)} if kind == "plain" else {"tone": rng.choice(tones)}
            specs.append(
                CallSpec(kind, count, index, base_seed + index, feedback=feedback, **style)  # type: ignore[arg-type]
            )
            wanted, room = wanted - count, room - count
    return specs


@dataclass
class _Run:
    """The state of building one set."""

    request: ParaphraseRequest
    started: float
    seed: int
    language: str | None
    progress: _Progress
    #: the generator wrapped for this set, so its calls and the judge's are counted
    model: MeteredCaller
    rng: random.Random = field(init=False)
    semantic_check: str = ""
    judge_version: str | None = None
    verification: Verification | None = None

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        # "auto" is resolved by the verify service, which names the check that ran
        semantic = self.request.verify.stages.semantic
        self.semantic_check = "" if semantic == "auto" else semantic

    @property
    def deadline(self) -> float:
        return self.started + self.request.time_budget_s

    @classmethod
    def start(cls, request: ParaphraseRequest, generator: ModelCaller) -> _Run:
        if request.given is not None:  # every given paraphrase that passes is in the set
            count = len(request.given)
            progress = _Progress(count, count, count, seen=[request.question])
        else:
            progress = _Progress(request.k, *request_targets(request), seen=[request.question])
        return cls(
            request=request,
            started=time.monotonic(),
            seed=request.seed if request.seed is not None else random.randrange(2**31),
            language=request.language or detect_language(request.question),
            progress=progress,
            model=MeteredCaller(generator),
        )


class ParaphraseBuilder:
    def __init__(
        self,
        generator: ModelCaller,
        verifier: Verifier,
        *,
        generation_concurrency: int = 4,
        verify_retry: Backoff | None = None,
    ) -> None:
        self._generator = generator
        self._verifier = verifier
        # a failing verify service (5xx, 429, unreachable) is asked again before the round's
        # candidates are recorded as unverified
        self._verify_retry = verify_retry or Backoff(attempts=3, base_delay_s=0.5)
        # requests beyond this wait here, so those still waiting at the time budget are dropped
        # before they reach the gateway instead of loading the model after the set is returned
        self._generation_concurrency = generation_concurrency

    async def build(self, request: ParaphraseRequest) -> ParaphraseResponse:
        if request.given is not None:
            return await self._take_given(_Run.start(request, self._generator))
        if request.plain_per_round + request.toned_per_round == 0:
            raise RequestError("plain_per_round", "a round must ask for at least one candidate")
        run = _Run.start(request, self._generator)
        reason: str | None = None
        while len(run.progress.selection()) < request.k:
            reason = self._stop_reason(request, run.progress, run.deadline)
            reason = reason or await self._round(run)
            if reason:
                break
        return _response(run, reason)

    async def _take_given(self, run: _Run) -> ParaphraseResponse:
        """The caller's paraphrases instead of generated ones: screened for repeats and
        verified in one call (unless ``verify_given`` is false); the set is those that pass."""
        request, progress = run.request, run.progress
        given = given_candidates(request.given or [])
        candidates = self._screen(given, progress)
        reason: str | None = None
        run.verification = Verification(provenance="given")  # until a verification ran
        if not request.verify_given:
            unchecked = [CandidateVerdict(text=text, accepted=True) for _, _, text in candidates]
            self._sort(request, candidates, unchecked, progress)
        elif candidates:
            response = await self._verify(run, candidates)
            if response is None:
                reason = "verification failed: " + progress.failures[-1]
            else:
                run.semantic_check = response.semantic_check
                run.judge_version = response.judge_prompt_version
                run.verification = verification_of(response, None, provenance="given")
                self._sort(request, candidates, response.results, progress)
        refused = len(given) - len(progress.selection())
        if refused and reason is None:
            reason = f"{refused} of {len(given)} given paraphrases rejected"
        return _response(run, reason)

    async def _round(self, run: _Run) -> str | None:
        """One round: its calls run at once; each call's candidates are verified as soon as it
        answers, and the round stops as soon as the set is full. A reason to stop, if any."""
        request, progress = run.request, run.progress
        specs = plan_round(request, progress, run.rng, run.seed)
        progress.rounds += 1
        progress.calls += len(specs)
        progress.requested += sum(spec.count for spec in specs)
        progress.failed_calls = progress.transient_calls = progress.cancelled_calls = 0
        first_rejection = len(progress.rejected)
        limit = asyncio.Semaphore(self._generation_concurrency)
        name = language_name(run.language)
        calls = {
            asyncio.create_task(self._generate_one(run, spec, name, limit)): spec for spec in specs
        }
        verdicts: list[CandidateVerdict] = []
        written = 0
        try:
            stop, written = await self._as_they_arrive(run, calls, verdicts)
        finally:
            for task in calls:
                task.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
        if request.feedback:
            progress.feedback = feedback_of(progress.rejected[first_rejection:])
        if stop:
            return stop
        if failing := _failing_stage(verdicts):
            return "verification failed on every candidate of a round: " + failing
        if not written and progress.failed_calls and not progress.cancelled_calls:
            reason = "generator failed on every request of a round: " + progress.failures[-1]
            if progress.transient_calls == progress.failed_calls:
                raise UpstreamUnavailable(reason)
            return reason
        return None

    async def _as_they_arrive(
        self,
        run: _Run,
        calls: dict[asyncio.Task[str], CallSpec],
        verdicts: list[CandidateVerdict],
    ) -> tuple[str | None, int]:
        """Verify each call's candidates as soon as it (and every call before it: the order
        stays the seed's) has answered, until the set is full or every call has answered; at the
        time budget the calls still out are dropped and what was written is verified. A reason
        to stop, and the candidates written."""
        progress, written, out_of_time = run.progress, 0, False
        ordered = list(calls)
        for position, task in enumerate(ordered):
            if not out_of_time:
                timeout = max(0.0, run.deadline - time.monotonic())
                await asyncio.wait({task}, timeout=timeout)
                if not task.done():  # what was written by now is still verified
                    out_of_time = True
                    late = sum(1 for later in ordered[position:] if not later.done())
                    progress.cancelled_calls = late
                    progress.failures.append(
                        f"{late} generation request(s) cancelled at the time budget"
                    )
            if not task.done():
                continue
            lines = self._lines(task, calls[task], progress)
            written += len(lines)
            candidates = self._screen(lines, progress)
            if not candidates:
                continue
            response = await self._verify(run, candidates)
            if response is None:
                return "verification failed: " + progress.failures[-1], written
            run.semantic_check = response.semantic_check
            run.judge_version = response.judge_prompt_version
            run.verification = verification_of(response, run.verification)
            self._sort(run.request, candidates, response.results, progress)
            verdicts.extend(response.results)
            if len(progress.selection()) >= run.request.k:
                return None, written
        return None, written

    @staticmethod
    def _lines(
        task: asyncio.Task[str], spec: CallSpec, progress: _Progress
    ) -> list[tuple[CallSpec, int, str]]:
        """The candidates a finished call wrote, each with its line number; a failed call is
        recorded with its reason."""
        error = task.exception()
        if error is None:
            reply = task.result()
            lines = candidate_lines(reply, spec.count)
            if not lines:
                progress.rejected.append(
                    _rejected(reply.strip()[:500], spec, 1, "clean", "no candidate in the reply")
                )
            progress.generated += len(lines)
            return [(spec, number, line) for number, line in enumerate(lines, 1)]
        if not isinstance(error, ServiceCallError):
            raise error
        if (route_error := unknown_route(error)) is not None:
            raise route_error from error
        outcome = error.problem.outcome or error.status or "unreachable"
        progress.failures.append(f"generate ({outcome}): {error.problem.detail or error}")
        progress.failed_calls += 1
        progress.transient_calls += error.transient
        return []

    @staticmethod
    def _stop_reason(
        request: ParaphraseRequest, progress: _Progress, deadline: float
    ) -> str | None:
        have = f"{len(progress.selection())} of {request.k} accepted"
        # out of time first: the cap counts candidates asked for, and those of requests still
        # out at the budget were never written
        if time.monotonic() >= deadline:
            return f"time budget of {request.time_budget_s:g} s ran out with {have}"
        if progress.requested >= request.max_candidates:
            return f"candidate cap of {request.max_candidates} reached with {have}"
        return None

    @staticmethod
    async def _generate_one(
        run: _Run, spec: CallSpec, language: str | None, limit: asyncio.Semaphore
    ) -> str:
        request = run.request
        messages = paraphrase_messages(
            request.question,
            count=spec.count,
            hint=spec.hint,
            tone=spec.tone,
            language=language,
            feedback=spec.feedback,
        )
        generate = GenerateRequest(
            model=request.generator,
            messages=messages,
            temperature=request.temperature,
            # a numbered line each, a little longer than the question at most
            max_tokens=min(4096, spec.count * (24 + len(request.question) // 3)),
            seed=spec.seed,
            sample_index=spec.sample_index,
            cache=request.cache,
        )
        async with limit:
            response = await run.model.generate(generate)
        return response.text

    @staticmethod
    def _screen(
        written: list[tuple[CallSpec, int, str]], progress: _Progress
    ) -> list[tuple[CallSpec, int, str]]:
        """Repeats are rejected without a model call."""
        kept: list[tuple[CallSpec, int, str]] = []
        for spec, line, text in written:
            if any(same_text(text, earlier) for earlier in progress.seen):
                progress.rejected.append(
                    _rejected(
                        text,
                        spec,
                        line,
                        "duplicate",
                        "same as the original or an earlier candidate",
                    )
                )
            else:
                progress.seen.append(text)
                kept.append((spec, line, text))
        return kept

    async def _verify(
        self, run: _Run, candidates: list[tuple[CallSpec, int, str]]
    ) -> VerifyResponse | None:
        request, progress = run.request, run.progress
        options = request.verify
        verify_request = VerifyRequest(
            original=request.question,
            candidates=[text for _, _, text in candidates],
            accepted=[p.text for p in progress.plain + progress.toned],
            task=request.task,
            stages=options.stages,
            thresholds=options.thresholds,
            judge_model=options.judge_model or request.generator,
            bidirectional=options.bidirectional,
            judge_logprobs=options.judge_logprobs,
            cache=request.cache,
        )
        try:
            response = await self._verify_with_retries(verify_request, run.deadline)
        except _VerifyGaveUp as gave_up:
            error = gave_up.error
            if error.refused:
                raise VerifyRejectedError(error) from error
            reason = (
                f"verify ({error.status or 'unreachable'}): {error.problem.detail or error} "
                f"(after {gave_up.attempts} attempt{'s' if gave_up.attempts > 1 else ''})"
            )
            if error.transient:
                raise UpstreamUnavailable(reason) from error
            progress.failures.append(reason)
            for spec, line, text in candidates:
                progress.rejected.append(_rejected(text, spec, line, "unverified", reason))
            return None
        run.model.add(response.model_calls)
        return response

    async def _verify_with_retries(self, request: VerifyRequest, deadline: float) -> VerifyResponse:
        """Ask again after a passing failure, unless the back-off would end past the set's time
        budget (the round's candidates are then unverified, with the reason)."""
        retry = self._verify_retry
        for attempt in range(1, retry.attempts + 1):
            try:
                return await self._verifier.verify(request)
            except ServiceCallError as error:
                out_of_time = time.monotonic() + retry.delay(attempt) > deadline
                if retry.gives_up(attempt, retryable=not error.refused) or out_of_time:
                    raise _VerifyGaveUp(error, attempt) from error
            await asyncio.sleep(retry.delay(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    @staticmethod
    def _sort(
        request: ParaphraseRequest,
        candidates: list[tuple[CallSpec, int, str]],
        verdicts: list[CandidateVerdict],
        progress: _Progress,
    ) -> None:
        for (spec, line, text), verdict in zip(candidates, verdicts, strict=True):
            scores = CandidateScores(
                overlap=verdict.overlap,
                judge=verdict.judge_p_yes,
                judge_verdict=verdict.judge_verdict,
                semantic=verdict.semantic,
            )
            if not verdict.accepted:
                # a stage that failed (its model out of reach) judged nothing: not a rejection
                # on the candidate's merits, and not counted as one
                failed = verdict.error is not None
                stage = "unverified" if failed else verdict.deciding_stage or "judge"
                progress.rejected.append(
                    _rejected(text, spec, line, stage, verdict.reason or "rejected", scores)
                )
                continue
            generated = spec.provenance == "generated"
            paraphrase = Paraphrase(
                text=text,
                kind=spec.kind,
                tone=spec.tone,
                hint=spec.hint,
                scores=scores,
                generator=request.generator if generated else "",
                seed=spec.seed if generated else None,
                sample_index=spec.sample_index,
                line=line,
                feedback=spec.feedback,
                prompt_version=PARAPHRASE_PROMPT_VERSION if generated else "",
                provenance=spec.provenance,
            )
            (progress.plain if spec.kind == "plain" else progress.toned).append(paraphrase)


def verification_of(
    response: VerifyResponse, earlier: Verification | None, provenance: Provenance = "generated"
) -> Verification:
    """How this round was verified; the threshold of an earlier round when no candidate of this
    one reached the judge."""
    threshold = response.judge_threshold or (earlier.judge_threshold if earlier else None)
    return Verification(
        stages=response.stages_run,
        semantic_check=response.semantic_check,
        judge_model=response.judge_model,
        judge_prompt_version=response.judge_prompt_version,
        judge_threshold=threshold,
        provenance=provenance,
    )


def given_candidates(given: list[str | GivenParaphrase]) -> list[tuple[CallSpec, int, str]]:
    """The caller's paraphrases as candidates, each numbered by its place in the request."""
    candidates = []
    for line, paraphrase in enumerate(given, 1):
        if isinstance(paraphrase, str):
            paraphrase = GivenParaphrase(text=paraphrase)
        spec = CallSpec(paraphrase.kind, 1, 0, 0, tone=paraphrase.tone, provenance="given")
        candidates.append((spec, line, paraphrase.text.strip()))
    return candidates


def _response(run: _Run, reason: str | None) -> ParaphraseResponse:
    selection = run.progress.selection()
    if run.request.given is not None:  # in the caller's order
        selection.sort(key=lambda paraphrase: paraphrase.line)
    complete = len(selection) >= run.progress.k
    return ParaphraseResponse(
        question=run.request.question,
        accepted=selection,
        rejected=run.progress.rejected,
        surplus=run.progress.surplus(),
        candidates_generated=run.progress.generated,
        rounds=run.progress.rounds,
        generator_calls=run.progress.calls,
        elapsed_s=round(time.monotonic() - run.started, 3),
        complete=complete,
        incomplete_reason=None if complete else reason,
        generation_failures=run.progress.failures,
        seed=run.seed,
        generator=run.request.generator,
        prompt_version=PARAPHRASE_PROMPT_VERSION,
        judge_prompt_version=run.judge_version,
        semantic_check=run.semantic_check,
        verification=run.verification,
        language=run.language,
        model_calls=run.model.summary(),
    )


def feedback_of(rejected: list[RejectedCandidate]) -> str | None:
    """Why a round's candidates were rejected, its two most frequent reasons in words (none
    when nothing was rejected on its merits)."""
    stages = Counter(r.stage for r in rejected if r.stage in FEEDBACK)
    reasons = [FEEDBACK[stage] for stage, _ in stages.most_common(2)]
    return "; ".join(reasons) or None


def _rejected(
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
