"""Response cache of the model gateway.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateway_response_cache",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("route", sa.String(200), nullable=False),
        sa.Column("model", sa.String(500), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_gateway_response_cache"),
    )


def downgrade() -> None:
    op.drop_table("gateway_response_cache")
