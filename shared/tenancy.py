"""Tenants: every evaluation, dataset, position-bias job, monitor and study belongs to the
tenant of the key that made it. A caller sees its own tenant's; a key with the ``admin`` scope,
and the evaluator in open local mode (no keys at all), sees every tenant's. Another tenant's
resource is answered exactly as an id that does not exist (a 404): its existence is not told.
Built-in samples are everyone's.

A ``Tenancy`` is a plain value the controllers derive from the request's key and hand to the
domain; the adapters turn it into one condition of their queries (``visible``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlalchemy as sa

from steadfast.shared.api_keys import DEFAULT_TENANT, KeyGrant
from steadfast.shared.contracts.keys import TENANT_PATTERN

__all__ = ["DEFAULT_TENANT", "UNRESTRICTED", "Tenancy", "tenancy_of", "valid_tenant", "visible"]


@dataclass(frozen=True)
class Tenancy:
    """Whose resources a caller sees, and whose the resources it makes are."""

    #: the tenant what the caller makes belongs to (and, unless ``sees_all``, all it sees)
    tenant: str = DEFAULT_TENANT
    #: an admin key or open local mode: every tenant's resources
    sees_all: bool = False

    def sees(self, owner: str) -> bool:
        return self.sees_all or owner == self.tenant


#: no restriction: the evaluator's own work (workers, monitors' runs, retention), and open
#: local mode, which has no keys (what it makes is the default tenant's)
UNRESTRICTED = Tenancy(DEFAULT_TENANT, sees_all=True)


def tenancy_of(grant: KeyGrant | None) -> Tenancy:
    """The tenancy of a request's key; without one (open local mode) every tenant's."""
    if grant is None:
        return UNRESTRICTED
    return Tenancy(grant.tenant, sees_all="admin" in grant.scopes)


def valid_tenant(name: str) -> bool:
    return re.fullmatch(TENANT_PATTERN, name) is not None


def visible(column: sa.ColumnElement[str], tenancy: Tenancy) -> sa.ColumnElement[bool]:
    """The condition of a query that keeps the rows ``tenancy`` sees (``column``: their
    tenant)."""
    return sa.true() if tenancy.sees_all else column == tenancy.tenant
