"""Tenants: API keys, evaluations, datasets, position-bias jobs, monitors and studies belong to
a tenant; everything made before belongs to the tenant ``default`` (as do keys made without
one). An Idempotency-Key is a tenant's own: the unique constraints on it become unique per
tenant.

SQLite cannot drop a constraint: the evaluations' table is made anew (alembic's batch mode).
Its items and answers refer to it with ``ON DELETE CASCADE``, which dropping the old table would
set off, so foreign keys are switched off for the rebuild (SQLite allows that only outside a
transaction: the one open is committed first; the migrations done before it in the same run
are complete, and committing them is what would happen next anyway).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT = sa.text("'default'")
#: the tables whose rows belong to a tenant, and whether listings filter them by it (an index)
OWNED = (
    ("evaluator_api_keys", False),
    ("evaluator_evaluations", False),  # the unique (tenant, idempotency_key) indexes it
    ("evaluator_datasets", True),
    ("evaluator_position_jobs", False),  # no listing; the unique index leads with tenant
    ("evaluator_monitors", True),
    ("evaluator_studies", True),
)
EVALUATIONS = "evaluator_evaluations"
OLD_UNIQUE = "uq_evaluator_evaluations_idempotency_key"
NEW_UNIQUE = "uq_evaluator_evaluations_tenant_idempotency_key"
POSITION_JOBS = "evaluator_position_jobs"
OLD_INDEX = "ux_evaluator_position_jobs_idempotency_key"
NEW_INDEX = "ux_evaluator_position_jobs_tenant_idempotency_key"


def upgrade() -> None:
    for table, indexed in OWNED:
        op.add_column(
            table, sa.Column("tenant", sa.String(100), nullable=False, server_default=DEFAULT)
        )
        if indexed:
            op.create_index(f"ix_{table}_tenant", table, ["tenant"])
    with _foreign_keys_off(), op.batch_alter_table(EVALUATIONS) as batch:
        batch.drop_constraint(OLD_UNIQUE, type_="unique")
        batch.create_unique_constraint(NEW_UNIQUE, ["tenant", "idempotency_key"])
    op.drop_index(OLD_INDEX, table_name=POSITION_JOBS)
    op.create_index(NEW_INDEX, POSITION_JOBS, ["tenant", "idempotency_key"], unique=True)


def downgrade() -> None:
    """Refused when two tenants used the same Idempotency-Key (the key was unique before)."""
    op.drop_index(NEW_INDEX, table_name=POSITION_JOBS)
    op.create_index(OLD_INDEX, POSITION_JOBS, ["idempotency_key"], unique=True)
    with _foreign_keys_off():
        with op.batch_alter_table(EVALUATIONS) as batch:
            batch.drop_constraint(NEW_UNIQUE, type_="unique")
            batch.create_unique_constraint(OLD_UNIQUE, ["idempotency_key"])
        for table, indexed in reversed(OWNED):
            if indexed:
                op.drop_index(f"ix_{table}_tenant", table_name=table)
            with op.batch_alter_table(table) as batch:
                batch.drop_column("tenant")


@contextmanager
def _foreign_keys_off() -> Iterator[None]:
    """On SQLite, foreign keys off while tables others refer to are made anew (dropping the
    old one would delete the rows that refer to it)."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        yield
        return
    _end(bind, "COMMIT")
    bind.exec_driver_sql("PRAGMA foreign_keys=OFF")
    try:
        yield
        problems = bind.exec_driver_sql("PRAGMA foreign_key_check").all()
        if problems:
            raise RuntimeError(f"foreign keys broken by the rebuild: {problems[:5]}")
        _end(bind, "COMMIT")
    except BaseException:
        _end(bind, "ROLLBACK")  # else the PRAGMA below would be ignored
        raise
    finally:
        bind.exec_driver_sql("PRAGMA foreign_keys=ON")


def _end(bind: sa.Connection, how: str) -> None:
    """End SQLite's open transaction (``COMMIT`` or ``ROLLBACK``), if one is: a PRAGMA on
    foreign keys is ignored in one."""
    try:
        bind.exec_driver_sql(how)
    except sa.exc.OperationalError as error:
        if "no transaction is active" not in str(error):
            raise
