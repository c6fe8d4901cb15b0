"""Settings of the evaluator service (environment variables ``STEADFAST_EVALUATOR_<FIELD>``)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Literal

import msgspec

from steadfast.shared.settings import ServiceSettings, load_settings


class EvaluatorSettings(ServiceSettings, kw_only=True):
    """The evaluator's settings: access, the job engine (lanes, leases, polling, retries),
    request and upload limits, retention, and the monitors' polling."""

    #: "keys": every API call needs a key (``steadfast keys create``); "open": none does — for
    #: a local run only (``steadfast up`` and the CLI choose it for the services they start)
    auth: Literal["keys", "open"] = "keys"
    #: run the job engine in this process (off: an API-only replica)
    run_jobs: bool = True
    #: how long a claimed row stays reserved without renewal (another worker takes it after)
    lease_s: float = 30.0
    #: concurrent paraphrase requests per job and process
    paraphrase_lanes: int = 4
    #: concurrent answer batches per job and process, and variants per batch
    answer_lanes: int = 8
    answer_batch: int = 16
    #: answer nothing of a job until every item has its paraphrase set (for one local model
    #: shared by the generator, the judge and the model under test)
    answers_after_paraphrases: bool = False
    #: jobs one process works on at the same time
    max_jobs: int = 2
    poll_s: float = 0.5
    #: attempts per model call / paraphrase set / grading before it is recorded as failed
    max_attempts: int = 3
    retry_base_s: Annotated[float, msgspec.Meta(gt=0)] = 1.0
    #: how long a job keeps asking a service it cannot reach (a restart, an overload) before
    #: the answers it waits for are recorded as failed
    unreachable_wait_s: float = 300.0
    #: ``POST /v1/evaluate`` answers at most this many variants (items × (1 + k) × models)
    max_sync_variants: int = 240
    #: a position-bias job asks for at most this many answers (413 beyond)
    max_job_answers: int = 20000
    #: finished evaluations (with their answers), unused paraphrase sets and positional-bias
    #: jobs older than this many days are deleted; 0 keeps everything
    retention_days: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    #: how often the retention sweep runs (when ``retention_days`` is set)
    retention_sweep_s: Annotated[float, msgspec.Meta(gt=0)] = 3600.0
    #: how often the monitor scheduler looks for due runs and ended ones
    monitor_poll_s: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    #: dataset uploads larger than this get 413
    max_upload_bytes: int = 50 * 1024 * 1024


@cache
def get_settings() -> EvaluatorSettings:
    return load_settings("evaluator", EvaluatorSettings)
