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
    known = prune(msgspec.json.decode(payload), _type_info(response_type))
    # decoded from JSON again, not converted: the same rules as the strict path (dict keys...)
    return msgspec.json.decode(msgspec.json.encode(known), type=response_type)


#: per response type (a fixed set): rebuilding it costs ~1 ms, on every response of a newer callee
_type_infos: dict[Any, mi.Type] = {}


def _type_info(response_type: Any) -> mi.Type:
    if response_type not in _type_infos:
        _type_infos[response_type] = mi.type_info(response_type)
    return _type_infos[response_type]


_ARRAYS = (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)
_OBJECTS = (mi.StructType, mi.DictType, mi.FrozenDictType)


def prune(value: Any, info: mi.Type) -> Any:
    """``value`` (decoded JSON) without the object fields ``info`` does not describe."""
    if isinstance(info, mi.Metadata):
        return prune(value, info.type)
    if isinstance(info, mi.StructType) and isinstance(value, dict):
        fields = {field.encode_name: field.type for field in info.fields}
        if info.tag_field is not None:
            fields[info.tag_field] = mi.AnyType()
        return {name: prune(item, fields[name]) for name, item in value.items() if name in fields}
    if isinstance(info, _ARRAYS) and isinstance(value, list):
        return [prune(item, info.item_type) for item in value]
    if isinstance(info, (mi.DictType, mi.FrozenDictType)) and isinstance(value, dict):
        return {key: prune(item, info.value_type) for key, item in value.items()}
    if isinstance(info, mi.TupleType) and isinstance(value, list):
        typed = [prune(item, type_) for item, type_ in zip(value, info.item_types, strict=False)]
        return typed + value[len(typed) :]  # extra items are for the strict decode to reject
    if isinstance(info, mi.UnionType):
        return _prune_union(value, info)
    return value


def _prune_union(value: Any, info: mi.UnionType) -> Any:
    """A value in a union (``X | None`` mostly): pruned by the union's one member of its JSON
    kind, or for an object by the struct its tag names; left alone when that is ambiguous (the
    strict decode then says why)."""
    members = [_unwrapped(member) for member in info.types]
    candidates: list[mi.Type]
    if isinstance(value, dict):
        for struct in members:
            if _tagged_as(struct, value):
                return prune(value, struct)
        candidates = [member for member in members if isinstance(member, _OBJECTS)]
    elif isinstance(value, list):
        candidates = [member for member in members if isinstance(member, (*_ARRAYS, mi.TupleType))]
    else:
        return value
    return prune(value, candidates[0]) if len(candidates) == 1 else value


def _tagged_as(member: mi.Type, value: dict[str, Any]) -> bool:
    tag_field = member.tag_field if isinstance(member, mi.StructType) else None
    return tag_field is not None and value.get(tag_field) == getattr(member, "tag", None)


def _unwrapped(info: mi.Type) -> mi.Type:
    return _unwrapped(info.type) if isinstance(info, mi.Metadata) else info
