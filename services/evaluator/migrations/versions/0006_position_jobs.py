"""Positional-bias evaluations run as jobs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "evaluator_position_jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("order_count", sa.Integer, nullable=False),
        sa.Column("result", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float),
        sa.Column("finished_at", sa.Float),
        sa.Column("lease_owner", sa.String(128)),
        sa.Column("lease_until", sa.Float),
    )
    op.create_index("ix_evaluator_position_jobs_status", "evaluator_position_jobs", ["status"])


def downgrade() -> None:
    op.drop_index("ix_evaluator_position_jobs_status", "evaluator_position_jobs")
    op.drop_table("evaluator_position_jobs")
