"""OpenAPI for the evaluator's operations whose bodies litestar cannot see: an upload read as a
stream (no ``data`` parameter), and reports served as HTML or CSV beside their JSON."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.openapi.spec import (
    OpenAPIFormat,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    RequestBody,
    Schema,
)

from steadfast.shared.contracts.base import REPORT_MEDIA_TYPES

#: the upload's body: the file itself
UPLOAD_MEDIA_TYPES = (
    "application/octet-stream",
    "application/x-ndjson",
    "text/csv",
    "application/json",
)
_FILE = Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.BINARY)
_TEXT = Schema(type=OpenAPIType.STRING)


@dataclass
class UploadOperation(Operation):
    """The dataset upload's operation: its body documented as the file's raw bytes."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description="The dataset file's bytes: JSONL, CSV, MMLU CSV or SQuAD JSON (the "
            "`format` parameter, else the file name or the content type, says which); at most "
            "the evaluator's `max_upload_bytes`",
            content={media: OpenAPIMediaType(schema=_FILE) for media in UPLOAD_MEDIA_TYPES},
        )


@dataclass
class DocumentOperation(Operation):
    """A report: its JSON (from the return type), and the HTML page and CSV rows the ``format``
    parameter asks for instead."""

    def __post_init__(self) -> None:
        success = (self.responses or {}).get("200")
        if isinstance(success, OpenAPIResponse):
            success.content = {
                **(success.content or {}),
                f"{REPORT_MEDIA_TYPES['html']}; charset=utf-8": OpenAPIMediaType(schema=_TEXT),
                f"{REPORT_MEDIA_TYPES['csv']}; charset=utf-8": OpenAPIMediaType(schema=_TEXT),
            }
