"""``/v1/datasets``: upload (JSONL, CSV, MMLU CSV, SQuAD JSON), list, items; built-in samples."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, Parameter
from litestar.status_codes import HTTP_201_CREATED, HTTP_204_NO_CONTENT

from steadfast.services.evaluator.adapters.datasets import DatasetStore
from steadfast.services.evaluator.controllers.documents import UploadOperation
from steadfast.services.evaluator.controllers.parameters import StoredId
from steadfast.services.evaluator.domain.dataset_formats import (
    UPLOAD_CEILING,
    DatasetFormat,
    guess_format,
    parse_dataset,
)
from steadfast.services.evaluator.domain.dataset_records import (
    DatasetInvalid,
    FieldMapping,
    MappingInvalid,
)
from steadfast.services.evaluator.settings import EvaluatorSettings
from steadfast.shared.contracts.base import MAX_STORED_INT, STORABLE_TEXT, FieldError, Problem, Task
from steadfast.shared.contracts.evaluator import DatasetInfo, DatasetItemPage, DatasetList
from steadfast.shared.errors import not_found
from steadfast.shared.problems import ProblemError, problem_response, problem_responses
from steadfast.shared.tenancy import Tenancy


async def limited(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    received = 0
    async for chunk in chunks:
        received += len(chunk)
        if received > limit:
            raise ProblemError(
                413, "Request body too large", f"uploads are limited to {limit} bytes", field="body"
            )
        yield chunk


def invalid_dataset(invalid: DatasetInvalid) -> Response[Any]:
    errors = [FieldError(field=e.where, message=e.message) for e in invalid.errors]
    more = f" (first {len(errors)} of {invalid.total} shown)" if invalid.total > len(errors) else ""
    return problem_response(
        Problem(
            title="Invalid dataset",
            status=422,
            detail=f"{invalid.total} invalid records{more}: {invalid}",
            errors=errors,
        )
    )


def invalid_mapping(invalid: MappingInvalid) -> Response[Any]:
    """A 422 naming the query parameters (``answer_field``...) of the unusable mappings."""
    errors = [
        FieldError(field=f"{target}_field", message=reason, source="query")
        for target, reason in invalid.reasons.items()
    ]
    return problem_response(
        Problem(
            title="Invalid field mapping",
            status=422,
            detail="; ".join(f"{e.field}: {e.message}" for e in errors),
            errors=errors,
        )
    )


class DatasetController(Controller):
    """``/v1/datasets``: upload, list, read and delete datasets, and page through their items."""

    path = "/v1/datasets"
    tags = ["datasets"]  # noqa: RUF012

    @post(
        "",
        operation_id="uploadDataset",
        summary="Upload a dataset: JSONL or CSV with field mapping, MMLU CSV or SQuAD JSON",
        status_code=HTTP_201_CREATED,
        request_max_body_size=UPLOAD_CEILING,
        operation_class=UploadOperation,
        responses=problem_responses(
            {
                413: "Larger than the upload limit",
                422: "Records that cannot be read: each names its line (or path) and field",
            }
        ),
    )
    async def upload(
        self,
        request: Request[Any, Any, Any],
        settings: NamedDependency[EvaluatorSettings],
        datasets: NamedDependency[DatasetStore],
        tenancy: NamedDependency[Tenancy],
        name: Annotated[str, Parameter(min_length=1, max_length=200, pattern=STORABLE_TEXT)],
        task: FromQuery[Task] = "factual",
        format: FromQuery[DatasetFormat | None] = None,
        question_field: FromQuery[str | None] = None,
        answer_field: FromQuery[str | None] = None,
        answers_field: FromQuery[str | None] = None,
        id_field: FromQuery[str | None] = None,
        list_separator: Annotated[str, Parameter(min_length=1, max_length=5)] = ";",
    ) -> Response[DatasetInfo]:
        fmt = format or guess_format(name, request.headers.get("content-type"))
        mapping = FieldMapping(
            question_field, answer_field, answers_field, id_field, list_separator
        )
        chunks = limited(request.stream(), settings.max_upload_bytes)
        try:
            items = await parse_dataset(chunks, fmt, task, mapping)
        except DatasetInvalid as invalid:
            return invalid_dataset(invalid)
        except MappingInvalid as invalid:
            return invalid_mapping(invalid)
        info = await datasets.create(
            name, "choice" if fmt == "mmlu" else task, items, f"upload:{fmt}", tenancy.tenant
        )
        return Response(info, status_code=HTTP_201_CREATED)

    @get(
        "",
        operation_id="listDatasets",
        summary="The built-in samples, then uploaded datasets, newest first",
    )
    async def list_datasets(
        self,
        datasets: NamedDependency[DatasetStore],
        tenancy: NamedDependency[Tenancy],
        limit: Annotated[int, Parameter(ge=1, le=500)] = 100,
        offset: Annotated[int, Parameter(ge=0, le=MAX_STORED_INT)] = 0,
    ) -> DatasetList:
        page, total = await datasets.page(offset, limit, tenancy)
        return DatasetList(datasets=page, total=total, limit=limit, offset=offset)

    @get(
        "/{dataset_id:str}",
        operation_id="getDataset",
        summary="One dataset (by id, or a sample by name)",
    )
    async def get_dataset(
        self,
        dataset_id: StoredId,
        datasets: NamedDependency[DatasetStore],
        tenancy: NamedDependency[Tenancy],
    ) -> DatasetInfo:
        return await _require(datasets, dataset_id, tenancy)

    @delete(
        "/{dataset_id:str}",
        operation_id="deleteDataset",
        summary="Delete an uploaded dataset (evaluations of it keep their items and results)",
        status_code=HTTP_204_NO_CONTENT,
        responses=problem_responses({409: "A built-in sample cannot be deleted"}),
    )
    async def delete_dataset(
        self,
        dataset_id: StoredId,
        datasets: NamedDependency[DatasetStore],
        tenancy: NamedDependency[Tenancy],
    ) -> None:
        info = await _require(datasets, dataset_id, tenancy)
        if info.builtin:
            detail = f"{info.name!r} is a built-in sample: it cannot be deleted"
            raise ProblemError(409, "Conflict", detail, field="dataset_id", source="path")
        await datasets.delete(info.id)

    @get("/{dataset_id:str}/items", operation_id="listDatasetItems", summary="Page through items")
    async def items(
        self,
        dataset_id: StoredId,
        datasets: NamedDependency[DatasetStore],
        tenancy: NamedDependency[Tenancy],
        limit: Annotated[int, Parameter(ge=1, le=500)] = 50,
        offset: Annotated[int, Parameter(ge=0, le=MAX_STORED_INT)] = 0,
    ) -> DatasetItemPage:
        info = await _require(datasets, dataset_id, tenancy)
        items = await datasets.items(info.id, offset, limit)
        return DatasetItemPage(
            dataset=info, items=items, total=info.item_count, limit=limit, offset=offset
        )


async def _require(datasets: DatasetStore, dataset_id: str, tenancy: Tenancy) -> DatasetInfo:
    """The dataset, or a 404 (another tenant's too, answered alike)."""
    info = await datasets.get(dataset_id, tenancy)
    if info is None:
        raise not_found("dataset", dataset_id, "dataset_id")
    return info
