"""Whose resources a caller sees (shared/tenancy.py): its key's tenant's; every tenant's with
the admin scope or without keys (open local mode), making the default tenant's."""

from __future__ import annotations

import pytest

from steadfast.shared.api_keys import KeyGrant
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, tenancy_of, valid_tenant


def test_a_key_sees_its_own_tenants_and_an_admin_key_every_tenants() -> None:
    plain = tenancy_of(KeyGrant("key-1", frozenset({"evaluate", "read"}), "acme"))
    assert plain == Tenancy("acme", sees_all=False)
    assert plain.sees("acme") and not plain.sees("globex") and not plain.sees(DEFAULT_TENANT)
    admin = tenancy_of(KeyGrant("key-2", frozenset({"admin"}), "ops"))
    assert admin.tenant == "ops" and admin.sees("acme") and admin.sees("globex")


def test_open_local_mode_sees_everything_and_makes_the_default_tenants() -> None:
    assert tenancy_of(None) is UNRESTRICTED
    assert UNRESTRICTED.tenant == DEFAULT_TENANT and UNRESTRICTED.sees("acme")


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("acme", True),
        ("team-7_eu", True),
        ("0", True),
        ("x" * 63, True),
        ("x" * 64, False),
        ("", False),
        ("Acme", False),
        ("-acme", False),
        ("a b", False),
        ("acme\n", False),
    ],
)
def test_a_tenant_is_a_short_slug(name: str, valid: bool) -> None:
    assert valid_tenant(name) is valid
