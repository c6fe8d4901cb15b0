"""The report as CSV: one row per (item, model, variant) answer, with that question's per-item
consistency metrics."""

from __future__ import annotations

import csv
import io

from steadfast.shared.contracts.scoring import ItemConsistency, Report
from steadfast.shared.spreadsheet import spreadsheet_safe

CSV_COLUMNS = (
    "item_id",
    "model",
    "variant",
    "kind",
    "tone",
    "question",
    "answer",
    "label",
    "value",
    "error",
    "original_label",
    "majority_label",
    "match",
    "mode_share",
    "normalized_entropy",
    "excluded",
)


def consistency_by_item(report: Report) -> dict[tuple[str, str], ItemConsistency]:
    items = report.consistency.items if report.consistency else None
    return {(item.item_id, item.model): item for item in items or []}


def render_csv(report: Report) -> str:
    """One row per (item, model, variant) answer, with that question's per-item metrics."""
    per_item = consistency_by_item(report)
    buffer = io.StringIO()
    # RFC 4180's CRLF: the writer then quotes a cell holding either character (a model's reply
    # with a bare \r would otherwise split its row)
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for item in report.items:
        variants = {variant.index: variant for variant in item.variants}
        for answer in item.answers:
            variant = variants.get(answer.variant)
            metrics = per_item.get((item.item_id, answer.model))
            row = [
                item.item_id,
                answer.model,
                answer.variant,
                variant.kind if variant else None,
                variant.tone if variant else None,
                variant.text if variant else (item.question if answer.variant == 0 else None),
                answer.text,
                answer.label,
                answer.value,
                answer.error,
                metrics.original_label if metrics else None,
                metrics.majority_label if metrics else None,
                metrics.match if metrics else None,
                metrics.mode_share if metrics else None,
                metrics.normalized_entropy if metrics else None,
                metrics.excluded if metrics else None,
            ]
            writer.writerow([spreadsheet_safe(value) for value in row])
    return buffer.getvalue()
