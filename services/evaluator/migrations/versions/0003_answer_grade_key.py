"""Graded answers carry the key of the exact grading, so a repeated grading takes the stored label.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evaluator_answers") as batch:
        batch.add_column(sa.Column("grade_key", sa.String(64)))
    op.create_index("ix_evaluator_answers_grade_key", "evaluator_answers", ["grade_key"])


def downgrade() -> None:
    op.drop_index("ix_evaluator_answers_grade_key", "evaluator_answers")
    with op.batch_alter_table("evaluator_answers") as batch:
        batch.drop_column("grade_key")
