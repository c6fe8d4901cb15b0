"""A study's report as a self-contained HTML page (tables and SVG charts, no script, no
outside resource) and as CSV (one row per part, model, condition and metric). Every text from
the study (names, models, reasons) is escaped."""

from __future__ import annotations

import csv
import io
from html import escape

from steadfast.shared.contracts.monitors import MonitorValue
from steadfast.shared.contracts.studies import (
    CONSISTENCY_COLUMNS,
    POSITION_COLUMNS,
    StudyPartReport,
    StudyReport,
)
from steadfast.shared.spreadsheet import spreadsheet_safe

PALETTE = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#2c7a7b", "#975a16")
LABELS = {
    "abs_PF": "|PF|",
    "acc_correct_first": "acc. correct 1st",
    "acc_correct_second": "acc. correct 2nd",
    "invalid_rate": "invalid",
}
CSV_COLUMNS = (
    "part", "protocol", "dataset", "language", "model", "condition", "metric", "value",
    "ci_low", "ci_high", "n",
)  # fmt: skip
#: rates shown as percentages; PF is a signed share of pairs and is shown as a number
SIGNED = {"PF"}
STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1a202c}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #cbd5e0;
padding:.3rem .5rem;text-align:right}th:first-child,td:first-child{text-align:left}
.ci{color:#718096;font-size:.8em;display:block}.muted{color:#718096}.failed{color:#c53030}
h2{border-bottom:2px solid #e2e8f0;padding-bottom:.2rem;margin-top:2.5rem}
"""


def render_csv(report: StudyReport) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for part in report.parts:
        where = [part.name, part.protocol, part.dataset or "", part.language or ""]
        for model, condition, metric, value in _cells(part):
            interval = [value.value, value.ci_low, value.ci_high, value.n]
            row = [*where, model, condition, metric, *interval]
            writer.writerow([spreadsheet_safe(cell) for cell in row])
    return out.getvalue().encode()


def _cells(part: StudyPartReport) -> list[tuple[str, str, str, MonitorValue]]:
    cells = []
    if part.consistency is not None:
        for model, metrics in part.consistency.models.items():
            cells += [(model, "", name, value) for name, value in metrics.items()]
    if part.position_bias is not None:
        for condition, models in part.position_bias.by_condition.items():
            for model, metrics in models.items():
                cells += [(model, condition, name, value) for name, value in metrics.items()]
    return cells


def render_html(report: StudyReport) -> bytes:
    consistency = [p for p in report.parts if p.consistency is not None]
    position = [p for p in report.parts if p.position_bias is not None]
    body = [
        f"<h1>Study {escape(report.name)}</h1>",
        f"<p>{escape(report.status)} · models: {escape(', '.join(report.models))} · "
        f"{len(report.parts)} part(s) · generated {escape(report.generated_at)}</p>",
        _parts_table(report),
    ]
    if consistency:
        body.append("<h2>Paraphrase consistency</h2>")
        body.append(_gap_chart(consistency, report.models))
        body += [_consistency_section(part) for part in consistency]
    if position:
        body.append("<h2>Positional bias</h2>")
        body += [_position_section(part, report.models) for part in position]
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Study {escape(report.name)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>"
    )
    return page.encode()


def _parts_table(report: StudyReport) -> str:
    rows = "".join(
        f"<tr><td>{escape(p.name)}</td><td>{escape(p.protocol)}</td>"
        f"<td>{escape(p.dataset or '')}</td><td>{escape(p.language or '')}</td>"
        f'<td class="{"failed" if p.status == "failed" else ""}">{escape(p.status)}'
        f"{': ' + escape(p.error) if p.error else ''}</td><td>{escape(p.job_id)}</td></tr>"
        for p in report.parts
    )
    return (
        "<table><tr><th>part</th><th>protocol</th><th>data set</th><th>language</th>"
        f"<th>status</th><th>job</th></tr>{rows}</table>"
    )


def _cell(value: MonitorValue | None, signed: bool = False) -> str:
    if value is None or value.value is None:
        return '<td class="muted">–</td>'
    shown = f"{value.value:+.2f}" if signed else f"{100 * value.value:.1f}%"
    interval = ""
    if value.ci_low is not None and value.ci_high is not None:
        low, high = (
            (f"{value.ci_low:+.2f}", f"{value.ci_high:+.2f}")
            if signed
            else (f"{100 * value.ci_low:.1f}", f"{100 * value.ci_high:.1f}%")
        )
        interval = f"{low}–{high} · "
    return f'<td>{shown}<span class="ci">{interval}n={value.n}</span></td>'


def _consistency_section(part: StudyPartReport) -> str:
    assert part.consistency is not None
    head = "".join(f"<th>{escape(name)}</th>" for name in CONSISTENCY_COLUMNS)
    rows = "".join(
        f"<tr><td>{escape(model)}</td>"
        + "".join(_cell(metrics.get(name)) for name in CONSISTENCY_COLUMNS)
        + "</tr>"
        for model, metrics in part.consistency.models.items()
    )
    settings = ", ".join(f"{k}={v}" for k, v in part.consistency.settings.items())
    trust = "".join(f"<li>{escape(line)}</li>" for line in part.consistency.verification)
    return (
        f'<h3>{escape(part.name)} <span class="muted">({escape(part.dataset or "items")}, '
        f"{escape(part.language or '')})</span></h3>"
        f"<table><tr><th>model</th>{head}</tr>{rows}</table>"
        f'<p class="muted">{escape(settings)}</p><ul>{trust}</ul>'
    )


def _position_section(part: StudyPartReport, models: list[str]) -> str:
    assert part.position_bias is not None
    tables = []
    head = "".join(f"<th>{escape(LABELS.get(n, n))}</th>" for n in POSITION_COLUMNS)
    for condition, by_model in part.position_bias.by_condition.items():
        rows = "".join(
            f"<tr><td>{escape(model)}</td>"
            + "".join(_cell(metrics.get(n), n in SIGNED) for n in POSITION_COLUMNS)
            + "</tr>"
            for model, metrics in by_model.items()
        )
        tables.append(
            f"<h4>condition: {escape(condition)}</h4>"
            f"<table><tr><th>model</th>{head}</tr>{rows}</table>"
        )
    settings = ", ".join(f"{k}={v}" for k, v in part.position_bias.settings.items())
    return (
        f'<h3>{escape(part.name)} <span class="muted">({escape(part.dataset or "items")}, '
        f"{escape(part.language or '')})</span></h3>"
        f'{_pf_pc_chart(part, models)}{"".join(tables)}<p class="muted">{escape(settings)}</p>'
    )


def _bars(
    title: str,
    groups: list[tuple[str, list[tuple[str, float | None]]]],
    models: list[str],
    low: float,
    high: float,
) -> str:
    """A grouped bar chart: one group per label, one bar per model, values in [low, high]."""
    width, height, left, top, bottom = 760, 220, 50, 30, 40
    plot_h = height - top - bottom
    group_w = (width - left - 10) / max(1, len(groups))
    bar_w = max(4.0, min(28.0, (group_w - 12) / max(1, len(models))))

    def y(value: float) -> float:
        return top + plot_h * (high - value) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<text x="{left}" y="16" font-size="13">{escape(title)}</text>',
        f'<line x1="{left}" x2="{width - 10}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#4a5568"/>',
    ]
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" font-size="10" '
            f'text-anchor="end">{tick:g}</text>'
        )
    for index, (label, values) in enumerate(groups):
        x0 = left + index * group_w + 6
        for position, (model, value) in enumerate(values):
            if value is None:
                continue
            color = PALETTE[models.index(model) % len(PALETTE)] if model in models else "#718096"
            top_y, bottom_y = sorted((y(value), y(0)))
            parts.append(
                f'<rect x="{x0 + position * bar_w:.1f}" y="{top_y:.1f}" width="{bar_w - 2:.1f}" '
                f'height="{max(1.0, bottom_y - top_y):.1f}" fill="{color}">'
                f"<title>{escape(model)} · {escape(label)}: {value:.3f}</title></rect>"
            )
        parts.append(
            f'<text x="{x0 + group_w / 2 - 6:.1f}" y="{height - bottom + 16}" font-size="11" '
            f'text-anchor="middle">{escape(label[:24])}</text>'
        )
    legend = "".join(
        f'<rect x="{left + 130 * i}" y="{height - 14}" width="10" height="10" '
        f'fill="{PALETTE[i % len(PALETTE)]}"/><text x="{left + 130 * i + 14}" '
        f'y="{height - 5}" font-size="11">{escape(model[:18])}</text>'
        for i, model in enumerate(models)
    )
    return "".join(parts) + legend + "</svg>"


def _gap_chart(parts: list[StudyPartReport], models: list[str]) -> str:
    """A_any − A_strict per model and data set: knowledge the model does not express on every
    wording."""
    groups = []
    for part in parts:
        assert part.consistency is not None
        values = []
        for model in models:
            metrics = part.consistency.models.get(model, {})
            any_, strict = metrics.get("A_any"), metrics.get("A_strict")
            gap = (
                any_.value - strict.value
                if any_ and strict and any_.value is not None and strict.value is not None
                else None
            )
            values.append((model, gap))
        groups.append((part.name, values))
    return _bars("A_any − A_strict per model and data set", groups, models, 0.0, 1.0)


def _pf_pc_chart(part: StudyPartReport, models: list[str]) -> str:
    """PF (−1 … 1) and PC (0 … 1) per model and condition."""
    assert part.position_bias is not None
    by_condition = part.position_bias.by_condition
    charts = []
    for metric, low in (("PF", -1.0), ("PC", 0.0)):
        groups = [
            (
                condition,
                [
                    (model, (v.value if (v := by_condition[condition].get(model, {}).get(metric))
                             else None))
                    for model in models
                ],
            )
            for condition in by_condition
        ]  # fmt: skip
        charts.append(_bars(f"{metric} per model and condition", groups, models, low, 1.0))
    return "".join(charts)
