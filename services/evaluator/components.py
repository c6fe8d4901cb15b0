"""What the evaluator's handlers use, built at startup (its stores need the database the app
opens then)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.adapters.position_jobs import PositionJobStore
from steadfast.services.evaluator.adapters.upstream import Renderer
from steadfast.services.evaluator.domain.evaluations import Evaluations
from steadfast.services.evaluator.domain.monitors import Monitors
from steadfast.services.evaluator.domain.position import PositionUpstream
from steadfast.services.evaluator.domain.studies import Studies
from steadfast.services.evaluator.limits import KeyJobs
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.api_keys import ApiKeyStore
from steadfast.shared.backoff import Backoff
from steadfast.shared.key_limits import KeyLimiter

#: tells a background loop (jobs, positional-bias jobs, monitors) that work is waiting
Wake = Callable[[], None]


@dataclass(frozen=True)
class EvaluatorComponents:
    """The evaluator's settings, stores, domain services and the wake-ups of its background
    loops, each a handler dependency."""

    settings: EvaluatorSettings
    upstream: PositionUpstream
    retry: Backoff
    renderer: Renderer
    evaluations: Evaluations
    datasets: DatasetStore
    api_keys: ApiKeyStore
    position_jobs: PositionJobStore
    monitors: Monitors
    studies: Studies
    wake_jobs: Wake
    wake_position_jobs: Wake
    wake_monitors: Wake
    #: the keys' requests per minute and usage (written every second)
    key_limiter: KeyLimiter
    #: the keys' queued or running jobs (their concurrent-jobs limit)
    key_jobs: KeyJobs
