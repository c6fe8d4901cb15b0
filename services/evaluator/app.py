"""App factory of the evaluator service."""

from __future__ import annotations

from litestar import Litestar, Router
from litestar.di import Provide
from litestar.openapi.spec import SecurityScheme

from steadfast.services import evaluator as package
from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.evaluations.store import EvaluationStore
from steadfast.services.evaluator.adapters.monitors import MonitorStore
from steadfast.services.evaluator.adapters.position_jobs import PositionJobStore
from steadfast.services.evaluator.adapters.studies import StudyStore
from steadfast.services.evaluator.adapters.upstream import HttpUpstream, Renderer
from steadfast.services.evaluator.auth import caller_tenancy, require_api_key
from steadfast.services.evaluator.components import EvaluatorComponents
from steadfast.services.evaluator.controllers.datasets import DatasetController
from steadfast.services.evaluator.controllers.evaluations import (
    EvaluateController,
    EvaluationController,
)
from steadfast.services.evaluator.controllers.keys import KeyController
from steadfast.services.evaluator.controllers.monitors import MonitorController
from steadfast.services.evaluator.controllers.position import PositionBiasController
from steadfast.services.evaluator.controllers.studies import StudyController
from steadfast.services.evaluator.domain.engine import EngineSettings, JobEngine
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.services.evaluator.domain.job_runner import JobRunner
from steadfast.services.evaluator.domain.job_starter import JobStarter
from steadfast.services.evaluator.domain.monitors import Monitors, MonitorScheduler
from steadfast.services.evaluator.domain.position import PositionUpstream
from steadfast.services.evaluator.domain.position_jobs import PositionJobRunner, PositionJobSettings
from steadfast.services.evaluator.domain.studies import Studies
from steadfast.services.evaluator.limits import KeyJobs
from steadfast.services.evaluator.metrics import PURGED
from steadfast.services.evaluator.settings import EvaluatorSettings, get_settings
from steadfast.shared.api_keys import ApiKeyStore
from steadfast.shared.app import create_service_app
from steadfast.shared.backoff import Backoff
from steadfast.shared.components import components_of, set_components
from steadfast.shared.db import Database
from steadfast.shared.key_limits import KeyLimiter, UsageStore
from steadfast.shared.retention import RetentionSweeper

SERVICE = "evaluator"


def engine_settings(settings: EvaluatorSettings) -> EngineSettings:
    return EngineSettings(
        paraphrase_lanes=settings.paraphrase_lanes,
        answer_lanes=settings.answer_lanes,
        answer_batch=settings.answer_batch,
        answers_after_paraphrases=settings.answers_after_paraphrases,
        poll_s=settings.poll_s,
        max_jobs=settings.max_jobs,
        retry=retry_policy(settings),
        unreachable_retry=Backoff.lasting(settings.unreachable_wait_s, settings.retry_base_s),
    )


def retry_policy(settings: EvaluatorSettings) -> Backoff:
    return Backoff(attempts=settings.max_attempts, base_delay_s=settings.retry_base_s)


def retention_sweeper(
    settings: EvaluatorSettings, store: EvaluationStore, position_jobs: PositionJobStore
) -> RetentionSweeper:
    purges = {
        "evaluation": store.purge_finished_before,
        "paraphrase_set": store.purge_unused_sets_before,  # after the evaluations that used them
        "position_job": position_jobs.purge_finished_before,
    }
    return RetentionSweeper(
        purges, settings.retention_days * 86400, settings.retention_sweep_s, deleted=PURGED
    )


async def start_loops(
    app: Litestar,
    store: EvaluationStore,
    position_jobs: PositionJobStore,
    runner: JobRunner,
    position_runner: PositionJobRunner,
    scheduler: MonitorScheduler,
) -> None:
    """The background loops of a process that runs jobs: evaluation and positional-bias jobs,
    monitors, and the retention sweep; ``stop_jobs`` stops those it finds on the app."""
    settings = components_of(app.state, EvaluatorComponents).settings
    if store.sqlite:  # one process owns an SQLite file: leases left behind are void
        await store.release_all_leases()
        await position_jobs.release_all_leases()
    runner.start()
    position_runner.start()
    scheduler.start()
    app.state.runner = runner
    app.state.position_runner = position_runner
    app.state.monitor_scheduler = scheduler
    if settings.retention_days:
        sweeper = retention_sweeper(settings, store, position_jobs)
        sweeper.start()
        app.state.retention_sweeper = sweeper


