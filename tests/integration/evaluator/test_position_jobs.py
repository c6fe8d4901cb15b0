"""Position-bias jobs on SQLite and a real PostgreSQL: leases, takeover of a stopped worker's
job, and the runner storing every outcome (a result, or a failure with its reason)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from steadfast.services.evaluator.adapters.position_jobs import PositionJobStore
from steadfast.services.evaluator.db.models import position_jobs
from steadfast.services.evaluator.domain.position_jobs import PositionJobRunner, PositionJobSettings
from steadfast.services.evaluator.errors import IdempotencyConflict, UpstreamError
from steadfast.services.evaluator.records import Generated
from steadfast.shared.backoff import Backoff
from steadfast.shared.contracts.gateway import GenerateRequest
from steadfast.shared.contracts.perturb import OptionOrder, PermutationRequest, PermutationResponse
from steadfast.shared.contracts.position import (
    PositionBiasEvaluate,
    PositionBiasEvaluation,
    PositionItem,
)
from steadfast.shared.contracts.scoring import PositionBiasRequest, PositionBiasResponse
from steadfast.shared.db import create_engine, migrate

REQUEST = PositionBiasEvaluate(
    model="m",
    items=[PositionItem(id="q", question="Which?", answer="yes", distractor="no")],
    conditions=["medium"],
)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PositionJobStore]:
    engine = create_engine(database_url)
    await migrate(engine, "evaluator")
    yield PositionJobStore(engine, lease_s=0.5)
    await engine.dispose()


class Primacy:
    """Answers "A" to every order; scoring fails (the replies are kept, with a note).
    ``blocked`` holds every answer until set; ``permutations_fail`` fails the job."""

    def __init__(self, *, permutations_fail: bool = False) -> None:
        self.permutations_fail = permutations_fail
        self.blocked = asyncio.Event()
        self.blocked.set()
        self.answered = 0
        #: set once a job's evaluation asks for answers (its run is under way)
        self.asked = asyncio.Event()

    async def generate_batch(self, requests: list[GenerateRequest]) -> list[Generated]:
        self.asked.set()
        await self.blocked.wait()
        self.answered += len(requests)
        return [Generated(text="A") for _ in requests]

    async def permutations(self, request: PermutationRequest) -> PermutationResponse:
        if self.permutations_fail:
            raise UpstreamError("perturb: unavailable")
        orders = [
            OptionOrder(options=[], positions=[], order=[0, 1]),
            OptionOrder(options=[], positions=[], order=[1, 0]),
        ]
        return PermutationResponse(scheme=request.scheme, orders=orders)

    async def position_bias(self, request: PositionBiasRequest) -> PositionBiasResponse:
        raise UpstreamError("scoring: unavailable")

    async def logprob_routes(self) -> set[str]:
        return set()


def runner(store: PositionJobStore, upstream: Primacy, owner: str = "w1") -> PositionJobRunner:
    settings = PositionJobSettings(
        owner=owner, poll_s=0.05, retry=Backoff(attempts=2, base_delay_s=0.01)
    )
    return PositionJobRunner(store, upstream, settings)  # type: ignore[arg-type]


async def until_finished(store: PositionJobStore, job_id: str, timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        job = await store.get(job_id)
        assert job is not None
        if job.status in ("succeeded", "failed"):
            return job
        assert time.monotonic() < deadline, f"job still {job.status}"
        await asyncio.sleep(0.05)


async def test_a_leased_job_is_nobody_elses_until_its_lease_runs_out(
    store: PositionJobStore,
) -> None:
    store = PositionJobStore(store.engine, lease_s=30)  # no lease runs out unless made to
    first = await store.create(REQUEST, 2)
    second = await store.create(REQUEST, 2)
    assert first.status == "queued" and first.request == REQUEST and first.order_count == 2
    claimed = await store.claim("w1")
    assert claimed is not None and claimed.id == first.id  # the oldest first
    assert (claimed.status, claimed.attempts) == ("running", 1)
    other = await store.claim("w2")
    assert other is not None and other.id == second.id
    assert await store.claim("w3") is None  # both leased
    # w1 stopped: its lease ran out
    async with store.engine.begin() as connection:
        await connection.execute(
            position_jobs.update()
            .where(position_jobs.c.id == first.id)
            .values(lease_until=time.time() - 1)
        )
    taken = await store.claim("w3")
    assert taken is not None and taken.attempts == 2
    assert taken.started_at == claimed.started_at  # when it first started
    # the stopped worker can no longer renew or finish it; its new worker can
    assert not await store.renew(first.id, "w1")
    result = PositionBiasEvaluation(trials=[], skipped=[])
    assert not await store.finish(first.id, "w1", result=result)
    assert await store.finish(taken.id, "w3", result=result)
    done = await store.get(first.id)
    assert done is not None and (done.status, done.result) == ("succeeded", result)
    assert done.finished_at is not None


async def test_the_runner_stores_the_result(store: PositionJobStore) -> None:
    upstream = Primacy()
    worker = runner(store, upstream)
    worker.start()
    try:
        job = await store.create(REQUEST, 2)
        worker.wake()
        done = await until_finished(store, job.id)
    finally:
        await worker.stop()
    assert done.status == "succeeded" and done.error is None
    answers = done.result.trials[0].models[0].answers
    assert [answer.choice for answer in answers] == ["A", "A"]
    assert done.result.notes == ["no metrics: scoring: unavailable (after 2 attempts)"]


async def test_a_failing_upstream_fails_the_job_with_its_reason(store: PositionJobStore) -> None:
    worker = runner(store, Primacy(permutations_fail=True))
    worker.start()
    try:
        job = await store.create(REQUEST, 2)
        done = await until_finished(store, job.id)
    finally:
        await worker.stop()
    assert done.status == "failed" and done.result is None
    assert "perturb: unavailable" in done.error


async def test_a_stopped_workers_job_is_run_by_another(store: PositionJobStore) -> None:
    stuck = Primacy()
    stuck.blocked.clear()  # this worker never gets its answers
    first = runner(store, stuck, owner="w1")
    first.start()
    job = await store.create(REQUEST, 2)
    await until_status(store, job.id, "running")
    await first.stop()  # stops without finishing: the job is free at once, its attempt back
    second = runner(store, Primacy(), owner="w2")
    second.start()
    try:
        done = await until_finished(store, job.id)
    finally:
        await second.stop()
    assert (done.status, done.attempts) == ("succeeded", 1)


async def test_a_job_outlives_rolling_restarts_of_its_workers(store: PositionJobStore) -> None:
    # three graceful stops were three attempts, and the job failed as if its workers had died
    job = await store.create(REQUEST, 2)
    for owner in ("w1", "w2", "w3", "w4"):
        stuck = Primacy()
        stuck.blocked.clear()
        worker = runner(store, stuck, owner=owner)
        worker.start()
        await asyncio.wait_for(stuck.asked.wait(), 10)  # in its run, not still claiming
        await worker.stop()
        claimable = await store.claim("probe")  # free without waiting for the lease
        assert claimable is not None and claimable.attempts == 1
        await store.release(job.id, "probe")
    last = runner(store, Primacy(), owner="w5")
    last.start()
    try:
        done = await until_finished(store, job.id)
    finally:
        await last.stop()
    assert done.status == "succeeded"


async def test_a_stop_while_the_claim_commits_frees_the_job_at_once(
    store: PositionJobStore,
) -> None:
    store = PositionJobStore(store.engine, lease_s=30)  # a freed job is no expired lease
    claim = store.claim
    committed = asyncio.Event()

    async def slow_to_return(owner: str) -> Any:
        job = await claim(owner)
        committed.set()
        await asyncio.sleep(1)  # committed, not yet returned: the stop cancels here
        return job

    store.claim = slow_to_return  # type: ignore[method-assign]
    job = await store.create(REQUEST, 2)
    stuck = Primacy()
    stuck.blocked.clear()  # a stop that came late finds the job running, not finished
    worker = runner(store, stuck)
    worker.start()
    await asyncio.wait_for(committed.wait(), 10)
    await asyncio.wait_for(worker.stop(grace_s=0.1), 10)
    store.claim = claim  # type: ignore[method-assign]
    freed = await store.claim("probe")  # without waiting for the lease
    assert freed is not None and (freed.id, freed.attempts) == (job.id, 1)


async def test_a_job_claimed_as_the_stop_comes_is_released_not_begun(
    store: PositionJobStore,
) -> None:
    claim = store.claim
    claimed = asyncio.Event()
    stopping = asyncio.Event()

    async def claim_until_the_stop(owner: str) -> Any:
        job = await claim(owner)
        claimed.set()
        await stopping.wait()
        return job

    store.claim = claim_until_the_stop  # type: ignore[method-assign]
    job = await store.create(REQUEST, 2)
    upstream = Primacy()
    worker = runner(store, upstream)
    worker.start()
    await asyncio.wait_for(claimed.wait(), 10)
    stop = asyncio.ensure_future(worker.stop(grace_s=10))
    await asyncio.sleep(0.05)
    stopping.set()
    await asyncio.wait_for(stop, 10)  # well within the grace: the job was not begun
    assert not upstream.asked.is_set()
    store.claim = claim  # type: ignore[method-assign]
    freed = await store.claim("probe")
    assert freed is not None and (freed.id, freed.attempts) == (job.id, 1)


async def test_a_job_whose_workers_keep_stopping_fails(store: PositionJobStore) -> None:
    job = await store.create(REQUEST, 2)
    for owner in ("w1", "w2", "w3"):
        assert await store.claim(owner) is not None
        await asyncio.sleep(0.6)
    claimed = await store.claim("w4")
    assert claimed is not None and claimed.attempts == 4
    await runner(store, Primacy(), owner="w4").run(claimed)
    done = await store.get(job.id)
    assert done is not None and done.status == "failed"
    assert done.error == "its worker stopped 3 times before it finished"


async def a_job_running_on_w1(
    store: PositionJobStore,
) -> tuple[Any, Primacy, asyncio.Future[None]]:
    """A job claimed and being run by worker w1, whose answers never come."""
    slow = Primacy()
    slow.blocked.clear()
    job = await store.create(REQUEST, 2)
    claimed = await store.claim("w1")
    assert claimed is not None
    running = asyncio.ensure_future(runner(store, slow, owner="w1").run(claimed))
    await asyncio.sleep(0.05)
    return job, slow, running


async def test_a_worker_that_lost_its_lease_leaves_the_job_to_the_new_one(
    store: PositionJobStore,
) -> None:
    job, slow, running = await a_job_running_on_w1(store)
    # another worker took it over (as if w1's renewals had not reached the database)
    async with store.engine.begin() as connection:
        await connection.execute(
            position_jobs.update().values(lease_owner="w2", lease_until=time.time() + 60)
        )
    await asyncio.wait_for(running, 5)  # w1 noticed at its next renewal and gave up
    assert slow.answered == 0
    left = await store.get(job.id)
    assert left is not None and left.status == "running" and left.result is None


async def until_status(store: PositionJobStore, job_id: str, status: str) -> None:
    deadline = time.monotonic() + 10
    while (job := await store.get(job_id)) is None or job.status != status:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def test_a_renewal_that_fails_once_neither_loses_the_job_nor_blocks_a_stop(
    store: PositionJobStore,
) -> None:
    # a lease long enough that the renewal after the blip lands in time on a loaded machine
    store = PositionJobStore(store.engine, lease_s=3)
    renew = store.renew
    blips = [OSError("connection reset")]
    renewed_after_the_blip = asyncio.Event()

    async def renew_after_a_blip(job_id: str, owner: str) -> bool:
        if blips:
            raise blips.pop()
        renewed = await renew(job_id, owner)
        if renewed:
            renewed_after_the_blip.set()
        return renewed

    store.renew = renew_after_a_blip  # type: ignore[method-assign]
    slow = Primacy()
    slow.blocked.clear()
    worker = runner(store, slow)
    worker.start()
    job = await store.create(REQUEST, 2)
    await asyncio.wait_for(renewed_after_the_blip.wait(), 20)
    assert not blips
    # the lease now runs past the first one's end, and no other worker can take the job
    async with store.engine.connect() as connection:
        query = sa.select(position_jobs.c.lease_until, position_jobs.c.started_at)
        lease_until, started_at = (
            await connection.execute(query.where(position_jobs.c.id == job.id))
        ).one()
    assert lease_until > started_at + store.lease_s
    assert await store.claim("w2") is None
    # a stop while the job runs returns, the job left free for the next claim (not finished)
    await asyncio.wait_for(worker.stop(), 5)
    left = await store.get(job.id)
    assert left is not None and (left.status, left.attempts) == ("running", 0)


async def test_a_failure_to_store_the_outcome_is_tried_again(store: PositionJobStore) -> None:
    finish = store.finish
    blips = [OSError("connection reset")]

    async def finish_after_a_blip(*args: Any, **kwargs: Any) -> bool:
        if blips:
            raise blips.pop()
        return await finish(*args, **kwargs)

    store.finish = finish_after_a_blip  # type: ignore[method-assign]
    job = await store.create(REQUEST, 2)
    claimed = await store.claim("w1")
    assert claimed is not None
    await runner(store, Primacy()).run(claimed)
    done = await store.get(job.id)
    assert not blips and done is not None and done.status == "succeeded"


async def test_a_stored_request_that_no_longer_reads_fails_its_job(
    store: PositionJobStore,
) -> None:
    job = await store.create(REQUEST, 2)
    async with store.engine.begin() as connection:
        await connection.execute(
            position_jobs.update().values(request='{"model": "m", "retired_field": 1}')
        )
    claimed = await store.claim("w1")
    assert claimed is not None and claimed.request is None
    await runner(store, Primacy()).run(claimed)
    done = await store.get(job.id)
    assert done is not None and done.status == "failed"
    assert done.error is not None and "stored request is unreadable" in done.error
    assert "retired_field" in done.error


async def test_one_idempotency_key_sent_at_once_makes_one_job(store: PositionJobStore) -> None:
    made = await asyncio.gather(
        *(store.create(REQUEST, 2, idempotency_key="k", request_hash="h") for _ in range(4))
    )
    assert len({job.id for job in made}) == 1
    with pytest.raises(IdempotencyConflict, match=made[0].id):
        await store.create(REQUEST, 2, idempotency_key="k", request_hash="other")
    async with store.engine.connect() as connection:
        count = sa.select(sa.func.count()).select_from(position_jobs)
        assert await connection.scalar(count) == 1


async def test_workers_claiming_at_once_get_the_job_once(store: PositionJobStore) -> None:
    # a lease that cannot run out between the claims (with 0.5 s, a slow or stepped clock let
    # a later claim take the job over as if its worker had died: CI saw it once)
    store = PositionJobStore(store.engine, lease_s=30)
    job = await store.create(REQUEST, 2)
    claims = await asyncio.gather(*(store.claim(f"w{n}") for n in range(6)))
    winners = [claim for claim in claims if claim is not None]
    assert len(winners) == 1 and winners[0].id == job.id and winners[0].attempts == 1


async def test_a_stop_just_after_the_lease_was_lost_still_stops_the_runner(
    store: PositionJobStore,
) -> None:
    slow = Primacy()
    slow.blocked.clear()
    worker = runner(store, slow)
    stopping: list[asyncio.Future[None]] = []
    renew = store.renew

    async def lost_and_stopped(job_id: str, owner: str) -> bool:
        await renew(job_id, owner)
        # the stop arrives after the lost lease cancelled the run, before the runner resumes
        stopping.append(asyncio.ensure_future(worker.stop(grace_s=0.2)))
        return False

    store.renew = lost_and_stopped  # type: ignore[method-assign]
    worker.start()
    await store.create(REQUEST, 2)
    deadline = time.monotonic() + 5
    while not stopping:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    # a runner that took the stop for its lost run's cancellation kept claiming: stop hung
    await asyncio.wait_for(stopping[0], 5)
    assert slow.answered == 0


async def test_renewals_failing_for_a_whole_lease_give_the_run_up(
    store: PositionJobStore,
) -> None:
    async def unreachable(job_id: str, owner: str) -> bool:
        raise OSError("database unreachable")

    store.renew = unreachable  # type: ignore[method-assign]
    slow = Primacy()
    slow.blocked.clear()
    job = await store.create(REQUEST, 2)
    claimed = await store.claim("w1")
    assert claimed is not None
    started = time.monotonic()
    # once the lease has run out unrenewed, another worker may be running the job
    await asyncio.wait_for(runner(store, slow).run(claimed), 5)
    assert time.monotonic() - started >= store.lease_s
    left = await store.get(job.id)
    assert left is not None and left.status == "running" and slow.answered == 0


async def test_a_job_created_while_the_runner_claims_is_not_left_for_a_poll(
    store: PositionJobStore,
) -> None:
    claim = store.claim
    created: list[str] = []
    was_created = asyncio.Event()
    settings = PositionJobSettings(owner="w1", poll_s=60.0, retry=Backoff(attempts=1))
    worker = PositionJobRunner(store, Primacy(), settings)  # type: ignore[arg-type]

    async def create_during_the_first_claim(owner: str) -> Any:
        claimed = await claim(owner)
        if not created:  # found nothing; a job is created (and the runner woken) meanwhile
            created.append((await store.create(REQUEST, 2)).id)
            worker.wake()
            was_created.set()
        return claimed

    store.claim = create_during_the_first_claim  # type: ignore[method-assign]
    worker.start()
    try:
        await asyncio.wait_for(was_created.wait(), 5)
        done = await until_finished(store, created[0], timeout_s=20)  # not the 60 s poll
    finally:
        await worker.stop()
    assert done.status == "succeeded"


async def test_a_stored_result_that_no_longer_reads_shows_as_failed(
    store: PositionJobStore,
) -> None:
    job = await store.create(REQUEST, 2)
    claimed = await store.claim("w1")
    assert claimed is not None
    await runner(store, Primacy()).run(claimed)
    async with store.engine.begin() as connection:
        await connection.execute(position_jobs.update().values(result='{"retired": 1}'))
    done = await store.get(job.id)
    assert done is not None and (done.status, done.result) == ("failed", None)
    assert done.error is not None and "stored result is unreadable" in done.error


async def test_a_stop_lets_a_job_that_is_storing_its_outcome_finish(
    store: PositionJobStore,
) -> None:
    finish = store.finish
    storing, release = asyncio.Event(), asyncio.Event()

    async def slow_finish(*args: Any, **kwargs: Any) -> bool:
        storing.set()
        await release.wait()
        return await finish(*args, **kwargs)

    store.finish = slow_finish  # type: ignore[method-assign]
    worker = runner(store, Primacy())
    worker.start()
    job = await store.create(REQUEST, 2)
    await asyncio.wait_for(storing.wait(), 5)
    stopping = asyncio.ensure_future(worker.stop())
    await asyncio.sleep(0.1)  # the stop waits instead of cancelling the store
    release.set()
    await asyncio.wait_for(stopping, 5)
    done = await store.get(job.id)
    assert done is not None and done.status == "succeeded"


async def test_a_call_cancelled_under_the_evaluation_fails_the_job_with_that_reason(
    store: PositionJobStore,
) -> None:
    class CancelledUpstream(Primacy):
        async def permutations(self, request: PermutationRequest) -> PermutationResponse:
            raise asyncio.CancelledError  # e.g. a client session closed under the call

    job = await store.create(REQUEST, 2)
    claimed = await store.claim("w1")
    assert claimed is not None
    await runner(store, CancelledUpstream()).run(claimed)
    done = await store.get(job.id)
    assert done is not None and (done.status, done.error) == (
        "failed",
        "the evaluation was cancelled",
    )


async def test_a_runner_that_ends_unexpectedly_says_so_in_the_log(
    store: PositionJobStore, caplog: pytest.LogCaptureFixture
) -> None:
    class Fatal(BaseException):
        pass

    async def claim(owner: str) -> None:
        raise Fatal("the claim could not go on")

    store.claim = claim  # type: ignore[method-assign]
    worker = runner(store, Primacy())
    worker.start()
    await asyncio.sleep(0.05)
    await worker.stop()
    ended = [r for r in caplog.records if r.message == "position-bias job runner ended"]
    assert len(ended) == 1 and ended[0].exc_info is not None
    assert isinstance(ended[0].exc_info[1], Fatal)


async def test_a_cancelled_job_stops_its_worker_and_stays_cancelled(
    store: PositionJobStore,
) -> None:
    job, slow, running = await a_job_running_on_w1(store)
    assert await store.cancel(job.id)
    await asyncio.wait_for(running, 5)  # stopped at its next renewal, storing nothing
    assert slow.answered == 0
    cancelled = await store.get(job.id)
    assert cancelled is not None and (cancelled.status, cancelled.result) == ("cancelled", None)
    assert not await store.cancel(job.id)  # finished: nothing to cancel
    assert await store.claim("w2") is None


async def test_retention_deletes_only_jobs_that_finished_before_the_cutoff(
    store: PositionJobStore,
) -> None:
    old, recent, queued = [await store.create(REQUEST, 2) for _ in range(3)]
    for job in (old, recent):
        claimed = await store.claim("w1")
        assert claimed is not None and claimed.id == job.id
        assert await store.finish(claimed.id, "w1", result=None, error="x")
    async with store.engine.begin() as connection:
        for job, finished_at in ((old, 100.0), (recent, 300.0)):
            statement = position_jobs.update().where(position_jobs.c.id == job.id)
            await connection.execute(statement.values(finished_at=finished_at))
        running = position_jobs.update().where(position_jobs.c.id == queued.id)
        await connection.execute(running.values(status="running", finished_at=50.0))

    assert await store.purge_finished_before(200.0) == 1
    assert await store.get(old.id) is None
    assert await store.get(recent.id) is not None
    assert await store.get(queued.id) is not None  # unfinished work is never deleted
    assert await store.purge_finished_before(200.0) == 0
