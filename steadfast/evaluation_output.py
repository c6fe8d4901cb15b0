"""What the evaluation commands print: progress lines with an ETA, the summary table and outcome
of a report, and the thresholds a CI job gates on (``--fail-under`` / ``--fail-over``)."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from typing import TextIO

from steadfast.shared.contracts.evaluator import EvaluationReport, EvaluationStatus, StageProgress
from steadfast.shared.contracts.studies import CONSISTENCY_COLUMNS
from steadfast.shared.trust_text import trust_lines

#: the table's metrics: a study report's consistency columns
SUMMARY_METRICS = CONSISTENCY_COLUMNS
#: the metrics a CI job may gate on (--fail-under / --fail-over)
GATED_METRICS = SUMMARY_METRICS


def bar(stage: StageProgress, width: int = 16) -> str:
    finished = stage.done + stage.failed
    share = finished / stage.total if stage.total else 0.0
    filled = round(share * width)
    failed = f" ({stage.failed} failed)" if stage.failed else ""
    return f"[{'#' * filled}{'.' * (width - filled)}] {finished}/{stage.total}{failed}"


def progress_line(status: EvaluationStatus, now: float | None = None) -> str:
    progress = status.progress
    line = (
        f"{status.status:<9} paraphrase {bar(progress.paraphrase, 10)}  "
        f"answer {bar(progress.answer)}  grade {bar(progress.grade, 10)}"
    )
    remaining = eta_s(status, time.time() if now is None else now)
    return f"{line}  ETA {_duration(remaining)}" if remaining is not None else line


def eta_s(status: EvaluationStatus, now: float) -> float | None:
    """Seconds left at the pace so far (answered share over time since the start); None before
    there is a pace to go by, or once the job ended."""
    started = status.timings.started_at
    fraction = status.progress.fraction
    if status.status != "running" or started is None or not 0.02 <= fraction < 1:
        return None
    elapsed = now - datetime.fromisoformat(started).timestamp()
    return max(0.0, elapsed * (1 - fraction) / fraction)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def gate_failures(
    report: EvaluationReport, under: dict[str, float], over: dict[str, float]
) -> list[str]:
    """Why the evaluation fails the caller's thresholds: a metric below its ``--fail-under`` or
    above its ``--fail-over`` value for some model (or not measured at all)."""
    failures = []
    for summary in report.models:
        for bounds, below in ((under, True), (over, False)):
            for name, bound in bounds.items():
                metric = summary.metrics.get(name)
                value = metric.value if metric else None
                if value is None:
                    failures.append(f"{summary.model}: {name} was not measured")
                elif (value < bound) if below else (value > bound):
                    side = "below" if below else "above"
                    failures.append(f"{summary.model}: {name} {value:.3f} is {side} {bound:g}")
    return failures


def thresholds(pairs: list[str], option: str) -> dict[str, float]:
    """``METRIC=VALUE`` pairs by the report's metric names (any case); a mistake stops the
    command before anything runs."""
    known = {name.lower(): name for name in GATED_METRICS}
    parsed = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name.lower() not in known:
            raise SystemExit(f"{option} {pair}: metric one of {', '.join(GATED_METRICS)}")
        try:
            parsed[known[name.lower()]] = float(value)
        except ValueError:
            raise SystemExit(f"{option} {pair}: expected METRIC=NUMBER") from None
    return parsed


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def summary_table(report: EvaluationReport) -> str:
    header = ["model", *SUMMARY_METRICS, "agreement", "answered", "unparsed", "failed"]
    rows = [header]
    for summary in report.models:
        cells = [summary.model]
        for name in SUMMARY_METRICS:
            metric = summary.metrics.get(name)
            cells.append(f"{_percent(metric.value)} (n={metric.n})" if metric else "-")
        counts = (summary.answered, summary.unparsed, summary.failed)
        cells += [_percent(summary.mean_agreement), *map(str, counts)]
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def print_outcome(report: EvaluationReport, out: TextIO = sys.stdout) -> None:
    print(f"\nevaluation {report.id}: {report.status}", file=out)
    if report.message:
        print(f"note: {report.message}", file=out)
    print(summary_table(report), file=out)
    for line in trust_lines(report):
        print(line, file=out)
    gaps = [
        (s.model, s.metrics.get("A_any"), s.metrics.get("A_strict"))
        for s in report.models
        if s.metrics.get("A_any") and s.metrics.get("A_strict")
    ]
    for model, any_, strict in gaps:
        if any_ and strict and any_.value is not None and strict.value is not None:
            gap = 100 * (any_.value - strict.value)
            print(
                f"{model}: right on at least one wording {_percent(any_.value)}, on every "
                f"wording {_percent(strict.value)} — a gap of {gap:.1f} points",
                file=out,
            )
    for error in report.errors[:10]:
        where = f" {error.model} variant {error.variant}" if error.model else ""
        print(f"  failed: {error.item_id}{where} ({error.stage}): {error.reason}", file=out)
    if len(report.errors) > 10:
        print(f"  ... and {len(report.errors) - 10} more failures", file=out)
