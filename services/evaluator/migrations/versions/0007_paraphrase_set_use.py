"""What the retention sweep asks of paraphrase sets: which items use them (an index) and when
an evaluation last took them (``used_at``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("evaluator_paraphrase_sets", sa.Column("used_at", sa.Float))
    op.create_index(
        "ix_evaluator_evaluation_items_paraphrase_set",
        "evaluator_evaluation_items",
        ["paraphrase_set_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_evaluator_evaluation_items_paraphrase_set", "evaluator_evaluation_items")
    # not a batch rebuild: dropping the table the items refer to fails on SQLite (3.35+ drops
    # a column in place)
    op.drop_column("evaluator_paraphrase_sets", "used_at")
