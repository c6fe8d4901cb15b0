"""Scopes of the API keys: what a key may do (evaluate, read, proxy, admin). Keys made before
keep what they could do: everything but the admin API.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evaluator_api_keys") as batch:
        batch.add_column(
            sa.Column(
                "scopes",
                sa.String(100),
                nullable=False,
                server_default=sa.text("'evaluate,read,proxy'"),
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("evaluator_api_keys") as batch:
        batch.drop_column("scopes")
