"""Rendering of the report document (:class:`shared.contracts.scoring.Report`) as JSON, as CSV
of per-item rows, and as one self-contained HTML page with inline SVG charts."""

from __future__ import annotations

from html import escape

import msgspec

from steadfast.services.scoring.domain.report_charts import (
    agreement_section,
    flips_section,
    headline_section,
    position_section,
    rates_section,
)
from steadfast.services.scoring.domain.report_csv import render_csv
from steadfast.services.scoring.domain.report_html_common import html_section, report_models
from steadfast.services.scoring.domain.report_tables import (
    failures_section,
    settings_section,
    trust_section,
)
from steadfast.services.scoring.domain.report_worst_items import worst_items_section
from steadfast.shared.contracts.scoring import Report, ReportFormat


def render(report: Report, fmt: ReportFormat, worst_items: int = 12) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "csv":
        return render_csv(report)
    return render_html(report, worst_items)


def render_json(report: Report) -> str:
    return msgspec.json.format(msgspec.json.encode(report).decode(), indent=2)


def _summary(report: Report) -> str:
    facts = []
    if report.dataset:
        facts.append(f"dataset <b>{escape(report.dataset)}</b>")
    if report.task:
        facts.append(f"task <b>{escape(report.task)}</b>")
    elif tasks := report.settings.get("tasks"):
        facts.append(f"tasks <b>{escape(str(tasks))}</b>")
    models = report_models(report)
    if models:
        facts.append(f"{len(models)} model{'s' if len(models) != 1 else ''}")
    if report.items:
        facts.append(f"{len(report.items)} questions")
    if report.generated_at:
        facts.append(f"generated {escape(report.generated_at)}")
    return f'<p class="facts">{" · ".join(facts)}</p>'


STYLE = """
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1080px;margin:0 auto;padding:28px 20px 60px}
h1{font-size:28px;margin:0 0 4px}h2{font-size:19px;margin:0 0 6px}
.facts{color:var(--muted);margin:0 0 22px}
section{background:var(--card);border:1px solid var(--line);border-radius:12px;
padding:18px 20px;margin:0 0 18px;box-shadow:0 1px 2px rgba(15,23,42,.04)}
.caption{color:var(--muted);font-size:13px;margin:0 0 10px}
.chart{display:block;margin:6px 0 10px;font-size:12px}
.chart .grid{stroke:var(--line)}.chart .centre{stroke:#334155;stroke-width:1.5}
.chart .band{fill:#f8fafc}.chart .axis{fill:var(--muted);font-size:11px}
.chart .label{fill:var(--ink);font-size:12.5px}.chart .value{fill:#334155;font-size:11px}
.chart .note{fill:var(--muted);font-size:11px}.chart .inside{fill:#0f172a;font-size:11px}
.chart .cell{fill:#0f172a;font-size:12px}.chart .empty{fill:#f1f5f9}
.chart .whisker{stroke-width:2;opacity:.55}.chart .whisker.dark{stroke:#0f172a;opacity:.6}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12.5px;color:#334155}
.chip i{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:6px}
.scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
thead th{font-size:12px;color:var(--muted);font-weight:600}
td.num b{display:block}td.num small{display:block;color:var(--muted);font-size:11px}
.tag{display:inline-block;border-radius:999px;padding:0 8px;font-size:11px;font-weight:600;
background:#e2e8f0;color:#334155}.tag.ok{background:#dcfce7;color:#166534}
.tag.bad{background:#fee2e2;color:#991b1b}.tag.na{background:#fef9c3;color:#854d0e}
.tag.inv{background:#ede9fe;color:#5b21b6}.tag.kind{background:#e0f2fe;color:#075985}
.answer{white-space:pre-wrap;word-break:break-word;margin-top:3px}
td.wording{width:34%}.item{border-top:1px solid var(--line);padding:10px 0}
.item summary{cursor:pointer}.why{color:#b91c1c;font-size:12px;margin-left:6px}
.gold{color:#166534;font-size:13px;margin:6px 0}.muted{color:var(--muted)}
.settings th{width:38%;font-weight:500;color:#334155}.notes{color:#334155}
code{font-size:12px;background:#f1f5f9;border-radius:4px;padding:0 4px}
"""


def render_html(report: Report, worst_items: int = 12) -> str:
    sections = [
        headline_section(report),
        rates_section(report),
        agreement_section(report),
        flips_section(report),
        position_section(report),
        worst_items_section(report, worst_items),
        trust_section(report),
        failures_section(report),
        settings_section(report),
    ]
    body = "".join(section for section in sections if section)
    if not body:
        body = html_section("Nothing to show", "<p>The report holds no metrics and no items.</p>")
    title = escape(report.title)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{title}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>{title}</h1>{_summary(report)}{body}</main></body></html>"
    )
