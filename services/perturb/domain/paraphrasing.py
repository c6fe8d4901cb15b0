"""Builds a set of verified paraphrases in rounds, docs/method.md §1.1."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from steadfast.services.perturb.domain.cleaning import (
    candidate_lines,
    complete_lines,
    same_text,
    text_key,
)
from steadfast.services.perturb.domain.errors import (
    RequestError,
    UpstreamUnavailable,
    VerifyRejectedError,
    unknown_route,
)
from steadfast.services.perturb.domain.paraphrase_rounds import (
    CallSpec,
    Progress,
    feedback_of,
    first_rejections,
    next_temperature,
    plan_round,
    rejected_candidate,
)
from steadfast.services.perturb.domain.paraphrase_run import (
    ParaphraseRun,
    given_candidates,
    response_of,
    verification_of,
)
from steadfast.services.perturb.domain.prompts import PARAPHRASE_PROMPT_VERSION, paraphrase_messages
from steadfast.shared.answers import screenable_answers, stated_in
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.gateway import GenerateRequest, gateway_outcome
from steadfast.shared.contracts.perturb import (
    CandidateScores,
    Paraphrase,
    ParaphraseRequest,
    ParaphraseResponse,
    Verification,
)
from steadfast.shared.contracts.verify import CandidateVerdict, VerifyRequest, VerifyResponse
from steadfast.shared.http_client import ServiceCallError
from steadfast.shared.language import language_name
from steadfast.shared.metering import ModelCaller


class Verifier(Protocol):
    """The verify service, as the builder calls it."""

    async def verify(self, request: VerifyRequest) -> VerifyResponse: ...


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


class _NotSent(Exception):
    """A generation request that waited for a free slot until the time budget ran out."""


#: how long after the time budget a request is waited for: the gateway answers one with a time
#: limit at the budget with what it has written (a route that cannot stop a reply writes on
#: and is dropped)
LATE_REPLY_S = 3.0


class ParaphraseBuilder:
    """Builds a set of verified paraphrases of a question: generates candidates in rounds and has
    the verify service judge them, until the set is full or its cap or time budget runs out."""

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
            return await self._take_given(ParaphraseRun.start(request, self._generator))
        if request.plain_per_round + request.toned_per_round == 0:
            raise RequestError("plain_per_round", "a round must ask for at least one candidate")
        run = ParaphraseRun.start(request, self._generator)
        reason: str | None = None
        while len(run.progress.selection()) < request.k:
            reason = self._stop_reason(request, run.progress, run.deadline)
            reason = reason or await self._round(run)
            if reason:
                break
        return response_of(run, reason)

    async def _take_given(self, run: ParaphraseRun) -> ParaphraseResponse:
        """The caller's paraphrases instead of generated ones: screened for repeats and
        verified in one call (unless ``verify_given`` is false); the set is those that pass."""
        request, progress = run.request, run.progress
        given = given_candidates(request.given or [])
        answers = request.answers if request.verify_given else []
        candidates = self._screen(given, progress, request.question, answers)
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
        return response_of(run, reason)

    async def _round(self, run: ParaphraseRun) -> str | None:
        """One round: its calls run at once; each call's candidates are verified as soon as it
        answers, and the round stops as soon as the set is full. A reason to stop, if any."""
        request, progress = run.request, run.progress
        specs = plan_round(request, progress, run.rng, run.seed)
        progress.rounds += 1
        progress.calls += sum(spec.samples for spec in specs)
        progress.requested += sum(spec.count * spec.samples for spec in specs)
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
        this_round = progress.rejected[first_rejection:]
        if request.feedback:
            progress.feedback = feedback_of(this_round, progress.rejected[:first_rejection])
        progress.temperature = next_temperature(request, progress, this_round, written)
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
        run: ParaphraseRun,
        calls: dict[asyncio.Task[list[str]], CallSpec],
        verdicts: list[CandidateVerdict],
    ) -> tuple[str | None, int]:
        """Verify each call's candidates as soon as it (and every call before it: the order
        stays the seed's) has answered, until the set is full or every call has answered. A call
        is asked to stop writing at the time budget and answers with its whole lines; one still
        out ``LATE_REPLY_S`` after the budget is dropped. A reason to stop, and the candidates
        written."""
        progress, written, out_of_time, not_sent = run.progress, 0, False, 0
        ordered = list(calls)
        for position, task in enumerate(ordered):
            if not out_of_time:
                timeout = max(0.0, run.deadline + LATE_REPLY_S - time.monotonic())
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
            if isinstance(task.exception(), _NotSent):
                not_sent += 1
                continue
            lines = self._lines(task, calls[task], progress)
            written += len(lines)
            candidates = self._screen(lines, progress, run.request.question, run.request.answers)
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
        if not_sent:
            progress.cancelled_calls += not_sent
            progress.failures.append(
                f"{not_sent} generation request(s) not sent: the time budget ran out while they "
                "waited for a free slot"
            )
        return None, written

    @staticmethod
    def _lines(
        task: asyncio.Task[list[str]], spec: CallSpec, progress: Progress
    ) -> list[tuple[CallSpec, int, str]]:
        """The candidates a finished request wrote, each with its line number (counted on
        through its samples); a failed request is recorded with its reason."""
        error = task.exception()
        if error is None:
            written: list[str] = []
            for reply in task.result():
                lines = candidate_lines(reply, spec.count)
                if not lines:
                    progress.rejected.append(
                        rejected_candidate(
                            reply.strip()[:500],
                            spec,
                            len(written) + 1,
                            "clean",
                            "no candidate in the reply",
                        )
                    )
                written += lines
            progress.generated += len(written)
            return [(spec, number, line) for number, line in enumerate(written, 1)]
        if not isinstance(error, ServiceCallError):
            raise error
        if (route_error := unknown_route(error)) is not None:
            raise route_error from error
        outcome = gateway_outcome(error.problem) or error.status or "unreachable"
        progress.failures.append(f"generate ({outcome}): {error.problem.detail or error}")
        progress.failed_calls += 1
        progress.transient_calls += error.transient
        return []

    @staticmethod
    def _stop_reason(request: ParaphraseRequest, progress: Progress, deadline: float) -> str | None:
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
        run: ParaphraseRun, spec: CallSpec, language: str | None, limit: asyncio.Semaphore
    ) -> list[str]:
        """The replies of one request: one a sample."""
        request = run.request
        async with limit:
            left_s = run.deadline - time.monotonic()
            if left_s <= 0:
                raise _NotSent("waited past the time budget")
            # written once a slot is free, so it names what was accepted while the call waited
            messages = paraphrase_messages(
                request.question,
                count=spec.count,
                hint=spec.hint,
                tone=spec.tone,
                language=language,
                feedback=spec.feedback,
                accepted=[paraphrase.text for paraphrase in run.progress.selection()],
                overlap_limit=request.verify.thresholds.overlap,
            )
            generate = GenerateRequest(
                model=request.generator,
                messages=messages,
                temperature=request.temperature if spec.temperature is None else spec.temperature,
                # a numbered line each, a little longer than the question at most
                max_tokens=min(4096, spec.count * (24 + len(request.question) // 3)),
                seed=spec.seed,
                sample_index=spec.sample_index,
                n=spec.samples,
                cache=request.cache,
                # a list still being written at the budget is kept up to its last whole line
                time_limit_s=left_s,
            )
            response = await run.model.generate(generate)
        replies = response.samples or [response.text]
        if response.finish_reason == "time_limit":
            # a reply cut before its first whole line wrote nothing to reject
            return [lines for reply in replies if (lines := complete_lines(reply))]
        return replies

    @staticmethod
    def _screen(
        written: list[tuple[CallSpec, int, str]],
        progress: Progress,
        question: str,
        answers: list[str],
    ) -> list[tuple[CallSpec, int, str]]:
        """Repeats, and candidates that state one of the question's ``answers``, are rejected
        without a model call."""
        kept: list[tuple[CallSpec, int, str]] = []
        screenable = screenable_answers(question, answers) if answers else []
        first = first_rejections(progress.rejected)
        for spec, line, text in written:
            if any(same_text(text, earlier) for earlier in progress.seen):
                reason = "same as the original or an earlier candidate"
                if (before := first.get(text_key(text))) is not None:
                    reason += f", rejected at stage {before.stage}: {before.reason}"
                progress.rejected.append(rejected_candidate(text, spec, line, "duplicate", reason))
                continue
            progress.seen.append(text)
            if stated := stated_in(text, screenable):
                reason = f"states the answer ({stated!r}): it gives the answer away"
                progress.rejected.append(
                    rejected_candidate(text, spec, line, "states_answer", reason)
                )
                continue
            kept.append((spec, line, text))
        return kept

    async def _verify(
        self, run: ParaphraseRun, candidates: list[tuple[CallSpec, int, str]]
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
                progress.rejected.append(rejected_candidate(text, spec, line, "unverified", reason))
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
        progress: Progress,
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
                    rejected_candidate(
                        text, spec, line, stage, verdict.reason or "rejected", scores
                    )
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
                temperature=spec.temperature if generated else None,
                feedback=spec.feedback,
                prompt_version=PARAPHRASE_PROMPT_VERSION if generated else "",
                provenance=spec.provenance,
            )
            (progress.plain if spec.kind == "plain" else progress.toned).append(paraphrase)
