"""The report page's least consistent questions: items ranked by how much their answers changed
across wordings, each shown with every wording and every model's answer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from steadfast.services.scoring.domain.report_csv import consistency_by_item
from steadfast.services.scoring.domain.report_html_common import html_section, report_models
from steadfast.shared.contracts.scoring import (
    ItemConsistency,
    Report,
    ReportAnswer,
    ReportItem,
    ReportVariant,
)


@dataclass(frozen=True)
class Ranked:
    """An item, how inconsistent its answers were, and why (the model and what went wrong)."""

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


def worst_items_section(report: Report, limit: int) -> str:
    if not report.items or limit == 0:
        return ""
    per_item = consistency_by_item(report)
    ranked = sorted(
        (_rank_item(item, per_item) for item in report.items),
        key=lambda r: (-r.score, r.item.item_id),
    )
    worst = [r for r in ranked if r.score > 0][:limit]
    if not worst:
        return html_section("Least consistent questions", "<p>Every answer agreed.</p>")
    models = report_models(report)
    body = "".join(_item_table(r, models) for r in worst)
    caption = (
        "The questions whose answers changed most across wordings, every wording and every "
        "model's answer side by side."
    )
    return html_section("Least consistent questions", body, caption)
