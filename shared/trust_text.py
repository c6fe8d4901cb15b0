"""How far to trust an evaluation's numbers, in words: how its paraphrases were verified and
audited, and how its answers were grouped. The command line prints these lines; a study report
shows them per part."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.evaluator import AuditSummary, EvaluationReport
from steadfast.shared.contracts.perturb import given_sets_line
from steadfast.shared.language import detect_language


def _threshold(threshold: JudgeThreshold) -> str:
    return f"{threshold.value:.2f} ({threshold.source}: {threshold.origin})"


def verification_line(report: EvaluationReport) -> str | None:
    """The checks every paraphrase passed, the judge's threshold and where it came from."""
    verification = report.verification
    if verification is None:
        return (
            f"paraphrases verified with: {report.semantic_check}" if report.semantic_check else None
        )
    stages = [
        f"semantic ({verification.semantic_check})"
        if stage == "semantic" and verification.semantic_check
        else stage
        for stage in verification.stages
    ]
    line = f"paraphrases verified with: {', '.join(stages) or 'no check'}"
    if verification.judge_model and "judge" in verification.stages:
        thresholds = "; ".join(_threshold(t) for t in verification.judge_thresholds)
        line += f"; judge {verification.judge_model} ({verification.judge_prompt_version})"
        line += f" at {thresholds}" if thresholds else ""
    if verification.given_sets:
        line += "; " + given_sets_line(verification.given_sets, verification.unverified_sets)
    return line


def item_languages(report: EvaluationReport) -> list[str]:
    """The language of each item's question (as detected; else the one it was asked in)."""
    return [detect_language(item.question) or item.language for item in report.items]


def calibration_language_line(
    thresholds: Iterable[JudgeThreshold], languages: Sequence[str]
) -> str | None:
    """A warning when items are in a language the judge's calibration did not hold: its
    figures were measured on pairs in the calibration's languages only."""
    calibrated = sorted(
        {code for t in thresholds if t.calibration for code in t.calibration.languages}
    )
    outside = sorted({code for code in languages if code not in calibrated})
    if not calibrated or not outside:
        return None
    count = sum(code in outside for code in languages)
    return (
        f"the judge's threshold was calibrated on questions in {', '.join(calibrated)}; "
        f"{count} of {len(languages)} items are in {', '.join(outside)}, for which its figures "
        "were not measured: their paraphrases may change the question more often "
        "(docs/method.md §1.1, questions in other languages)"
    )


def calibration_caveat(report: EvaluationReport) -> str | None:
    """The warning of ``calibration_language_line`` for a report whose paraphrases the judge
    checked (the command line, studies and the rendered report all give it)."""
    verification = report.verification
    if verification is None or "judge" not in verification.stages:
        return None
    return calibration_language_line(verification.judge_thresholds, item_languages(report))


def audit_line(audit: AuditSummary | None) -> str | None:
    """How many disagreeing paraphrases the audit checked again, removed, and what it cost."""
    if audit is None or audit.mode == "off":
        return "audit: off (flips and conflicts counted without a second check)" if audit else None
    calls = audit.model_calls
    return (
        f"audit ({audit.mode}): {audit.checked} paraphrase(s) checked again, {audit.removed} "
        f"removed from their sets, {audit.unchecked} could not be checked; {calls.calls} judge "
        f"call(s), {calls.cached_calls} from the cache"
    )


def trust_lines(report: EvaluationReport) -> list[str]:
    """What a reader needs to weigh the numbers above: how the paraphrases were verified and
    audited, and how answers were grouped."""
    lines = [verification_line(report), audit_line(report.audit)]
    lines.append(calibration_caveat(report))
    grouping = report.answer_grouping
    if grouping is not None and grouping.merged:
        lines.append(
            f"answers grouped by meaning ({grouping.clustering}): {grouping.merged} answer(s) "
            f"counted with another's value, {grouping.judge_calls} answer-judge call(s)"
        )
    return [line for line in lines if line]
