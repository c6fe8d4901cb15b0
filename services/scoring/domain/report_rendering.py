"""Rendering of the report document (:class:`shared.contracts.scoring.Report`) as JSON, as CSV
of per-item rows, and as one self-contained HTML page with inline SVG charts."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

import msgspec

from steadfast.services.scoring.domain import svg
from steadfast.services.scoring.domain.svg import Point, Series, percent
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.perturb import given_sets_line
from steadfast.shared.contracts.scoring import (
    ItemConsistency,
    MetricValue,
    Report,
    ReportAnswer,
    ReportFormat,
    ReportItem,
    ReportVariant,
)
from steadfast.shared.spreadsheet import spreadsheet_safe

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


def render(report: Report, fmt: ReportFormat, worst_items: int = 12) -> str:
    if fmt == "json":
        return render_json(report)
    if fmt == "csv":
        return render_csv(report)
    return render_html(report, worst_items)


def render_json(report: Report) -> str:
    return msgspec.json.format(msgspec.json.encode(report).decode(), indent=2)


# --- CSV -------------------------------------------------------------------------------------

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


def _per_item(report: Report) -> dict[tuple[str, str], ItemConsistency]:
    items = report.consistency.items if report.consistency else None
    return {(item.item_id, item.model): item for item in items or []}


def render_csv(report: Report) -> str:
    """One row per (item, model, variant) answer, with that question's per-item metrics."""
    per_item = _per_item(report)
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


# --- HTML ------------------------------------------------------------------------------------


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


def _models(report: Report) -> list[str]:
    """Every model the report shows, once each, in the order they first appear."""
    names: list[str] = []
    if report.consistency:
        names += report.consistency.models
    if report.position_bias:
        names += report.position_bias.models
    for item in report.items:
        names += [answer.model for answer in item.answers]
    return list(dict.fromkeys(names))


def _section(title: str, body: str, caption: str = "") -> str:
    note = f'<p class="caption">{escape(caption)}</p>' if caption else ""
    return f"<section><h2>{escape(title)}</h2>{note}{body}</section>"


def _headline_section(report: Report) -> str:
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
    return _section(
        "How reliably each model answers", svg.legend(HEADLINE) + chart + table, caption
    )


def _rates_section(report: Report) -> str:
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
    return _section("Flips and recoveries", svg.legend(RATES) + chart, caption)


def _agreement_shares(items: Iterable[ItemConsistency]) -> list[float]:
    buckets = [0, 0, 0, 0]
    for item in items:
        if item.excluded is not None or item.mode_share is None:
            continue
        share = item.mode_share
        buckets[0 if share >= 1 else 1 if share >= 0.75 else 2 if share >= 0.5 else 3] += 1
    total = sum(buckets)
    return [count / total if total else 0.0 for count in buckets]


def _agreement_section(report: Report) -> str:
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
    return _section("Agreement per question", svg.legend(AGREEMENT) + chart, caption)


def _flips_section(report: Report) -> str:
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
    return _section("Which paraphrases cause flips", chart, caption)


def _position_section(report: Report) -> str:
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
    return _section("Positional bias", pf + svg.legend(POSITION) + pc + pairs, caption)


@dataclass(frozen=True)
class Ranked:
    item: ReportItem
    score: float
    why: str


def _answer_disagreement(answers: Sequence[ReportAnswer]) -> float:
    labels = [a.value or a.label for a in answers if a.variant > 0 and (a.value or a.label)]
    if not labels:
        return 0.0
    return 1.0 - Counter(labels).most_common(1)[0][1] / len(labels)


def _rank_item(item: ReportItem, per_item: dict[tuple[str, str], ItemConsistency]) -> Ranked:
    score, why = 0.0, ""
    models = {answer.model for answer in item.answers}
    removed = {v.index for v in item.variants if v.audited_out}
    for model in sorted(models):
        metrics = per_item.get((item.item_id, model))
        if metrics is not None and metrics.excluded is None and metrics.mode_share is not None:
            flipped = metrics.original_label == "correct" and metrics.majority_label != "correct"
            candidate = (2.0 if flipped else 0.0) + (1.0 if metrics.match is False else 0.0)
            candidate += 1.0 - metrics.mode_share
            reason = "flipped" if flipped else "mismatch" if metrics.match is False else "conflict"
        else:
            answers = [a for a in item.answers if a.model == model and a.variant not in removed]
            candidate, reason = _answer_disagreement(answers), "disagreement"
        if candidate > score:
            score, why = candidate, f"{model}: {reason}"
    return Ranked(item, score, why)


_LABEL_CLASS = {
    "correct": "ok",
    "incorrect": "bad",
    "not_attempted": "na",
    "invalid": "inv",
}


