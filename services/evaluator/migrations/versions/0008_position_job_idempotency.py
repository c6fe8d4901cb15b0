"""Position-bias jobs take an ``Idempotency-Key``, as evaluations do: the key (unique) and the
fingerprint of the request it was first sent with.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "evaluator_position_jobs"
INDEX = "ux_evaluator_position_jobs_idempotency_key"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("idempotency_key", sa.String(200)))
    op.add_column(TABLE, sa.Column("request_hash", sa.String(64)))
    op.create_index(INDEX, TABLE, ["idempotency_key"], unique=True)


def downgrade() -> None:
    op.drop_index(INDEX, TABLE)
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("request_hash")
        batch.drop_column("idempotency_key")
