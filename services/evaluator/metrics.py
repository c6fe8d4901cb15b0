"""Prometheus metrics of the evaluation engine (no per-evaluation or per-question labels; the
monitors' are per monitor, of which there are at most 50)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

ANSWERS_STORED = Counter(
    "steadfast_evaluation_answers_total",
    "Variant answers this process stored, by outcome (answered, failed, retried).",
    ["outcome"],
)
PARAPHRASE_SETS = Counter(
    "steadfast_evaluation_paraphrase_sets_total",
    "Paraphrase sets this process generated, by outcome (complete, incomplete, failed, retried).",
    ["outcome"],
)
EVALUATIONS_FINISHED = Counter(
    "steadfast_evaluations_finished_total",
    "Evaluations this process finalised, by final status.",
    ["status"],
)
AUTH_REJECTIONS = Counter(
    "steadfast_api_auth_rejections_total",
    "API calls refused for their key, by reason (missing, invalid, scope).",
    ["reason"],
)
POSITION_JOBS_FINISHED = Counter(
    "steadfast_position_jobs_finished_total",
    "Position-bias jobs this process finished, by final status (succeeded, failed).",
    ["status"],
)
PURGED = Counter(
    "steadfast_evaluator_purged_total",
    "Rows the retention sweep deleted, by kind (evaluation, paraphrase_set, position_job).",
    ["kind"],
)
MONITOR_VALUE = Gauge(
    "steadfast_monitor_value",
    "A monitor's value of one metric for one model, in its last run that succeeded (read "
    "from the database, so every evaluator exports it, after a restart too).",
    ["monitor", "model", "metric"],
)
MONITOR_RUNS = Counter(
    "steadfast_monitor_runs_total",
    "Monitor runs this process finished, by outcome (succeeded, failed).",
    ["monitor", "status"],
)
MONITOR_LAST_SUCCESS = Gauge(
    "steadfast_monitor_last_success_timestamp_seconds",
    "When a monitor's last run that succeeded finished (Unix time).",
    ["monitor"],
)
MONITOR_INTERVAL = Gauge(
    "steadfast_monitor_interval_seconds",
    "A monitor's interval between runs (absent while it is paused: no run is expected).",
    ["monitor"],
)
MONITOR_CREATED = Gauge(
    "steadfast_monitor_created_timestamp_seconds",
    "When a monitor was created (Unix time): the staleness alert's start for a monitor that "
    "never succeeded.",
    ["monitor"],
)