def _answer_cell(answer: ReportAnswer | None) -> str:
    if answer is None:
        return '<td class="muted">–</td>'
    if answer.error:
        return f'<td><span class="tag inv">error</span> {escape(answer.error[:300])}</td>'
    label = answer.label or "ungraded"
    text = answer.text or ""
    short = text if len(text) <= 400 else text[:400] + "…"
    value = f" <code>{escape(answer.value)}</code>" if answer.value else ""
    return (
        f'<td><span class="tag {_LABEL_CLASS.get(label, "")}">{escape(label)}</span>'
        f"{value}<div class='answer'>{escape(short)}</div></td>"
    )


def _item_table(ranked: Ranked, models: Sequence[str]) -> str:
    item = ranked.item
    answers = {(a.model, a.variant): a for a in item.answers}
    variants = sorted(item.variants, key=lambda v: v.index) or [
        ReportVariant(index=index, text=item.question if index == 0 else "")
        for index in sorted({a.variant for a in item.answers})
    ]
    shown = [model for model in models if any(a.model == model for a in item.answers)]
    head = "".join(f"<th>{escape(model)}</th>" for model in shown)
    rows = []
    for variant in variants:
        tag = "original" if variant.index == 0 else (variant.tone or variant.kind or "paraphrase")
        if variant.provenance == "given":
            tag += ", given"
        cells = "".join(_answer_cell(answers.get((model, variant.index))) for model in shown)
        audited = (
            f' <span class="tag inv" title="{escape(variant.audited_out)}">audited out</span>'
            if variant.audited_out
            else ""
        )
        rows.append(
            f'<tr><td class="wording"><span class="tag kind">{escape(tag)}</span>{audited} '
            f"{escape(variant.text)}</td>{cells}</tr>"
        )
    gold = ", ".join(item.gold)
    gold_html = f'<p class="gold">gold: {escape(gold)}</p>' if gold else ""
    return (
        f'<details class="item" open><summary><b>{escape(item.item_id)}</b> '
        f"{escape(item.question[:160])} <span class='why'>{escape(ranked.why)}</span></summary>"
        f'{gold_html}<div class="scroll"><table class="answers"><thead><tr><th>wording</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></details>"
    )


def _worst_section(report: Report, limit: int) -> str:
    if not report.items or limit == 0:
        return ""
    per_item = _per_item(report)
    ranked = sorted(
        (_rank_item(item, per_item) for item in report.items),
        key=lambda r: (-r.score, r.item.item_id),
    )
    worst = [r for r in ranked if r.score > 0][:limit]
    if not worst:
        return _section("Least consistent questions", "<p>Every answer agreed.</p>")
    models = _models(report)
    body = "".join(_item_table(r, models) for r in worst)
    caption = (
        "The questions whose answers changed most across wordings, every wording and every "
        "model's answer side by side."
    )
    return _section("Least consistent questions", body, caption)


