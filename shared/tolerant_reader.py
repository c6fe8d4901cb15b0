"""Reading another service's response leniently: fields this version does not know are dropped.

Contracts reject unknown fields, which is right for a request (a misspelt option gets a 4xx
naming it) but not for a response: a callee one version ahead that adds a field would otherwise
break every caller still on the old version. So a response is decoded strictly first, and only
when that fails on an unknown field are the fields the contract lacks pruned, at any depth, and
the rest decoded strictly again — a missing or mistyped field still fails.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

T = TypeVar("T")

_UNKNOWN_FIELD = "Object contains unknown field"


def decode_response(payload: bytes, response_type: type[T]) -> T:
    try:
        return msgspec.json.decode(payload, type=response_type)
    except msgspec.ValidationError as error:
        if not str(error).startswith(_UNKNOWN_FIELD):
            raise
    known = prune(msgspec.json.decode(payload), mi.type_info(response_type))
    return msgspec.convert(known, response_type)


def prune(value: Any, info: mi.Type) -> Any:
    """``value`` (decoded JSON) without the object fields ``info`` does not describe."""
    if isinstance(info, mi.Metadata):
        return prune(value, info.type)
    if isinstance(info, mi.StructType) and isinstance(value, dict):
        fields = {field.encode_name: field.type for field in info.fields}
        if info.tag_field is not None:
            fields[info.tag_field] = mi.AnyType()
        return {name: prune(item, fields[name]) for name, item in value.items() if name in fields}
    if isinstance(info, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        return [prune(item, info.item_type) for item in value] if isinstance(value, list) else value
    if isinstance(info, (mi.DictType, mi.FrozenDictType)) and isinstance(value, dict):
        return {key: prune(item, info.value_type) for key, item in value.items()}
    if isinstance(info, mi.TupleType) and isinstance(value, list):
        return [prune(item, type_) for item, type_ in zip(value, info.item_types, strict=False)]
    if isinstance(info, mi.UnionType) and isinstance(value, dict):
        return _prune_union_object(value, info)
    return value


def _prune_union_object(value: dict[str, Any], info: mi.UnionType) -> Any:
    """An object in a union: pruned by the union's one object type, or by the struct its tag
    names; left alone when that is ambiguous (the strict decode then says why)."""
    objects = [t for t in info.types if isinstance(t, (mi.StructType, mi.DictType, mi.Metadata))]
    tagged = [t for t in objects if isinstance(t, mi.StructType) and t.tag_field is not None]
    for struct in tagged:
        if value.get(struct.tag_field or "") == struct.tag:
            return prune(value, struct)
    return prune(value, objects[0]) if len(objects) == 1 else value
