"""The OpenAPI schema of a wire contract says every rule msgspec applies to it.

litestar renders a Struct's fields with the constraints of the field itself, but drops those of
a type nested in it (the ``min_length`` of each string in ``list[RouteName]``, of a dict's
values, of an optional field's value) and does not say that unknown fields are refused. This
plugin adds both, so a body valid by the document is one the service reads.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar._openapi.schema_generation.plugins.struct import StructSchemaPlugin
from litestar.openapi.spec import OpenAPIType, Reference, Schema
from litestar.typing import FieldDefinition

#: a msgspec constraint and the JSON Schema keyword (the Schema attribute) that says it
_STRING_RULES = {"min_length": "min_length", "max_length": "max_length", "pattern": "pattern"}
_NUMBER_RULES = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusive_minimum",
    "lt": "exclusive_maximum",
    "multiple_of": "multiple_of",
}
_COLLECTION_RULES = {"min_length": "min_items", "max_length": "max_items"}
_MAPPING_RULES = {"min_length": "min_properties", "max_length": "max_properties"}


class ContractSchemaPlugin(StructSchemaPlugin):
    """litestar's schema of a Struct, with its nested constraints and, for a Struct that
    refuses unknown fields, ``additionalProperties: false``."""

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        schema = super().to_openapi_schema(field_definition, schema_creator)
        info = msgspec.inspect.type_info(field_definition.type_)
        if not isinstance(info, msgspec.inspect.StructType):
            return schema
        if info.forbid_unknown_fields:
            schema.additional_properties = False
        for field in info.fields:
            rendered = (schema.properties or {}).get(field.encode_name)
            if isinstance(rendered, Schema):
                add_constraints(rendered, field.type)
        return schema


def add_constraints(schema: Schema, info: msgspec.inspect.Type) -> None:
    """Writes into ``schema`` the rules of ``info`` (and of the types nested in it) that it does
    not say yet; a Struct's own schema (a reference) says its rules itself."""
    if isinstance(info, msgspec.inspect.Metadata):  # a type with a description of its own
        info = info.type
    if isinstance(info, msgspec.inspect.StrType):
        _copy_rules(info, schema, _STRING_RULES)
    elif isinstance(info, msgspec.inspect.IntType | msgspec.inspect.FloatType):
        _copy_rules(info, schema, _NUMBER_RULES)
    elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.SetType):
        _copy_rules(info, schema, _COLLECTION_RULES)
        _nested(schema.items, info.item_type)
    elif isinstance(info, msgspec.inspect.DictType):
        _copy_rules(info, schema, _MAPPING_RULES)
        _nested(schema.additional_properties, info.value_type)
    elif isinstance(info, msgspec.inspect.UnionType):
        _add_to_union(schema, info)


def _add_to_union(schema: Schema, info: msgspec.inspect.UnionType) -> None:
    """litestar renders a union as ``oneOf`` its members in order (None as ``type: null``); a
    member's rules go to its schema when the counts agree, so that none lands on another's."""
    members = [member for member in info.types if not isinstance(member, msgspec.inspect.NoneType)]
    alternatives = [
        alternative
        for alternative in schema.one_of or []
        if not (isinstance(alternative, Schema) and alternative.type == "null")
    ]
    if not schema.one_of and len(members) == 1:
        add_constraints(schema, members[0])
        return
    if _numbers_overlap(alternatives):
        # an integer is a number too: it matches two members, which ``oneOf`` forbids
        schema.any_of, schema.one_of = schema.one_of, None
    if len(alternatives) != len(members):
        return
    for alternative, member in zip(alternatives, members, strict=True):
        _nested(alternative, member)


def _numbers_overlap(alternatives: list[Schema | Reference]) -> bool:
    types = {alternative.type for alternative in alternatives if isinstance(alternative, Schema)}
    return {OpenAPIType.INTEGER, OpenAPIType.NUMBER} <= types


def _nested(schema: Schema | Reference | bool | None, info: msgspec.inspect.Type) -> None:
    if isinstance(schema, Schema):
        add_constraints(schema, info)


def _copy_rules(info: Any, schema: Schema, rules: dict[str, str]) -> None:
    for rule, keyword in rules.items():
        value = getattr(info, rule, None)
        if value is not None and getattr(schema, keyword) is None:
            setattr(schema, keyword, value)
