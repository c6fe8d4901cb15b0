"""The language each item's models are asked in, chosen when the job is made.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # existing rows stay NULL: they were asked in English
    op.add_column("evaluator_evaluation_items", sa.Column("language", sa.String(8)))


def downgrade() -> None:
    with op.batch_alter_table("evaluator_evaluation_items") as batch:
        batch.drop_column("language")
