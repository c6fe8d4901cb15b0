"""How a paraphrase set was verified: the stages, the judge route and the threshold it was held
to with where that comes from (reported with every evaluation that uses the set).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("evaluator_paraphrase_sets", sa.Column("verification", sa.JSON(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column in place (3.35 and later): a batch copy of the table would break
    # the items' foreign keys to it
    op.drop_column("evaluator_paraphrase_sets", "verification")
