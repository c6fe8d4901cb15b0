"""Request fingerprints: the fields a request set, not the contract's version."""

from __future__ import annotations

import msgspec

from steadfast.services.evaluator.domain.evaluations import request_hash
from steadfast.shared.contracts.evaluator import EvaluationCreate, EvaluationItem
from steadfast.shared.fingerprint import fingerprint


class Inner(msgspec.Struct, kw_only=True):
    text: str
    weight: float = 1.0


class Before(msgspec.Struct, kw_only=True):
    name: str
    k: int = 3
    inner: list[Inner] = msgspec.field(default_factory=list)


class After(msgspec.Struct, kw_only=True):
    """``Before`` in a later version: one more field, with a default."""

    name: str
    k: int = 3
    inner: list[Inner] = msgspec.field(default_factory=list)
    role: str | None = None


def test_a_field_added_later_leaves_earlier_requests_fingerprints_alone() -> None:
    earlier = Before(name="job", k=5, inner=[Inner(text="q", weight=2.0)])
    later = After(name="job", k=5, inner=[Inner(text="q", weight=2.0)])
    assert fingerprint(earlier) == fingerprint(later)
    assert fingerprint(later) != fingerprint(After(name="job", k=5, role="system"))


def test_a_default_written_out_is_the_same_request_as_one_left_out() -> None:
    assert fingerprint(Before(name="job", k=3, inner=[])) == fingerprint(Before(name="job"))
    nested = Before(name="job", inner=[Inner(text="q", weight=1.0)])
    assert fingerprint(nested) == fingerprint(Before(name="job", inner=[Inner(text="q")]))


def test_every_set_value_counts() -> None:
    base = Before(name="job", inner=[Inner(text="q")])
    assert fingerprint(base) != fingerprint(Before(name="job", inner=[Inner(text="q2")]))
    assert fingerprint(base) != fingerprint(Before(name="job", k=4, inner=[Inner(text="q")]))
    assert fingerprint(base) != fingerprint(Before(name="other", inner=[Inner(text="q")]))


def test_an_evaluation_request_is_fingerprinted_by_what_it_sets() -> None:
    items = [EvaluationItem(question="q", answer="4")]
    bare = EvaluationCreate(model="m", items=items)
    assert fingerprint(bare) == fingerprint(EvaluationCreate(model="m", items=items, k=bare.k))
    assert fingerprint(bare) != fingerprint(EvaluationCreate(model="m", items=items, k=bare.k + 1))


def test_an_idempotency_retry_matches_across_a_contract_version() -> None:
    # the same request as an earlier version of the contract, without instruction_role, held it
    fields = [
        (field.name, field.type, field.default)
        for field in msgspec.structs.fields(EvaluationCreate)
        if field.name != "instruction_role" and field.default is not msgspec.NODEFAULT
    ]
    required = [
        (field.name, field.type)
        for field in msgspec.structs.fields(EvaluationCreate)
        if field.default is msgspec.NODEFAULT and field.default_factory is msgspec.NODEFAULT
    ]
    Earlier = msgspec.defstruct("Earlier", [*required, *fields], kw_only=True)
    items = [EvaluationItem(question="q", answer="4")]
    assert request_hash(EvaluationCreate(model="m", items=items, k=4)) == fingerprint(
        Earlier(model="m", items=items, k=4)
    )
