"""A monitor's last run is read from its runs (the newest by start, in the same statement as
their count), no longer from a column of the monitor that a concurrent run could leave behind
the count: the column goes.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # not in batch mode: SQLite's copy of a table drops the original, whose ON DELETE CASCADE
    # would empty the monitor's runs; SQLite 3.35+ drops a column in place
    op.drop_column("evaluator_monitors", "last_run_id")


def downgrade() -> None:
    op.add_column("evaluator_monitors", sa.Column("last_run_id", sa.String(32)))
