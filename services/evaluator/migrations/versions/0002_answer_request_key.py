"""Answers carry the key of the exact model request, so an identical request is answered once.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evaluator_answers") as batch:
        batch.add_column(sa.Column("request_key", sa.String(64)))
    op.create_index("ix_evaluator_answers_request_key", "evaluator_answers", ["request_key"])


def downgrade() -> None:
    op.drop_index("ix_evaluator_answers_request_key", "evaluator_answers")
    with op.batch_alter_table("evaluator_answers") as batch:
        batch.drop_column("request_key")
