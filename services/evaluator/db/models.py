"""Tables of the evaluator service.

Times are epoch seconds (``Float``) so that lease and back-off comparisons are plain numeric
comparisons on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import sqlalchemy as sa

from steadfast.shared.api_keys import api_keys as shared_api_keys
from steadfast.shared.db import new_metadata
from steadfast.shared.key_limits import key_usage as shared_key_usage

metadata = new_metadata()

#: answers still to be answered or graded, as literal SQL: the partial index
#: ``ix_evaluator_answers_open`` serves the claim query only when the query states this same
#: condition (neither SQLite nor PostgreSQL can prove it from bound parameters)
OPEN_ANSWER_SQL = "status IN ('pending', 'answered')"

#: the id of a row every evaluation adds many of: 64-bit on PostgreSQL, where a serial stops at
#: 2^31; SQLite's row id is 64-bit already, and only ``INTEGER`` makes it the row id
ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def tenant_column(*, index: bool = False) -> sa.Column[str]:
    """The tenant a row belongs to: the tenant of the key that made it (shared/tenancy.py);
    ``default`` for rows made before tenants (migration 0016). ``index`` where a listing
    filters by it."""
    return sa.Column(
        "tenant", sa.String(100), nullable=False, server_default=sa.text("'default'"), index=index
    )


datasets = sa.Table(
    "evaluator_datasets",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("item_count", sa.Integer, nullable=False),
    sa.Column("builtin", sa.Boolean, nullable=False, default=False),
    sa.Column("source", sa.Text),
    sa.Column("license", sa.Text),
    sa.Column("created_at", sa.Float, nullable=False),
    tenant_column(index=True),
)

dataset_items = sa.Table(
    "evaluator_dataset_items",
    metadata,
    sa.Column(
        "dataset_id",
        sa.String(64),
        sa.ForeignKey(
            "evaluator_datasets.id", ondelete="CASCADE", name="fk_evaluator_dataset_items_dataset"
        ),
        primary_key=True,
    ),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("item", sa.JSON, nullable=False),
)

paraphrase_sets = sa.Table(
    "evaluator_paraphrase_sets",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("question", sa.Text, nullable=False),
    sa.Column("generator", sa.String(200), nullable=False),
    sa.Column("k", sa.Integer, nullable=False),
    sa.Column("seed", sa.Integer),
    sa.Column("prompt_version", sa.String(100), nullable=False, default=""),
    sa.Column("semantic_check", sa.String(50), nullable=False, default=""),
    sa.Column("complete", sa.Boolean, nullable=False),
    sa.Column("incomplete_reason", sa.Text),
    sa.Column("candidates_generated", sa.Integer, nullable=False, default=0),
    #: accepted paraphrases with kind, tone/hint, scores, generator and seed
    sa.Column("paraphrases", sa.JSON, nullable=False),
    #: rejected candidates with the stage and score that rejected them
    sa.Column("rejected", sa.JSON, nullable=False),
    #: how the candidates were verified (stages, judge route, threshold and its origin)
    sa.Column("verification", sa.JSON),
    sa.Column("created_at", sa.Float, nullable=False),
    #: when an evaluation last took the set (stored or reused): the retention sweep deletes the
    #: sets no evaluation uses that were not taken since its cutoff
    sa.Column("used_at", sa.Float),
)

evaluations = sa.Table(
    "evaluator_evaluations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200)),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("models", sa.JSON, nullable=False),
    sa.Column("k", sa.Integer, nullable=False),
    sa.Column("dataset_id", sa.String(64)),
    sa.Column("item_count", sa.Integer, nullable=False),
    #: the EvaluationSettings the job runs with
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("idempotency_key", sa.String(200)),
    sa.Column("request_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False, index=True),
    sa.Column("started_at", sa.Float),
    sa.Column("finished_at", sa.Float),
    sa.Column("message", sa.Text),
    #: per-model summaries, per-item metrics and the semantic check, written when finished
    sa.Column("results", sa.JSON),
    sa.Column("lease_owner", sa.String(100)),
    sa.Column("lease_until", sa.Float),
    tenant_column(),
    # an Idempotency-Key is a tenant's own; the constraint's index serves the tenant's listing
    sa.UniqueConstraint(
        "tenant", "idempotency_key", name="uq_evaluator_evaluations_tenant_idempotency_key"
    ),
    #: the API key that made the job (its concurrent jobs are counted; migration 0017)
    sa.Column("api_key_id", sa.String(32)),
    sa.Index("ix_evaluator_evaluations_api_key", "api_key_id", "status"),
)

evaluation_items = sa.Table(
    "evaluator_evaluation_items",
    metadata,
    sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
    sa.Column(
        "evaluation_id",
        sa.String(64),
        sa.ForeignKey(
            "evaluator_evaluations.id", ondelete="CASCADE", name="fk_evaluator_items_evaluation"
        ),
        nullable=False,
    ),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("item_id", sa.String(200), nullable=False),
    sa.Column("item", sa.JSON, nullable=False),
    #: pending | done | failed (the paraphrase stage)
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column(
        "paraphrase_set_id",
        sa.String(64),
        sa.ForeignKey("evaluator_paraphrase_sets.id", name="fk_evaluator_items_paraphrase_set"),
    ),
    sa.Column("error", sa.Text),
    #: the language the models are asked in (the answer prompt's, chosen when the job was made);
    #: NULL on rows from before prompts followed the item's language: those asked in English
    sa.Column("language", sa.String(8)),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    #: failures to reach a service (a restart), counted apart: they have their own patience
    sa.Column("unreachable_attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("next_attempt_at", sa.Float, nullable=False, default=0.0),
    sa.Column("lease_owner", sa.String(100)),
    sa.Column("lease_until", sa.Float),
    sa.UniqueConstraint("evaluation_id", "position"),
    sa.Index("ix_evaluator_evaluation_items_claim", "evaluation_id", "status"),
    # which sets are still used (the retention sweep), without walking every item
    sa.Index("ix_evaluator_evaluation_items_paraphrase_set", "paraphrase_set_id"),
)

answers = sa.Table(
    "evaluator_answers",
    metadata,
    sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
    sa.Column(
        "evaluation_id",
        sa.String(64),
        sa.ForeignKey(
            "evaluator_evaluations.id", ondelete="CASCADE", name="fk_evaluator_answers_evaluation"
        ),
        nullable=False,
    ),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    #: 0 = the original question, 1..k = paraphrases
    sa.Column("variant", sa.Integer, nullable=False),
    sa.Column("prompt", sa.Text, nullable=False),
    #: sha256 of the exact model request: an identical request is answered from a stored answer
    sa.Column("request_key", sa.String(64), index=True),
    #: pending | answered | graded | failed
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("text", sa.Text),
    sa.Column("label", sa.String(16)),
    sa.Column("value", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("error_stage", sa.String(16)),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    #: failures to reach a service (a restart), counted apart: they have their own patience
    sa.Column("unreachable_attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
    sa.Column("next_attempt_at", sa.Float, nullable=False, default=0.0),
    sa.Column("lease_owner", sa.String(100)),
    sa.Column("lease_until", sa.Float),
    sa.Column("cached", sa.Boolean),
    sa.Column("answered_at", sa.Float),
    #: sha256 of the exact grading (see ``grade_key``): a graded answer's label is reused
    sa.Column("grade_key", sa.String(64), index=True),
    sa.UniqueConstraint("evaluation_id", "position", "model", "variant"),
    sa.Index("ix_evaluator_answers_claim", "evaluation_id", "status"),
    # the claim's filter and order: without it a claim walks every answer of the evaluation,
    # finished ones too (1 ms per claim at 4,400 answers on SQLite, growing with the job)
    sa.Index(
        "ix_evaluator_answers_open",
        "evaluation_id",
        "position",
        "variant",
        "model",
        sqlite_where=sa.text(OPEN_ANSWER_SQL),
        postgresql_where=sa.text(OPEN_ANSWER_SQL),
    ),
)

#: the API keys' table is defined in shared/api_keys.py (the gateway reads it too); the
#: evaluator's migrations make it, so it belongs to the evaluator's tables
api_keys = shared_api_keys.to_metadata(metadata)
#: the keys' usage per period (shared/key_limits.py: the gateway adds to it too)
key_usage = shared_key_usage.to_metadata(metadata)

#: positional-bias evaluations run as jobs: the request (its items resolved) and, once finished,
#: the result, both as JSON; a job is run whole by the worker holding its lease (the gateway's
#: response cache makes a re-run after a lost lease cost no model calls for what was answered)
position_jobs = sa.Table(
    "evaluator_position_jobs",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("request", sa.Text, nullable=False),
    sa.Column("order_count", sa.Integer, nullable=False),
    sa.Column("result", sa.Text),
    sa.Column("error", sa.Text),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float),
    sa.Column("finished_at", sa.Float),
    sa.Column("lease_owner", sa.String(128)),
    sa.Column("lease_until", sa.Float),
    sa.Column("idempotency_key", sa.String(200)),
    sa.Column("request_hash", sa.String(64)),
    tenant_column(),
    sa.Index("ix_evaluator_position_jobs_status", "status"),
    # an Idempotency-Key is a tenant's own
    sa.Index(
        "ux_evaluator_position_jobs_tenant_idempotency_key",
        "tenant",
        "idempotency_key",
        unique=True,
    ),
    #: the API key that made the job (its concurrent jobs are counted; migration 0017)
    sa.Column("api_key_id", sa.String(32)),
    sa.Index("ix_evaluator_position_jobs_api_key", "api_key_id", "status"),
)

monitors = sa.Table(
    "evaluator_monitors",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    sa.Column("kind", sa.String(16), nullable=False),
    #: the MonitorCreate it was made with (JSON): the evaluation or job each run repeats
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("models", sa.JSON, nullable=False),
    sa.Column("interval_s", sa.Float, nullable=False),
    sa.Column("paused", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    #: when the next run is due; a worker takes a due time by moving it on (compare and set)
    sa.Column("next_run_at", sa.Float),
    #: the evaluation whose paraphrase sets every run asks again
    sa.Column("frozen_sets_from", sa.String(64)),
    #: the last run that succeeded (its values are the gauges'); the last run is the newest of
    #: the monitor's runs (migration 0018)
    sa.Column("last_success_id", sa.String(32)),
    tenant_column(index=True),
)

monitor_runs = sa.Table(
    "evaluator_monitor_runs",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("monitor_id", sa.String(32), nullable=False),
    sa.Column("due_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("job_id", sa.String(64)),
    sa.Column("error", sa.Text),
    #: {model: {metric: {value, n, ci_low, ci_high}}} of a run that succeeded
    sa.Column("metric_values", sa.JSON),
    # one run per due time, whatever number of evaluators saw it due
    sa.UniqueConstraint("monitor_id", "due_at", name="uq_evaluator_monitor_runs_due"),
    sa.Index("ix_evaluator_monitor_runs_monitor", "monitor_id", "started_at"),
)

studies = sa.Table(
    "evaluator_studies",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    #: the StudyCreate it was made with (JSON)
    sa.Column("spec", sa.Text, nullable=False),
    sa.Column("models", sa.JSON, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    #: ``[{"name", "protocol", "job_id"}]``: the job that runs each part, in the study's order
    sa.Column("parts", sa.JSON, nullable=False),
    tenant_column(index=True),
)
