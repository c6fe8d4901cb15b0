"""Studies: several data sets × several models × both protocols, started together and read as
one report. Each part runs as the persisted job it is on its own (an evaluation, or a
positional-bias job), so a study survives a restart as its jobs do; the study ties them
together. A part's paraphrases and answers come from fixed seeds and the gateway's response
cache, so running the same study again asks no model anything new (but for a paraphrase set
that was left incomplete, which is built again)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import msgspec

from steadfast.services.evaluator.adapters.studies import (
    PartJob,
    StudyRow,
    StudyStore,
    new_study_id,
)
from steadfast.services.evaluator.domain.job_starter import JobStarter, require_protocol_request
from steadfast.services.evaluator.domain.report import (
    described_counts,
    languages_of,
)
from steadfast.services.evaluator.timestamps import iso
from steadfast.shared.contracts.evaluator import EvaluationCreate, JobStatus, MetricValue
from steadfast.shared.contracts.monitors import MonitorValue
from steadfast.shared.contracts.position import PositionBiasEvaluate, PositionBiasEvaluation
from steadfast.shared.contracts.studies import (
    CONSISTENCY_COLUMNS,
    POSITION_COLUMNS,
    Progress,
    StudyAccepted,
    StudyConsistency,
    StudyCreate,
    StudyPage,
    StudyPart,
    StudyPartReport,
    StudyPartStatus,
    StudyPosition,
    StudyReport,
    StudyStatus,
    StudyStatusName,
)
from steadfast.shared.errors import nested_under, not_found
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy
from steadfast.shared.trust_text import trust_lines

UNFINISHED = frozenset({"queued", "running"})
#: an evaluation's name is at most this long (the study's and the part's joined may be longer)
MAX_JOB_NAME = 200


@dataclass
class Studies:
    """The studies' use cases: start one (every part's job), read its progress, its report."""

    store: StudyStore
    #: starts each part's job
    jobs: JobStarter
    clock: Callable[[], float] = time.time

    async def create(self, data: StudyCreate, tenancy: Tenancy = UNRESTRICTED) -> StudyAccepted:
        """Every part is checked before any job starts: a part that could not run refuses the
        study, naming its field (``parts[2].evaluation.dataset_id``; a dataset ``tenancy`` does
        not see is unknown). The study and its parts' jobs are ``tenancy``'s tenant's."""
        requests = [part_request(data, part, index) for index, part in enumerate(data.parts)]
        checked: list[EvaluationCreate | tuple[PositionBiasEvaluate, int]] = []
        for index, request in enumerate(requests):
            with nested_under(f"parts[{index}]"):
                checked.append(await self._checked(request, tenancy))
        study_id = new_study_id()
        jobs: list[PartJob] = []
        try:
            for index, (part, ready) in enumerate(zip(data.parts, checked, strict=True)):
                with nested_under(f"parts[{index}]"):
                    job_id = await self._submit(ready, f"{study_id}-part-{index}", tenancy)
                jobs.append(PartJob(part.name, part.protocol, job_id))
            await self.store.create(study_id, data, jobs, self.clock(), tenancy.tenant)
        except BaseException:
            for job in jobs:  # no job runs for a study that was not made
                await self.jobs.cancel(job.protocol, job.job_id)
            raise
        return StudyAccepted(id=study_id, status="running")

    async def _checked(
        self, request: EvaluationCreate | PositionBiasEvaluate, tenancy: Tenancy
    ) -> EvaluationCreate | tuple[PositionBiasEvaluate, int]:
        if isinstance(request, EvaluationCreate):
            with nested_under("evaluation"):
                await self.jobs.evaluations.check(request, tenancy)
            return request
        with nested_under("position_bias"):
            return await self.jobs.checked_position(request, tenancy)

    async def _submit(
        self,
        request: EvaluationCreate | tuple[PositionBiasEvaluate, int],
        key: str,
        tenancy: Tenancy,
    ) -> str:
        if isinstance(request, EvaluationCreate):
            with nested_under("evaluation"):
                return await self.jobs.start_evaluation(request, key, tenancy)
        return await self.jobs.start_position(*request, key, tenancy.tenant)

    async def require(self, study_id: str, tenancy: Tenancy = UNRESTRICTED) -> StudyRow:
        """The study, or a 404 (another tenant's too, answered alike)."""
        row = await self.store.get(study_id, tenancy)
        if row is None:
            raise not_found("study", study_id, "study_id")
        return row

    async def status(self, row: StudyRow) -> StudyStatus:
        parts = [await self._part_status(part) for part in row.parts]
        return StudyStatus(
            id=row.id,
            name=row.name,
            status=overall([part.status for part in parts]),
            models=row.models,
            created_at=iso(row.created_at) or "",
            progress=Progress(
                done=sum(part.progress.done for part in parts),
                total=sum(part.progress.total for part in parts),
            ),
            parts=parts,
        )

    async def page(self, offset: int, limit: int, tenancy: Tenancy = UNRESTRICTED) -> StudyPage:
        rows, total = await self.store.page(offset, limit, tenancy)
        return StudyPage(studies=[await self.status(row) for row in rows], total=total)

    async def _part_status(self, part: PartJob) -> StudyPartStatus:
        if part.protocol == "consistency":
            evaluation = await self.jobs.evaluations.store.get(part.job_id)
            if evaluation is None:
                return _gone(part)
            status = await self.jobs.evaluations.status(evaluation)
            answers = status.progress.answer
            note = status.message if status.status != "succeeded" or status.error_count else None
            return StudyPartStatus(
                name=part.name,
                protocol=part.protocol,
                job_id=part.job_id,
                status=status.status,
                progress=Progress(done=answers.done + answers.failed, total=answers.total),
                error=note,
            )
        job = await self.jobs.position_jobs.get(part.job_id)
        if job is None:
            return _gone(part)
        done = job.order_count if job.status == "succeeded" else 0
        return StudyPartStatus(
            name=part.name,
            protocol=part.protocol,
            job_id=part.job_id,
            status=job.status,
            progress=Progress(done=done, total=job.order_count),
            error=job.error,
        )

    async def report(self, row: StudyRow) -> StudyReport:
        status = await self.status(row)
        parts = [
            await self._part_report(part, spec, state)
            for part, spec, state in zip(row.parts, row.spec.parts, status.parts, strict=True)
        ]
        return StudyReport(
            id=row.id,
            name=row.name,
            status=status.status,
            models=row.models,
            generated_at=datetime.now(UTC).isoformat(),
            parts=parts,
        )

    async def _part_report(
        self, part: PartJob, spec: StudyPart, state: StudyPartStatus
    ) -> StudyPartReport:
        report = StudyPartReport(
            name=part.name,
            protocol=part.protocol,
            job_id=part.job_id,
            status=state.status,
            error=state.error,
        )
        if state.status != "succeeded":
            return report
        if part.protocol == "consistency":
            evaluation = await self.jobs.evaluations.store.get(part.job_id, results=True)
            if evaluation is None:  # deleted since its status was read
                return msgspec.structs.replace(report, status="failed", error=_gone(part).error)
            full = await self.jobs.evaluations.report(evaluation)
            report.dataset = evaluation.dataset_id
            report.language = languages_of(full.items)
            report.consistency = StudyConsistency(
                models={s.model: _values(s.metrics, CONSISTENCY_COLUMNS) for s in full.models},
                settings={
                    "items": evaluation.item_count,
                    "k": full.k,
                    "generator": full.settings.generator,
                    "grader": full.settings.grader,
                    "seed": full.settings.seed,
                },
                verification=trust_lines(full),
            )
            return report
        job = await self.jobs.position_jobs.get(part.job_id)
        if job is None or spec.position_bias is None:
            return msgspec.structs.replace(report, status="failed", error=_gone(part).error)
        result = job.result or PositionBiasEvaluation(trials=[], skipped=[])
        report.dataset = spec.position_bias.dataset_id
        report.language = described_counts(result.languages)
        report.position_bias = position_tables(result, job.request or spec.position_bias)
        return report