def _counts_section(report: Report) -> str:
    if not report.consistency:
        return ""
    rows = "".join(
        f"<tr><th>{escape(name)}</th><td>{c.questions}</td><td>{c.used}</td>"
        f"<td>{c.invalid_answers}</td><td>{c.skipped}</td><td>{c.majority_ties}</td>"
        f"<td>{c.dropped_ties}</td></tr>"
        for name, c in report.consistency.counts.items()
    )
    return (
        '<div class="scroll"><table class="metrics"><thead><tr><th>model</th><th>questions</th>'
        "<th>used</th><th>invalid answers</th><th>skipped</th><th>majority ties</th>"
        f"<th>dropped ties</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _settings_section(report: Report) -> str:
    settings: dict[str, object] = dict(report.settings)
    if report.consistency:
        for name, value in msgspec.structs.asdict(report.consistency.settings).items():
            settings.setdefault(f"consistency.{name}", value)
    if report.position_bias:
        for name, value in msgspec.structs.asdict(report.position_bias.settings).items():
            settings.setdefault(f"position_bias.{name}", value)
    rows = "".join(
        f"<tr><th>{escape(str(name))}</th><td><code>{escape(str(value))}</code></td></tr>"
        for name, value in settings.items()
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in report.notes)
    body = _counts_section(report)
    if rows:
        body += f'<table class="settings"><tbody>{rows}</tbody></table>'
    if notes:
        body += f"<ul class='notes'>{notes}</ul>"
    return _section("Counts and settings used", body) if body else ""


def _threshold_line(what: str, threshold: JudgeThreshold) -> str:
    line = f"{what} threshold <b>{threshold.value:.2f}</b> — {escape(threshold.source)}: "
    line += escape(threshold.origin)
    calibration = threshold.calibration
    at = calibration.at_threshold() if calibration else None
    if calibration is not None and at is not None:
        accepted = at.accepted_equivalent / max(1, calibration.equivalent)
        rejected = at.rejected_other / max(1, calibration.other)
        line += escape(
            f". On {calibration.equivalent} equivalent and {calibration.other} meaning-changing "
            f"labelled pairs ({calibration.pairs}), verification with this threshold accepted "
            f"{accepted:.1%} of the equivalent ones and rejected {rejected:.1%} of the others "
            f"(calibrated {calibration.calibrated_at[:10]}; {calibration.rule})."
        )
    elif threshold.source == "method_default":
        line += (
            " — not calibrated: how often this judge lets a changed question through is unknown."
        )
    return f"<li>{line}</li>"


def _trust_section(report: Report, limit: int = 200) -> str:
    trust = report.trust
    if trust is None:
        return ""
    lines = []
    if trust.stages:
        judge = (
            f" (judge {trust.judge_model}, {trust.judge_prompt_version})"
            if trust.judge_model
            else ""
        )
        check = f"; semantic check: {trust.semantic_check}" if trust.semantic_check else ""
        lines.append(
            f"<li>Verification stages: {escape(', '.join(trust.stages) + judge + check)}</li>"
        )
    lines += [_threshold_line("Judge", threshold) for threshold in trust.judge_thresholds]
    if trust.given_sets:
        lines.append(f"<li>{escape(given_sets_line(trust.given_sets, trust.unverified_sets))}</li>")
    if trust.audit_mode == "off":
        lines.append("<li>Audit: off — the flips were not checked again.</li>")
    elif trust.audit_mode is not None:
        checked = (
            f"Audit ({trust.audit_mode}): {trust.audit_checked} paraphrases checked again, "
            f"{trust.audit_removed} removed from their sets for every model before the "
            f"metrics, {trust.audit_unchecked} could not be checked (kept); "
            f"{trust.audit_calls} judge calls ({trust.audit_cached_calls} answered by the "
            f"response cache), judge {trust.audit_judge_model or '–'}."
        )
        lines.append(f"<li>{escape(checked)}</li>")
        if trust.audit_threshold is not None:
            lines.append(_threshold_line("Audit question", trust.audit_threshold))
    body = f"<ul class='notes'>{''.join(lines)}</ul>"
    if trust.audited_out:
        rows = "".join(
            f"<tr><td>{escape(a.item_id)}</td><td>{a.variant}</td><td>{escape(a.text)}</td>"
            f"<td>{escape(a.reason)}</td></tr>"
            for a in trust.audited_out[:limit]
        )
        body += (
            '<div class="scroll"><table class="metrics"><thead><tr><th>item</th><th>variant</th>'
            f"<th>paraphrase removed</th><th>why</th></tr></thead><tbody>{rows}</tbody>"
            "</table></div>"
        )
    caption = (
        "A rate is only as good as the paraphrases behind it: how they were verified, and the "
        "paraphrases the audit found to change the question."
    )
    return _section("How far to trust these numbers", body, caption)


def _failures_section(report: Report, limit: int = 200) -> str:
    if not report.failures:
        return ""
    rows = "".join(
        f"<tr><td>{escape(f.item_id)}</td><td>{escape(f.model or '')}</td>"
        f"<td>{'' if f.variant is None else f.variant}</td><td>{escape(f.stage)}</td>"
        f"<td>{escape(f.reason)}</td></tr>"
        for f in report.failures[:limit]
    )
    more = len(report.failures) - limit
    extra = f"<p class='caption'>… and {more} more (see the JSON report).</p>" if more > 0 else ""
    table = (
        '<div class="scroll"><table class="metrics"><thead><tr><th>item</th><th>model</th>'
        f"<th>variant</th><th>stage</th><th>reason</th></tr></thead><tbody>{rows}</tbody>"
        f"</table></div>{extra}"
    )
    return _section(f"Failures ({len(report.failures)})", table)


def _summary(report: Report) -> str:
    facts = []
    if report.dataset:
        facts.append(f"dataset <b>{escape(report.dataset)}</b>")
    if report.task:
        facts.append(f"task <b>{escape(report.task)}</b>")
    models = _models(report)
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
        _headline_section(report),
        _rates_section(report),
        _agreement_section(report),
        _flips_section(report),
        _position_section(report),
        _worst_section(report, worst_items),
        _trust_section(report),
        _failures_section(report),
        _settings_section(report),
    ]
    body = "".join(section for section in sections if section)
    if not body:
        body = _section("Nothing to show", "<p>The report holds no metrics and no items.</p>")
    title = escape(report.title)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{title}</title><style>{STYLE}</style></head><body><main>"
        f"<h1>{title}</h1>{_summary(report)}{body}</main></body></html>"
    )
