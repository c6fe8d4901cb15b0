"""Alembic's entry point for the evaluator's database: its tables, migrated online."""

from alembic import context

from steadfast.services.evaluator.db.models import metadata
from steadfast.shared.db import run_migrations_online

run_migrations_online(context, metadata)  # type: ignore[arg-type]