def create_app(
    settings: EvaluatorSettings | None = None,
    upstream: PositionUpstream | None = None,
    renderer: Renderer | None = None,
) -> Litestar:
    """``upstream``/``renderer`` default to the real services over HTTP (tests pass others)."""
    settings = settings or get_settings()
    http = HttpUpstream(settings)
    upstream = upstream or http
    renderer = renderer or http.render

    async def start_jobs(app: Litestar) -> None:
        database: Database = app.state.database
        store = EvaluationStore(database.engine, lease_s=settings.lease_s)
        datasets = DatasetStore(database.engine)
        await datasets.ensure_samples()
        evaluations = Evaluations(store, datasets, upstream)
        engine = JobEngine(store, upstream, engine_settings(settings))
        runner = JobRunner(engine)
        position_jobs = PositionJobStore(database.engine, lease_s=settings.lease_s)
        position_settings = PositionJobSettings(
            owner=engine.owner, poll_s=settings.poll_s, retry=retry_policy(settings)
        )
        position_runner = PositionJobRunner(position_jobs, upstream, position_settings)
        jobs = JobStarter(
            evaluations,
            datasets,
            position_jobs,
            upstream,
            wake_jobs=runner.wake,
            wake_position_jobs=position_runner.wake,
            max_job_answers=settings.max_job_answers,
        )
        monitors = Monitors(MonitorStore(database.engine), jobs)
        key_limiter = KeyLimiter(UsageStore(database.engine))
        app.state.key_limiter = key_limiter
        scheduler = MonitorScheduler(monitors, settings.monitor_poll_s)
        components = EvaluatorComponents(
            settings=settings,
            upstream=upstream,
            retry=retry_policy(settings),
            renderer=renderer,
            evaluations=evaluations,
            datasets=datasets,
            api_keys=ApiKeyStore(database.engine),
            position_jobs=position_jobs,
            monitors=monitors,
            studies=Studies(StudyStore(database.engine), jobs),
            wake_jobs=runner.wake,
            wake_position_jobs=position_runner.wake,
            wake_monitors=scheduler.wake,
            key_limiter=key_limiter,
            key_jobs=KeyJobs(database.engine),
        )
        set_components(app, components)
        key_limiter.start()
        if settings.run_jobs:
            await start_loops(app, store, position_jobs, runner, position_runner, scheduler)

    async def stop_jobs(app: Litestar) -> None:
        runner: JobRunner | None = app.state.get("runner")
        if runner is not None:
            await runner.stop()
        position_runner: PositionJobRunner | None = app.state.get("position_runner")
        if position_runner is not None:
            await position_runner.stop()
        scheduler: MonitorScheduler | None = app.state.get("monitor_scheduler")
        if scheduler is not None:
            await scheduler.stop()
        sweeper: RetentionSweeper | None = app.state.get("retention_sweeper")
        if sweeper is not None:
            await sweeper.stop()
        key_limiter: KeyLimiter | None = app.state.get("key_limiter")
        if key_limiter is not None:
            await key_limiter.stop()  # writes the usage counted since the last flush

    return create_service_app(
        service=SERVICE,
        settings=settings,
        route_handlers=[
            Router(
                path="/",
                route_handlers=[
                    EvaluateController,
                    EvaluationController,
                    DatasetController,
                    PositionBiasController,
                    MonitorController,
                    StudyController,
                    KeyController,
                ],
                guards=[require_api_key],
                dependencies={"tenancy": Provide(caller_tenancy, sync_to_thread=False)},
                security=[{"apiKey": []}],
            )
        ],
        uses_database=True,
        calls=["gateway", "perturb", "verify", "scoring"],
        on_startup=[start_jobs],
        on_shutdown=[stop_jobs],
        components=EvaluatorComponents,
        description=package.__doc__ or "",
        unauthorized="No API key, or one unknown or revoked",
        forbidden="The key lacks the scope the call needs (`read` to read, `evaluate` for the "
        "rest, `admin` for /v1/keys), named in the problem",
        rate_limited="Over the key's limit, named in the problem's `limit`: its requests per "
        "minute (`rpm`), or on a job create its jobs queued or running (`concurrent_jobs`); "
        "Retry-After says when to ask again",
        security_schemes={
            "apiKey": SecurityScheme(
                type="http",
                scheme="bearer",
                description="`Authorization: Bearer <key>` (or `X-API-Key: <key>`); keys from "
                "`steadfast keys create`. Not needed in open local mode.",
            )
        },
    )
