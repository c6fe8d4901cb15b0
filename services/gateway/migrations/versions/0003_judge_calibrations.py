"""Judge thresholds chosen by ``steadfast calibrate``, per route, judge prompt and task.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateway_judge_calibrations",
        sa.Column("route", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(40), nullable=False),
        sa.Column("task", sa.String(20), nullable=False, server_default=""),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint(
            "route", "prompt_version", "task", name="pk_gateway_judge_calibrations"
        ),
    )


def downgrade() -> None:
    op.drop_table("gateway_judge_calibrations")
