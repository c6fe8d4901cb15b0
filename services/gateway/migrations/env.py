from alembic import context

from services.gateway.db.models import metadata
from shared.db import run_migrations_online

run_migrations_online(context, metadata)  # type: ignore[arg-type]