def part_request(
    study: StudyCreate, part: StudyPart, index: int
) -> EvaluationCreate | PositionBiasEvaluate:
    """The part's job request, asking the study's models; 400 when the part does not carry the
    request its protocol needs."""
    require_protocol_request(
        part.protocol, part.evaluation, part.position_bias, "part", prefix=f"parts[{index}]."
    )
    if part.evaluation is not None:
        name = f"{study.name}: {part.name}"[:MAX_JOB_NAME]
        return msgspec.structs.replace(part.evaluation, model=None, models=study.models, name=name)
    assert part.position_bias is not None
    return msgspec.structs.replace(part.position_bias, model=None, models=study.models)


def overall(statuses: list[JobStatus]) -> StudyStatusName:
    if any(status in UNFINISHED for status in statuses):
        return "running"
    succeeded = Counter(statuses)["succeeded"]
    if succeeded == len(statuses):
        return "succeeded"
    return "partial" if succeeded else "failed"


def position_tables(result: PositionBiasEvaluation, request: PositionBiasEvaluate) -> StudyPosition:
    by_condition = {"all": {m: _values(v, POSITION_COLUMNS) for m, v in result.models.items()}}
    for condition, models in result.by_condition.items():
        by_condition[condition] = {m: _values(v, POSITION_COLUMNS) for m, v in models.items()}
    return StudyPosition(
        by_condition=by_condition,
        settings={
            "items": len({trial.item_id for trial in result.trials}),
            "conditions": ", ".join(request.conditions or ["low", "medium", "high"]),
            "generator": request.generator,
            "skipped": len(result.skipped),
        },
    )


def _values(metrics: dict[str, MetricValue], columns: tuple[str, ...]) -> dict[str, MonitorValue]:
    return {
        name: MonitorValue(
            value=metrics[name].value,
            n=metrics[name].n,
            ci_low=metrics[name].ci_low,
            ci_high=metrics[name].ci_high,
        )
        for name in columns
        if name in metrics
    }


def _gone(part: PartJob) -> StudyPartStatus:
    what = "evaluation" if part.protocol == "consistency" else "position-bias job"
    return StudyPartStatus(
        name=part.name,
        protocol=part.protocol,
        job_id=part.job_id,
        status="failed",
        progress=Progress(),
        error=f"{what} {part.job_id} no longer exists (deleted by the retention sweep)",
    )
