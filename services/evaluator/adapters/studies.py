"""Studies in the database: the document each was made with and the job that runs each part.
A part's progress and results are its job's; the study row only ties them together."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import msgspec
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from steadfast.services.evaluator.db.models import studies
from steadfast.shared.contracts.studies import StudyCreate, StudyProtocol
from steadfast.shared.tenancy import DEFAULT_TENANT, UNRESTRICTED, Tenancy, visible
from steadfast.shared.tolerant_reader import decode_response


class PartJob(msgspec.Struct, frozen=True):
    """One part of a study: its name, its protocol and the job that runs it."""

    name: str
    protocol: StudyProtocol
    job_id: str


@dataclass(frozen=True)
class StudyRow:
    """A stored study: the document it was made with and the job of each part."""

    id: str
    name: str
    spec: StudyCreate
    models: list[str]
    created_at: float
    parts: list[PartJob]


def new_study_id() -> str:
    return f"st-{uuid.uuid4().hex[:20]}"


class StudyStore:
    """Studies in the database: made, read and listed by page."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create(
        self,
        study_id: str,
        spec: StudyCreate,
        parts: list[PartJob],
        now: float,
        tenant: str = DEFAULT_TENANT,
    ) -> StudyRow:
        """The study, ``tenant``'s."""
        values = {
            "id": study_id,
            "name": spec.name,
            "spec": msgspec.json.encode(spec).decode(),
            "models": spec.models,
            "created_at": now,
            "parts": msgspec.to_builtins(parts),
        }
        async with self.engine.begin() as connection:
            await connection.execute(studies.insert().values(**values, tenant=tenant))
        return _study(values)

    async def get(self, study_id: str, tenancy: Tenancy = UNRESTRICTED) -> StudyRow | None:
        """The study; None for one ``tenancy`` does not see (another tenant's)."""
        query = sa.select(studies).where(
            studies.c.id == study_id, visible(studies.c.tenant, tenancy)
        )
        async with self.engine.connect() as connection:
            row = (await connection.execute(query)).mappings().first()
        return _study(dict(row)) if row is not None else None

    async def page(
        self, offset: int, limit: int, tenancy: Tenancy = UNRESTRICTED
    ) -> tuple[list[StudyRow], int]:
        """The studies ``tenancy`` sees, newest first."""
        seen = visible(studies.c.tenant, tenancy)
        query = sa.select(studies).where(seen)
        query = query.order_by(studies.c.created_at.desc(), studies.c.id)
        count = sa.select(sa.func.count()).select_from(studies).where(seen)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query.offset(offset).limit(limit))).mappings().all()
            total = await connection.scalar(count)
        return [_study(dict(row)) for row in rows], int(total or 0)


def _study(row: dict[str, object]) -> StudyRow:
    return StudyRow(
        id=str(row["id"]),
        name=str(row["name"]),
        # read leniently: a study made by an earlier version keeps its report readable
        spec=decode_response(str(row["spec"]).encode(), StudyCreate),
        models=list(row["models"]),  # type: ignore[call-overload]
        created_at=float(row["created_at"]),  # type: ignore[arg-type]
        parts=msgspec.convert(row["parts"], list[PartJob]),
    )
