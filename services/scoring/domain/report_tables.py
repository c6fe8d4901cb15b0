"""The report page's tables: counts and settings used, how far to trust the numbers (thresholds,
verification, audit), and failures."""

from __future__ import annotations

from html import escape

import msgspec

from steadfast.services.scoring.domain.report_html_common import html_section
from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.perturb import given_sets_line
from steadfast.shared.contracts.scoring import Report


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


def settings_section(report: Report) -> str:
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
    return html_section("Counts and settings used", body) if body else ""


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


def trust_section(report: Report, limit: int = 200) -> str:
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
    lines += [f"<li><strong>Caveat:</strong> {escape(caveat)}.</li>" for caveat in trust.caveats]
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
    return html_section("How far to trust these numbers", body, caption)


def failures_section(report: Report, limit: int = 200) -> str:
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
    return html_section(f"Failures ({len(report.failures)})", table)
