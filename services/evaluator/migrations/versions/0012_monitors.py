"""Monitors: an evaluation or positional-bias job repeated on a schedule, and its runs.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "evaluator_monitors",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("models", sa.JSON, nullable=False),
        sa.Column("interval_s", sa.Float, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("next_run_at", sa.Float),
        sa.Column("frozen_sets_from", sa.String(64)),
        sa.Column("last_run_id", sa.String(32)),
        sa.Column("last_success_id", sa.String(32)),
    )
    op.create_table(
        "evaluator_monitor_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("monitor_id", sa.String(32), nullable=False),
        sa.Column("due_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("finished_at", sa.Float),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("job_id", sa.String(64)),
        sa.Column("error", sa.Text),
        sa.Column("metric_values", sa.JSON),
        sa.UniqueConstraint("monitor_id", "due_at", name="uq_evaluator_monitor_runs_due"),
    )
    op.create_index(
        "ix_evaluator_monitor_runs_monitor", "evaluator_monitor_runs", ["monitor_id", "started_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_evaluator_monitor_runs_monitor", "evaluator_monitor_runs")
    op.drop_table("evaluator_monitor_runs")
    op.drop_table("evaluator_monitors")
