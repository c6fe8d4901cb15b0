"""The job engine: works on persisted evaluations through row leases until they are finished.

Every evaluator process runs one ``JobRunner`` (``job_runner.py``); each active job gets
paraphrase lanes (one item at a time: perturb → verify) and answer lanes (batches of variants:
gateway → scoring). Each answer is stored when it arrives, so a restarted process continues
where the killed one stopped; several processes on one PostgreSQL split a job because each row
is leased to one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from steadfast.services.evaluator.adapters.evaluations.rows import (
    AnswerRow,
    Failure,
    ItemRow,
    StoredAnswer,
    StoredGrade,
)
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.domain.audit import audit_note, run_audit
from steadfast.services.evaluator.domain.clustering import cluster_answers
from steadfast.services.evaluator.domain.fan_out import paraphrase_answers
from steadfast.services.evaluator.domain.job_context import JobContext
from steadfast.services.evaluator.domain.job_results import (
    AuditedOut,
    audited_items,
    build_results,
    clustered_items,
    consistency_records,
    grouped_by_meaning,
)
from steadfast.services.evaluator.domain.pipeline import (
    Upstream,
    answer_request,
    answer_value,
    consistency_request,
    grade_all,
    grade_key,
    incomplete_note,
    paraphrase_request,
    to_paraphrase_set,
    unanswered_by_cut,
    with_retries,
)
from steadfast.services.evaluator.errors import UpstreamError
from steadfast.services.evaluator.metrics import (
    ANSWERS_STORED,
    EVALUATIONS_FINISHED,
    PARAPHRASE_SETS,
)
from steadfast.services.evaluator.records import AnswerRecord, Generated, ParaphraseSet
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.evaluator import EvaluationItem
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.scoring import Gold, GradeResult

logger = logging.getLogger(__name__)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class EngineSettings:
    """How the job engine works: lanes per job, batch size, polling, jobs at once, and the
    retry policies."""

    paraphrase_lanes: int = 4
    answer_lanes: int = 4
    answer_batch: int = 16
    poll_s: float = 0.5
    max_jobs: int = 2
    #: answer lanes wait until every item of the job has its paraphrase set: on one local model
    #: the sets, which have a time budget, then have it to themselves
    answers_after_paraphrases: bool = False
    retry: Backoff = field(default_factory=Backoff)
    #: for a service that cannot be reached: a restart of the gateway must not fail every
    #: answer in flight
    unreachable_retry: Backoff = field(default_factory=lambda: Backoff.lasting(300.0, 1.0))


class JobEngine:
    """Runs an evaluation's lanes until nothing is left to claim, then finalises it: results,
    metrics and status."""

    def __init__(
        self,
        store: EvaluationStore,
        upstream: Upstream,
        settings: EngineSettings | None = None,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.settings = settings or EngineSettings()
        self.owner = owner or worker_name()
        #: set when the process shuts down: lanes stop claiming and return
        self.stopping = False

    async def run(self, evaluation_id: str) -> None:
        """Work on one job until nothing is left to claim, then finalise it (if no one else
        does)."""
        evaluation = await self.store.get(evaluation_id)
        if evaluation is None or evaluation.status not in ("queued", "running"):
            return
        await self.store.mark_running(evaluation_id)
        context = JobContext(evaluation, await self.store.items(evaluation_id))
        async with asyncio.TaskGroup() as lanes:  # a crashing lane stops its siblings
            for _ in range(self.settings.paraphrase_lanes):
                lanes.create_task(self._paraphrase_lane(context))
            for _ in range(self.settings.answer_lanes):
                lanes.create_task(self._answer_lane(context))
        if await self._active(context, force=True):
            await self._finalise(context)

    async def _active(self, context: JobContext, force: bool = False) -> bool:
        """Whether the job still runs (not cancelled); looked up at most twice a second."""
        if self.stopping:
            return False
        now = time.monotonic()
        if force or now - context._checked_at > 0.5:
            context._active = await self.store.status_of(context.id) == "running"
            context._checked_at = now
        return context._active

    async def _idle(self, context: JobContext) -> bool:
        """Nothing to claim now: wait (others hold leases, or back-off) or report done."""
        if not await self.store.has_open_work(context.id):
            context.work_added.notify_all()  # the other idle lanes are done too
            return True
        await context.work_added.wait(self.settings.poll_s)
        return False

    # ---- paraphrase stage --------------------------------------------------------------

    async def _paraphrase_lane(self, context: JobContext) -> None:
        while await self._active(context):
            rows = await self.store.claim_items(context.id, self.owner, 1)
            if not rows:
                if not await self.store.has_pending_items(context.id):
                    return
                await asyncio.sleep(self.settings.poll_s)
                continue
            for row in rows:
                await self._paraphrase(context, row)

    async def _paraphrase(self, context: JobContext, row: ItemRow) -> None:
        request = paraphrase_request(context.settings, row.item)
        # a set of given paraphrases generates nothing: it neither borrows nor lends time
        sharing = context.settings.share_time_budget and request.given is None
        budget = request.time_budget_s
        lent = context.time_pool.lend(budget) if sharing else 0.0
        asked = msgspec.structs.replace(request, time_budget_s=budget + lent) if lent else request
        elapsed: float | None = None
        try:
            async with self._leased("items", [row.row_id]):
                response = await self.upstream.paraphrase(asked)
            elapsed = response.elapsed_s
        except UpstreamError as error:
            failure = self._failure(row, error, "paraphrase")
            await self.store.fail_item(row, self.owner, failure)
            PARAPHRASE_SETS.labels("retried" if failure.retry_at else "failed").inc()
            return
        finally:  # whatever happened, a loan comes back (whole when the set failed)
            if sharing:
                context.time_pool.settle(budget, lent, elapsed)
        # the set's id is its settings', whatever time it was lent
        paraphrase_set = to_paraphrase_set(request, response)
        PARAPHRASE_SETS.labels("complete" if paraphrase_set.complete else "incomplete").inc()
        await self.store.complete_item(
            context.id,
            row,
            self.owner,
            paraphrase_set,
            paraphrase_answers(context.settings, context.models, row, paraphrase_set),
            incomplete_note(paraphrase_set, lent),
        )
        context.work_added.notify()

    # ---- answer and grade stages -------------------------------------------------------

    async def _answer_lane(self, context: JobContext) -> None:
        # variants this process queues wake a lane at once; the others poll the database
        # every poll_s (work of other evaluators, retries, expired leases)
        while await self._active(context):
            if self.settings.answers_after_paraphrases and await self.store.has_pending_items(
                context.id
            ):
                await context.work_added.wait(self.settings.poll_s)
                continue
            rows = await self.store.claim_answers(
                context.id, self.owner, self.settings.answer_batch
            )
            if rows:
                async with self._leased("answers", [row.row_id for row in rows]):
                    await self._answer_and_grade(context, rows)
            elif await self._idle(context):
                return

    async def _answer_and_grade(self, context: JobContext, rows: list[AnswerRow]) -> None:
        by_id = {row.row_id: row for row in rows}
        to_answer = [row for row in rows if row.record.status == "pending"]
        to_grade = [row for row in rows if row.record.status == "answered"]
        if to_answer:
            to_grade += await self._answer(context, to_answer, by_id)
        if to_grade:
            await self._grade(context, to_grade, by_id)

    async def _answer(
        self, context: JobContext, rows: list[AnswerRow], by_id: dict[int, AnswerRow]
    ) -> list[AnswerRow]:
        """Ask the models; store each answer; return the answered rows that need grading."""
        requests = [
            answer_request(
                context.settings,
                context.items[row.record.position],
                row.record.model,
                row.record.prompt,
                context.languages[row.record.position],
            )
            for row in rows
        ]
        outcomes = await self._generate(requests)
        stored: list[StoredAnswer] = []
        failures: list[Failure] = []
        to_grade: list[AnswerRow] = []
        for row, outcome in zip(rows, outcomes, strict=True):
            if outcome.text is None:
                failures.append(self._failure(row, outcome.error, "answer"))
                continue
            item = context.items[row.record.position]
            unanswered = unanswered_by_cut(context.settings, item, outcome)
            has_gold = context.golds[row.record.position] is not None
            needs_grade = has_gold and not unanswered
            value = None if unanswered else answer_value(context.settings, item, outcome.text)
            stored.append(
                StoredAnswer(
                    row.row_id,
                    outcome.text,
                    value,
                    outcome.cached,
                    final=not needs_grade,
                    # without a gold answer it stays unlabelled (unparsed), as other
                    # answers of the item are
                    label="invalid" if unanswered and has_gold else None,
                )
            )
            if needs_grade:
                row.record.text, row.record.value, row.record.status = (
                    outcome.text,
                    value,
                    "answered",
                )
                row.attempts = row.unreachable_attempts = 0  # as stored: grading has its own
                to_grade.append(row)
        await self.store.store_answers(self.owner, stored)
        await self.store.fail_answers(self.owner, failures, by_id)
        ANSWERS_STORED.labels("answered").inc(len(stored))
        for failure in failures:
            ANSWERS_STORED.labels("retried" if failure.retry_at else "failed").inc()
        return to_grade

    async def _generate(self, requests: list[GenerateRequest]) -> list[Generated]:
        try:
            return await self.upstream.generate_batch(requests)
        except UpstreamError as error:
            return [Generated(error=error) for _ in requests]

    async def _grade(
        self, context: JobContext, rows: list[AnswerRow], by_id: dict[int, AnswerRow]
    ) -> None:
        ungraded = [row for row in rows if context.golds[row.record.position] is None]
        rows = [row for row in rows if context.golds[row.record.position] is not None]
        grades = [StoredGrade(row.row_id, None) for row in ungraded]
        graded = []
        for row in rows:
            gold = context.golds[row.record.position]
            assert gold is not None and row.record.text is not None
            graded.append((context.items[row.record.position], gold, row.record.text))
        if graded:
            try:
                outcomes = await self._grade_batch(context, graded)
            except UpstreamError as error:
                outcomes = [error] * len(rows)
            failures = [
                self._failure(row, outcome, "grade")
                for row, outcome in zip(rows, outcomes, strict=True)
                if isinstance(outcome, UpstreamError)
            ]
            await self.store.fail_answers(self.owner, failures, by_id)
            grades += [
                StoredGrade(row.row_id, outcome.label, grade_key(context.settings, item, text))
                for row, outcome, (item, _, text) in zip(rows, outcomes, graded, strict=True)
                if not isinstance(outcome, UpstreamError)
            ]
        await self.store.store_grades(self.owner, grades)

    async def _grade_batch(
        self, context: JobContext, graded: list[tuple[EvaluationItem, Gold, str]]
    ) -> list[GradeResult | UpstreamError]:
        """The batch's grades; when scoring refuses the batch (one gold it cannot read, say),
        each answer alone: the refused one fails with its reason, the others are graded."""
        try:
            return list(await grade_all(self.upstream, context.settings, graded))
        except UpstreamError as error:
            if error.retryable or len(graded) == 1:
                raise
        outcomes: list[GradeResult | UpstreamError] = []
        for one in graded:
            try:
                outcomes += await grade_all(self.upstream, context.settings, [one])
            except UpstreamError as error:
                outcomes.append(error)
        return outcomes

    def _failure(
        self, row: ItemRow | AnswerRow, error: UpstreamError | None, stage: str
    ) -> Failure:
        """The failure to record, given up or retried by the policy of its kind: a service out
        of reach is waited for patiently, and that wait leaves the other attempts untouched."""
        error = error or UpstreamError("no result", retryable=True)
        if error.unreachable:
            policy, made = self.settings.unreachable_retry, row.unreachable_attempts + 1
        else:
            policy, made = self.settings.retry, row.attempts + 1
        give_up = policy.gives_up(made, retryable=error.retryable)
        retry_at = None if give_up else time.time() + policy.delay(made)
        reason = error.reason if not give_up else f"{error.reason} (after {made} attempts)"
        return Failure(row.row_id, reason, stage, retry_at, unreachable=error.unreachable)

    @contextlib.asynccontextmanager
    async def _leased(self, table: str, ids: Iterable[int | str]) -> AsyncIterator[None]:
        """Renew the leases of rows being worked on, so a slow model call keeps them."""
        ids = list(ids)

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.store.lease_s / 3)
                try:
                    await self.store.renew(table, ids, self.owner)
                except Exception:  # a database blip: try again at the next tick, keep working
                    logger.warning(
                        "renewing the leases of %d %s failed", len(ids), table, exc_info=True
                    )

        task = asyncio.create_task(renew())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ---- finalise ----------------------------------------------------------------------

    async def _finalise(self, context: JobContext) -> None:
        if not await self.store.lease_evaluation(context.id, self.owner):
            return
        try:
            if await self.store.has_open_work(context.id):
                return
            # the metrics call may outlast the lease (a large job, scoring restarting): another
            # worker taking it over would throw this one's results away, and so on
            async with self._leased("evaluations", [context.id]):
                results, message, answered = await self._results(context)
            # a job none of whose answers came back failed, though its results (every
            # failure with its reason) are kept
            status = "succeeded" if results is not None and answered else "failed"
            if await self.store.finish(context.id, self.owner, status, results, message):
                EVALUATIONS_FINISHED.labels(status).inc()
        finally:
            await self.store.release_evaluation(context.id, self.owner)

    async def give_up(self, evaluation_id: str, reason: str) -> bool:
        """Fail a job that cannot be run (its run keeps failing on something no retry mends)."""
        if not await self.store.lease_evaluation(evaluation_id, self.owner):
            return False
        try:
            failed = await self.store.finish(evaluation_id, self.owner, "failed", None, reason)
        finally:
            await self.store.release_evaluation(evaluation_id, self.owner)
        if failed:
            EVALUATIONS_FINISHED.labels("failed").inc()
        return failed

    async def _results(self, context: JobContext) -> tuple[Any, str | None, bool]:
        """The results, the job's message, and whether any answer came back."""
        items = await self.store.items(context.id)
        answers = await self.store.answers_of(context.id)
        answered = any(answer.text is not None for answer in answers)
        sets = await self.store.paraphrase_sets(
            r.paraphrase_set_id for r in items if r.paraphrase_set_id
        )
        clustered = await cluster_answers(
            self.upstream, context.settings, clustered_items(items, answers)
        )
        answers = grouped_by_meaning(items, answers, clustered.clusters)
        audit = await run_audit(
            self.upstream,
            context.settings,
            audited_items(items, sets, answers),
            self.settings.retry,
        )
        metrics, metrics_error = await self._metrics(context, items, answers, sets, audit.removed)
        if metrics_error:
            return None, f"metrics could not be computed: {metrics_error}", answered
        results = build_results(
            context.settings, context.models, items, sets, answers, metrics, audit, clustered
        )
        errors, error_count = await self.store.errors(context.id, 1)
        message = f"finished with {error_count} recorded failures" if error_count else None
        if not answered:
            first = f"; the first: {errors[0].reason}" if errors else ""
            message = f"no answer came back ({error_count} recorded failures{first})"
        elif note := audit_note(audit):
            message = f"{message}; {note}" if message else note
        return results, message, answered

    async def _metrics(
        self,
        context: JobContext,
        items: list[ItemRow],
        answers: list[AnswerRecord],
        sets: dict[str, ParaphraseSet],
        audited_out: AuditedOut,
    ) -> tuple[dict[str, Any] | None, str | None]:
        records = consistency_records(items, answers, sets, audited_out)
        if not records:
            return None, None
        request = consistency_request(context.settings, records)

        def call() -> Awaitable[dict[str, Any]]:
            return self.upstream.consistency(request)

        try:
            try:
                return await with_retries(call, self.settings.retry), None
            except UpstreamError as error:
                # scoring restarting: wait for it as the answers' grading would, rather than
                # fail a job whose every answer is stored
                if not error.unreachable:
                    raise
                return await with_retries(call, self.settings.unreachable_retry), None
        except UpstreamError as error:
            return None, error.reason
