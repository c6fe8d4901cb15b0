"""Shadow checks that disagreed, kept for routes that ask for it (``shadow_store``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateway_shadow_disagreements",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("route", sa.String(200), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index(
        "ix_gateway_shadow_disagreements_created_at",
        "gateway_shadow_disagreements",
        ["created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_gateway_shadow_disagreements_created_at", "gateway_shadow_disagreements")
    op.drop_table("gateway_shadow_disagreements")
