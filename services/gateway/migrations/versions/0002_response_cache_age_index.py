"""An index of the cached answers' age: the maximum-age sweep deletes the oldest.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_gateway_response_cache_created_at", "gateway_response_cache", ["created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_gateway_response_cache_created_at", "gateway_response_cache")
