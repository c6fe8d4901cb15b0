"""The report page's chart sections: how reliably each model answers, flips and recoveries,
agreement per question, the paraphrases that cause flips, and positional bias."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from steadfast.services.scoring.domain import svg
from steadfast.services.scoring.domain.report_html_common import html_section
from steadfast.services.scoring.domain.svg import Point, Series, percent
from steadfast.shared.contracts.scoring import ItemConsistency, MetricValue, Report

HEADLINE = (
    Series("A_orig", "#64748b"),
    Series("A_expected", "#2563eb"),
    Series("A_majority", "#7c3aed"),
    Series("A_any", "#16a34a"),
    Series("A_strict", "#dc2626"),
)
RATES = (
    Series("flip_rate", "#dc2626"),
    Series("recovery_rate", "#16a34a"),
    Series("conflict_rate", "#f59e0b"),
)
AGREEMENT = (
    Series("all paraphrases agree", "#16a34a"),
    Series("≥ 75% agree", "#86efac"),
    Series("50–75% agree", "#fcd34d"),
    Series("< 50% agree", "#f87171"),
)
POSITION = (
    Series("PC", "#2563eb"),
    Series("acc_correct_first", "#64748b"),
    Series("acc_correct_second", "#a855f7"),
)


def _point(metric: MetricValue | None) -> Point:
    if metric is None:
        return Point(None)
    return Point(metric.value, metric.ci_low, metric.ci_high)


def _interval(metric: MetricValue | None) -> str:
    if metric is None or metric.value is None:
        return '<span class="muted">–</span>'
    bounds = ""
    if metric.ci_low is not None and metric.ci_high is not None:
        bounds = f"<small>{percent(metric.ci_low)}–{percent(metric.ci_high)}</small>"
    return f"<b>{percent(metric.value)}</b>{bounds}<small>n={metric.n}</small>"


def headline_section(report: Report) -> str:
    if not report.consistency or not report.consistency.models:
        return ""
    models = report.consistency.models
    chart = svg.dot_plot(
        [
            (name, [_point(metrics.get(s.name)) for s in HEADLINE])
            for name, metrics in models.items()
        ],
        HEADLINE,
        "Accuracy per model with 95% bootstrap intervals",
    )
    header = "".join(f"<th>{escape(s.name)}</th>" for s in (*HEADLINE, *RATES))
    rows = []
    for name, metrics in models.items():
        cells = "".join(
            f'<td class="num">{_interval(metrics.get(s.name))}</td>' for s in (*HEADLINE, *RATES)
        )
        rows.append(f"<tr><th>{escape(name)}</th>{cells}</tr>")
    table = (
        f'<div class="scroll"><table class="metrics"><thead><tr><th>model</th>{header}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    caption = (
        "A_orig: right on the original wording; A_expected: mean accuracy over paraphrases; "
        "A_majority: the paraphrase majority is right; A_any: right on at least one paraphrase; "
        "A_strict: right on every paraphrase (by the strict threshold). The gap between A_any "
        "and A_strict is knowledge the model does not express reliably."
    )
    return html_section(
        "How reliably each model answers", svg.legend(HEADLINE) + chart + table, caption
    )


def rates_section(report: Report) -> str:
    if not report.consistency or not report.consistency.models:
        return ""
    rows = [
        (name, [_point(metrics.get(s.name)) for s in RATES])
        for name, metrics in report.consistency.models.items()
    ]
    chart = svg.bar_chart(rows, RATES, "Flip, recovery and conflict rates per model")
    caption = (
        "flip_rate: original right, paraphrase majority not; recovery_rate: original not right, "
        "majority right; conflict_rate: questions whose paraphrases got different labels."
    )
    return html_section("Flips and recoveries", svg.legend(RATES) + chart, caption)


def _agreement_shares(items: Iterable[ItemConsistency]) -> list[float]:
    buckets = [0, 0, 0, 0]
    for item in items:
        if item.excluded is not None or item.mode_share is None:
            continue
        share = item.mode_share
        buckets[0 if share >= 1 else 1 if share >= 0.75 else 2 if share >= 0.5 else 3] += 1
    total = sum(buckets)
    return [count / total if total else 0.0 for count in buckets]


def agreement_section(report: Report) -> str:
    items = report.consistency.items if report.consistency else None
    if not items:
        return ""
    by_model: dict[str, list[ItemConsistency]] = {}
    for item in items:
        by_model.setdefault(item.model, []).append(item)
    rows = [(name, _agreement_shares(group)) for name, group in by_model.items()]
    chart = svg.stacked_bars(rows, AGREEMENT, "Agreement among paraphrase answers per question")
    caption = (
        "Share of questions by how many paraphrase answers carry the most common label "
        "(mode_share), per model."
    )
    return html_section("Agreement per question", svg.legend(AGREEMENT) + chart, caption)


def flips_section(report: Report) -> str:
    if not report.consistency:
        return ""
    models = list(report.consistency.models)
    rows: list[str] = []
    cells: list[list[Point | None]] = []
    for prefix, table in (
        ("kind", report.consistency.flips_by_kind),
        ("tone", report.consistency.flips_by_tone),
    ):
        groups = sorted({group for per_model in table.values() for group in per_model})
        for group in groups:
            rows.append(f"{prefix}: {group}")
            cells.append(
                [
                    _point(table[model][group].flip_rate)
                    if model in table and group in table[model]
                    else None
                    for model in models
                ]
            )
    if not rows:
        return ""
    chart = svg.heatmap(rows, models, cells, "Flip rate by paraphrase kind and tone")
    caption = (
        "Per paraphrase: the share of paraphrases answered wrongly when the original was "
        "answered correctly, by the paraphrase's kind and tone. Darker is worse."
    )
    return html_section("Which paraphrases cause flips", chart, caption)


def position_section(report: Report) -> str:
    bias = report.position_bias
    if not bias or not bias.models:
        return ""
    rows = [(name, metrics) for name, metrics in bias.models.items()]
    for condition, per_model in bias.by_condition.items():
        rows += [(f"{name} · {condition}", metrics) for name, metrics in per_model.items()]
    pf = svg.diverging(
        [(label, _point(metrics.get("PF"))) for label, metrics in rows],
        "Preference fairness (PF) per model and condition",
        "favours the first slot",
        "favours the second slot",
    )
    pc = svg.bar_chart(
        [(label, [_point(metrics.get(s.name)) for s in POSITION]) for label, metrics in rows],
        POSITION,
        "Position consistency and accuracy by the correct option's slot",
    )
    pair_rows = "".join(
        f"<tr><th>{escape(name)}</th><td>{counts.AB}</td><td>{counts.BA}</td>"
        f"<td>{counts.AA}</td><td>{counts.BB}</td>"
        f"<td class='num'>{_interval(bias.models.get(name, {}).get('invalid_rate'))}</td></tr>"
        for name, counts in bias.pairs.items()
    )
    pairs = (
        '<div class="scroll"><table class="metrics"><thead><tr><th>model</th>'
        "<th>AB consistent, correct</th><th>BA consistent, wrong</th><th>AA primacy</th>"
        f"<th>BB recency</th><th>invalid replies</th></tr></thead><tbody>{pair_rows}"
        "</tbody></table></div>"
    )
    caption = (
        "Each item is asked twice with the options swapped. PF = (BB − AA) / n in [−1, 1]; "
        "PC = (AB + BA) / n. Positive PF: the model prefers whatever stands second."
    )
    return html_section("Positional bias", pf + svg.legend(POSITION) + pc + pairs, caption)
