"""What every section of the report's HTML page uses: the section frame, and the models shown."""

from __future__ import annotations

from html import escape

from steadfast.shared.contracts.scoring import Report


def report_models(report: Report) -> list[str]:
    """Every model the report shows, once each, in the order they first appear."""
    names: list[str] = []
    if report.consistency:
        names += report.consistency.models
    if report.position_bias:
        names += report.position_bias.models
    for item in report.items:
        names += [answer.model for answer in item.answers]
    return list(dict.fromkeys(names))


def html_section(title: str, body: str, caption: str = "") -> str:
    note = f'<p class="caption">{escape(caption)}</p>' if caption else ""
    return f"<section><h2>{escape(title)}</h2>{note}{body}</section>"
