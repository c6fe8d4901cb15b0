"""Wire contracts of the evaluator's monitors (``/v1/monitors``): an evaluation repeated on a
schedule, so that a model's reliability can be followed over time."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import Contract
from steadfast.shared.contracts.evaluator import EvaluationCreate
from steadfast.shared.contracts.position import PositionBiasEvaluate

MonitorKind = Literal["consistency", "position-bias"]
#: the values a monitor follows per model: docs/method.md §1.4 (consistency) and §2 (position bias)
MonitorMetric = Literal[
    "a_orig",
    "a_expected",
    "a_any",
    "a_strict",
    "flip_rate",
    "conflict_rate",
    "agreement",
    "pf",
    "pc",
]
MonitorRunStatus = Literal["running", "succeeded", "failed"]
MonitorName = Annotated[
    str, msgspec.Meta(min_length=1, max_length=100, pattern="^[A-Za-z0-9][A-Za-z0-9._-]*$")
]
#: at least a minute between runs, at most thirty days
IntervalSeconds = Annotated[float, msgspec.Meta(ge=60, le=30 * 86400)]
#: the most items one run evaluates
MAX_MONITOR_ITEMS = 1000
#: the most monitors an evaluator keeps (each adds label sets to the Prometheus metrics)
MAX_MONITORS = 50


class MonitorCreate(Contract, kw_only=True):
    """A monitor: ``evaluation`` (kind ``consistency``) or ``position_bias`` (kind
    ``position-bias``) is run every ``interval_s`` seconds, the first run at once."""

    name: MonitorName
    kind: MonitorKind = "consistency"
    interval_s: IntervalSeconds
    #: the evaluation each run repeats (its models, items or dataset_id with limit, settings);
    #: the paraphrase sets of the first run are kept and asked again by every later run
    evaluation: EvaluationCreate | None = None
    #: the positional-bias job each run repeats
    position_bias: PositionBiasEvaluate | None = None
    paused: bool = False


class MonitorUpdate(Contract, kw_only=True):
    """``PATCH``: pause or resume, or change the interval (the next run moves with it)."""

    paused: bool | None = None
    interval_s: IntervalSeconds | None = None


class MonitorValue(Contract, kw_only=True):
    """One model's value of one metric in one run, with its 95% interval and count."""

    value: float | None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None


class MonitorRun(Contract, kw_only=True):
    """One run of a monitor: when it was due and ran, its job, and its values per model."""

    id: str
    #: the time the run was due (a run started by hand: the time it was asked for)
    due_at: str
    started_at: str
    finished_at: str | None = None
    status: MonitorRunStatus
    #: the evaluation or positional-bias job that is the run
    job_id: str | None = None
    #: why the run failed
    error: str | None = None
    #: ``{model: {metric: value}}``, once it succeeded
    values: dict[str, dict[MonitorMetric, MonitorValue]] = msgspec.field(default_factory=dict)


class Monitor(Contract, kw_only=True):
    """A monitor's settings, its last run and values, and when the next run is due."""

    id: str
    name: str
    kind: MonitorKind
    interval_s: float
    paused: bool
    models: list[str]
    created_at: str
    #: when the next run is due (none while paused)
    next_run_at: str | None = None
    runs: int = 0
    last_run: MonitorRun | None = None
    last_success_at: str | None = None
    #: the values of the last run that succeeded
    last_values: dict[str, dict[MonitorMetric, MonitorValue]] = msgspec.field(default_factory=dict)
    #: the evaluation whose paraphrase sets every run asks again (consistency monitors)
    frozen_sets_from: str | None = None
    evaluation: EvaluationCreate | None = None
    position_bias: PositionBiasEvaluate | None = None


class MonitorPage(Contract, kw_only=True):
    """Every monitor, oldest first."""

    monitors: list[Monitor]
    total: int


class MonitorRunAccepted(Contract, kw_only=True):
    """The reply to a run asked for by hand: the run is due now."""

    monitor_id: str
    #: the run is due now: a worker starts it within a poll interval
    due_at: str


class SeriesPoint(Contract, kw_only=True):
    """One succeeded run's value of a metric for a model, with its 95% interval and count."""

    run_id: str
    #: when the run finished
    at: str
    value: float | None
    n: int = 0
    ci_low: float | None = None
    ci_high: float | None = None


class MonitorSeries(Contract, kw_only=True):
    """One model's value of one metric in every succeeded run of a monitor."""

    monitor_id: str
    model: str
    metric: MonitorMetric
    #: every succeeded run's value, oldest first
    points: list[SeriesPoint]
