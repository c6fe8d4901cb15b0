"""A partial index of the open answers in claim order: a claim no longer walks the finished ones.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: as services.evaluator.db.models.OPEN_ANSWER_SQL at this revision
OPEN_ANSWER_SQL = "status IN ('pending', 'answered')"


def upgrade() -> None:
    op.create_index(
        "ix_evaluator_answers_open",
        "evaluator_answers",
        ["evaluation_id", "position", "variant", "model"],
        sqlite_where=sa.text(OPEN_ANSWER_SQL),
        postgresql_where=sa.text(OPEN_ANSWER_SQL),
    )


def downgrade() -> None:
    op.drop_index("ix_evaluator_answers_open", "evaluator_answers")
