"""Wire contracts of ``/v1/keys``: the admin API of the one key store (``steadfast keys`` over
HTTP)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from steadfast.shared.contracts.base import STORABLE_TEXT, Contract

KeyScope = Literal["evaluate", "read", "proxy", "admin"]
#: a tenant's name: a short slug (lower-case letters, digits, ``-`` and ``_``)
TENANT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
Tenant = Annotated[str, msgspec.Meta(min_length=1, max_length=63, pattern=TENANT_PATTERN)]


class KeyCreate(Contract, kw_only=True):
    """``POST /v1/keys``: a new key, named for who or what it is for."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=STORABLE_TEXT)]
    #: what it may do; default ``evaluate``, ``read``, ``proxy`` (``admin``: everything, and
    #: this API)
    scopes: Annotated[list[KeyScope], msgspec.Meta(min_length=1, max_length=4)] | None = None
    #: whose resources the key makes and sees (evaluations, datasets, position-bias jobs,
    #: monitors, studies); another tenant's are a 404 to it. An ``admin`` key sees every
    #: tenant's. A short slug; default ``default``
    tenant: Tenant = "default"


class KeyInfo(Contract, kw_only=True):
    """A key's record: never the key itself, which is shown once, when it is made."""

    id: str
    name: str
    scopes: list[KeyScope]
    #: whose resources it makes and sees
    tenant: str = "default"
    created_at: str
    revoked_at: str | None = None


class KeyCreated(KeyInfo, kw_only=True):
    """The new key's record and the key, shown this once (only its sha256 is kept)."""

    key: str


class KeyList(Contract, kw_only=True):
    """Every key, active and revoked, oldest first."""

    keys: list[KeyInfo]
