"""A contract's OpenAPI schema says the rules msgspec applies to the types nested in it."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Litestar, post
from litestar.params import JSONBody

from steadfast.shared.openapi_schema import ContractSchemaPlugin

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=20, pattern="^[a-z]+$")]
Score = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class Nested(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    names: Annotated[list[Name], msgspec.Meta(max_length=3)]
    scores: dict[str, Score] | None = None
    setting: dict[str, str | int | float] = msgspec.field(default_factory=dict)
    limit: Annotated[float, msgspec.Meta(gt=0, le=60, description="seconds")] | None = None


class Lenient(msgspec.Struct, kw_only=True):
    name: str


def component_schemas() -> dict[str, Any]:
    @post("/nested")
    async def nested(data: JSONBody[Nested]) -> Lenient:
        return Lenient(name="x")

    app = Litestar([nested], plugins=[ContractSchemaPlugin()])
    schemas: dict[str, Any] = app.openapi_schema.to_schema()["components"]["schemas"]
    return schemas


def test_a_list_s_strings_carry_their_own_rules() -> None:
    names = component_schemas()["Nested"]["properties"]["names"]
    assert names["maxItems"] == 3
    assert names["items"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 20,
        "pattern": "^[a-z]+$",
    }


def test_an_optional_dict_s_values_carry_their_own_rules() -> None:
    scores = component_schemas()["Nested"]["properties"]["scores"]
    mapping = next(member for member in scores["oneOf"] if member["type"] == "object")
    assert mapping["additionalProperties"] == {"type": "number", "minimum": 0.0, "maximum": 1.0}


def test_an_integer_or_number_union_is_any_of_not_one_of() -> None:
    setting = component_schemas()["Nested"]["properties"]["setting"]
    values = setting["additionalProperties"]
    assert "oneOf" not in values
    assert {member["type"] for member in values["anyOf"]} == {"string", "integer", "number"}


def test_only_a_struct_that_refuses_unknown_fields_says_so() -> None:
    schemas = component_schemas()
    assert schemas["Nested"]["additionalProperties"] is False
    assert "additionalProperties" not in schemas["Lenient"]


def test_an_optional_number_with_a_description_keeps_its_rules() -> None:
    limit = component_schemas()["Nested"]["properties"]["limit"]
    number = next(member for member in limit["oneOf"] if member["type"] == "number")
    assert number["exclusiveMinimum"] == 0 and number["maximum"] == 60
