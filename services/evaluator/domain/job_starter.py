"""Starting jobs on someone else's behalf: a monitor's runs and a study's parts are the two
persisted jobs an evaluator runs (an evaluation, a positional-bias job), checked and submitted
the same way whoever starts them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.position_jobs import PositionJobStore
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.services.evaluator.domain.position import PositionUpstream, checked_request
from steadfast.shared.contracts.evaluator import EvaluationCreate
from steadfast.shared.contracts.position import PositionBiasEvaluate
from steadfast.shared.errors import InvalidRequest, TooLarge
from steadfast.shared.tenancy import UNRESTRICTED, Tenancy

Protocol = Literal["consistency", "position-bias"]


def require_protocol_request(
    protocol: Protocol,
    evaluation: EvaluationCreate | None,
    position_bias: PositionBiasEvaluate | None,
    what: str,
    prefix: str = "",
) -> None:
    """400 unless the body carries the request its protocol runs, and only that one."""
    wanted = "evaluation" if protocol == "consistency" else "position_bias"
    other = "position_bias" if protocol == "consistency" else "evaluation"
    present = {"evaluation": evaluation is not None, "position_bias": position_bias is not None}
    if not present[wanted] or present[other]:
        detail = f"a {protocol} {what} carries `{wanted}` (and no `{other}`)"
        raise InvalidRequest(detail, field=f"{prefix}{wanted}")


@dataclass
class JobStarter:
    """Checks and submits the jobs monitors and studies start: evaluations and position-bias
    jobs, each within the answer limit of a job."""

    evaluations: Evaluations
    datasets: DatasetStore
    position_jobs: PositionJobStore
    upstream: PositionUpstream
    #: asked to look for work once a job was submitted
    wake_jobs: Callable[[], None] = lambda: None
    wake_position_jobs: Callable[[], None] = lambda: None
    max_job_answers: int = 20000

    async def checked_position(
        self, request: PositionBiasEvaluate, tenancy: Tenancy = UNRESTRICTED
    ) -> tuple[PositionBiasEvaluate, int]:
        """The request with a dataset's items in it (one ``tenancy`` sees) and the answers it
        asks for at most; a 4xx naming the field (``items``: more answers than a job may ask
        for)."""
        inline, needed = await checked_request(request, self.datasets, self.upstream, tenancy)
        if needed > self.max_job_answers:
            detail = f"{needed} answers exceed the job limit of {self.max_job_answers}"
            raise TooLarge(detail, field="items")
        return inline, needed

    async def start_evaluation(
        self, data: EvaluationCreate, key: str, tenancy: Tenancy = UNRESTRICTED
    ) -> str:
        """The evaluation's id, a job of ``tenancy``'s tenant."""
        job, _ = await self.evaluations.submit(data, key, tenancy)
        self.wake_jobs()
        return job.id

    async def start_position(
        self, request: PositionBiasEvaluate, needed: int, key: str, tenant: str
    ) -> str:
        """The position-bias job's id, a job of ``tenant``."""
        job = await self.position_jobs.create(request, needed, idempotency_key=key, tenant=tenant)
        self.wake_position_jobs()
        return job.id

    async def cancel(self, protocol: Protocol, job_id: str) -> None:
        if protocol == "consistency":
            await self.evaluations.store.cancel(job_id)
        else:
            await self.position_jobs.cancel(job_id)
