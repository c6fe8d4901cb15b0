"""``POST /v1/reports/render`` and ``GET /v1/reports/schema``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import msgspec
from litestar import Controller, Response, get, post
from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Reference,
    Schema,
)
from litestar.params import JSONBody

from steadfast.services.scoring.domain.report_rendering import render
from steadfast.services.scoring.metrics import REPORTS_RENDERED
from steadfast.shared.contracts.base import REPORT_MEDIA_TYPES
from steadfast.shared.contracts.scoring import Report, ReportRenderRequest

#: the document's JSON Schema, built once (it only depends on the ``Report`` type)
REPORT_SCHEMA: dict[str, Any] = msgspec.json.schema(Report)


@dataclass
class RenderedReportOperation(Operation):
    """The rendered document is the report itself as JSON, or text (CSV, HTML): its 200 says
    each media type with its own schema, which litestar cannot say from the handler."""

    def __post_init__(self) -> None:
        rendered = (self.responses or {}).get("200")
        if isinstance(rendered, OpenAPIResponse):
            text = Schema(type=OpenAPIType.STRING)
            schemas: dict[str, Schema | Reference] = {
                "json": Reference(ref="#/components/schemas/Report")
            }
            rendered.content = {
                media_type: OpenAPIMediaType(schema=schemas.get(fmt, text))
                for fmt, media_type in REPORT_MEDIA_TYPES.items()
            }


class ReportController(Controller):
    """``/v1/reports``: a report rendered as JSON, CSV or HTML, and the report's JSON schema."""

    path = "/v1/reports"
    tags = ["reports"]  # noqa: RUF012

    @post(
        "/render",
        operation_id="renderReport",
        summary="Render a report document as JSON, CSV of per-item rows, or one HTML file",
        status_code=200,
        response_description="the rendered document: the report as JSON, a CSV of per-item rows "
        "or one HTML file",
        operation_class=RenderedReportOperation,
    )
    async def render_report(self, data: JSONBody[ReportRenderRequest]) -> Response[str]:
        document = await asyncio.to_thread(render, data.report, data.format, data.worst_items)
        REPORTS_RENDERED.labels(data.format).inc()
        return Response(document, media_type=REPORT_MEDIA_TYPES[data.format])

    @get(
        "/schema",
        operation_id="getReportSchema",
        summary="JSON Schema of the report document",
    )
    async def report_schema(self) -> dict[str, Any]:
        return REPORT_SCHEMA
