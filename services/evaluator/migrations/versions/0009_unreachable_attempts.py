"""Items and answers count the failures to reach a service apart from the other failures: a
restart that used up many patient attempts no longer leaves a single ordinary attempt after it.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("evaluator_evaluation_items", "evaluator_answers")


def upgrade() -> None:
    for table in TABLES:
        column = sa.Column(
            "unreachable_attempts", sa.Integer, nullable=False, server_default=sa.text("0")
        )
        op.add_column(table, column)


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("unreachable_attempts")
