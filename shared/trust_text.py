"""How far to trust an evaluation's numbers, in words: how its paraphrases were verified and
audited, and how its answers were grouped. The command line prints these lines; a study report
shows them per part."""

from __future__ import annotations

from steadfast.shared.contracts.calibration import JudgeThreshold
from steadfast.shared.contracts.evaluator import AuditSummary, EvaluationReport
from steadfast.shared.contracts.perturb import given_sets_line


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
    grouping = report.answer_grouping
    if grouping is not None and grouping.merged:
        lines.append(
            f"answers grouped by meaning ({grouping.clustering}): {grouping.merged} answer(s) "
            f"counted with another's value, {grouping.judge_calls} answer-judge call(s)"
        )
    return [line for line in lines if line]
