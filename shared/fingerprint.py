"""Digests of request bodies that survive new versions of their contract.

Encoding a Struct encodes every field, so a field added later (with a default) would change the
digest of a request that never mentions it: an ``Idempotency-Key`` retried across the upgrade
would then look like a different request. Fields left at their default are left out instead."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec


def fingerprint(value: msgspec.Struct) -> str:
    """sha256 (hex) of ``value``'s fields that differ from their defaults, nested ones too."""
    return hashlib.sha256(msgspec.json.encode(explicit(value), order="sorted")).hexdigest()


def explicit(value: Any) -> Any:
    """``value`` as builtins, every Struct without the fields at their default."""
    if isinstance(value, msgspec.Struct):
        return {
            field.encode_name: explicit(getattr(value, field.name))
            for field in msgspec.structs.fields(value)
            if not _is_default(field, getattr(value, field.name))
        }
    if isinstance(value, list | tuple):
        return [explicit(item) for item in value]
    if isinstance(value, dict):
        return {key: explicit(item) for key, item in value.items()}
    return value


def _is_default(field: msgspec.structs.FieldInfo, value: Any) -> bool:
    if field.default is not msgspec.NODEFAULT:
        return bool(value == field.default)
    if field.default_factory is not msgspec.NODEFAULT:
        return bool(value == field.default_factory())
    return False
