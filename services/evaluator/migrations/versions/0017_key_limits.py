"""Limits and usage of the API keys (#28 item 4): requests per minute, concurrent jobs and a
token budget per day or month on each key (NULL: none), the key that made each job, and the
usage of each key per period (shared by the evaluator's and the gateway's replicas).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JOB_TABLES = ("evaluator_evaluations", "evaluator_position_jobs")


def upgrade() -> None:
    with op.batch_alter_table("evaluator_api_keys") as batch:
        batch.add_column(sa.Column("rpm", sa.Integer))
        batch.add_column(sa.Column("max_concurrent_jobs", sa.Integer))
        batch.add_column(sa.Column("token_budget", sa.BigInteger))
        batch.add_column(sa.Column("budget_period", sa.String(8)))
    for table in JOB_TABLES:
        # not in batch mode: SQLite's copy of a table drops the original, whose ON DELETE
        # CASCADE would empty the tables referring to it (items, answers)
        op.add_column(table, sa.Column("api_key_id", sa.String(32)))
        op.create_index(f"ix_{table}_api_key", table, ["api_key_id", "status"])
    op.create_table(
        "evaluator_key_usage",
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("period", sa.String(16), nullable=False),
        sa.Column("requests", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("calls", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("input_tokens", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("output_tokens", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("key_id", "period", name="pk_evaluator_key_usage"),
    )


def downgrade() -> None:
    op.drop_table("evaluator_key_usage")
    for table in JOB_TABLES:
        op.drop_index(f"ix_{table}_api_key", table)
        op.drop_column(table, "api_key_id")  # SQLite 3.35+ drops a column in place
    with op.batch_alter_table("evaluator_api_keys") as batch:
        batch.drop_column("budget_period")
        batch.drop_column("token_budget")
        batch.drop_column("max_concurrent_jobs")
        batch.drop_column("rpm")
