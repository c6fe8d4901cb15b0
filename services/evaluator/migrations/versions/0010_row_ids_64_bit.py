"""Item and answer ids are 64-bit on PostgreSQL: a serial column (and its sequence) stops at
2^31, which a busy evaluator reaches with time, since deleted ids are never reused. SQLite's row
ids are 64-bit already. On PostgreSQL the upgrade rewrites both tables under an exclusive lock:
on a large database, expect the first start after upgrading to take a while.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("evaluator_evaluation_items", "evaluator_answers")


def upgrade() -> None:
    _set_id_type(sa.BigInteger(), "bigint")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _refuse_ids_past_32_bits()
    _set_id_type(sa.Integer(), "integer")


def _refuse_ids_past_32_bits() -> None:
    limit = 2**31 - 1
    for table in TABLES:
        handed_out = op.get_bind().scalar(sa.text(f"SELECT last_value FROM {_sequence_of(table)}"))
        if handed_out is not None and handed_out > limit:
            raise RuntimeError(
                f"cannot downgrade: {table} has handed out ids up to {handed_out}, past what a "
                "32-bit id holds"
            )


def _set_id_type(column_type: sa.types.TypeEngine[int], sequence_type: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.alter_column(table, "id", type_=column_type)
        # the sequence has a type of its own, which bounds the ids it hands out
        op.execute(f"ALTER SEQUENCE {_sequence_of(table)} AS {sequence_type}")


def _sequence_of(table: str) -> str:
    query = sa.text("SELECT pg_get_serial_sequence(:table, 'id')")
    name = op.get_bind().scalar(query, {"table": table})
    if not name:
        raise RuntimeError(f"{table}.id has no sequence")
    return str(name)
