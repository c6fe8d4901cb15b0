"""Whether a rewording keeps the quantities of the original: the numbers it lacks, those it adds,
a comparison it turns round or states as a ratio or an amount, a number it moves to another
group, and a rate it gives to something else."""

from __future__ import annotations

from steadfast.shared.language import detect_language
from steadfast.shared.quantities.answer_units import dropped_answer_units
from steadfast.shared.quantities.comparisons import (
    difference_as_amount,
    difference_as_ratio,
    difference_from_a_total,
    difference_without_its_base,
    dropped_comparison_side,
    reversed_comparison,
)
from steadfast.shared.quantities.groups import regrouped_number
from steadfast.shared.quantities.mention import Mention
from steadfast.shared.quantities.rates import moved_rate
from steadfast.shared.quantities.reading import mentions


def quantity_difference(original: str, candidate: str, language: str | None = None) -> str | None:
    """Why the candidate's quantities differ from the original's (None when they agree): the
    original's numbers it lacks, the numbers it adds, (in English) a comparison it turns
    round, and a unit the original asks its answer in that it drops. ``language`` (ISO 639-1)
    picks the number words; default: the original's language, detected."""
    language = language or detect_language(original) or detect_language(candidate) or "en"
    theirs, ours = mentions(original, language), mentions(candidate, language)
    missing = [m for m in theirs if not m.soft and not any(m.matches(c) for c in ours)]
    added = [c for c in ours if not c.soft and not any(c.matches(m) for m in theirs)]
    parts = []
    if missing:
        parts.append("missing " + _listed(missing))
    if added:
        parts.append("added " + _listed(added))
    if language == "en" and (reversal := reversed_comparison(original, candidate)):
        parts.append(reversal)
    if language == "en" and (ratio := difference_as_ratio(original, candidate)):
        parts.append(ratio)
    if language == "en" and (amount := difference_as_amount(original, candidate)):
        parts.append(amount)
    if language == "en" and (dropped_side := dropped_comparison_side(original, candidate)):
        parts.append(dropped_side)
    elif language == "en" and (no_base := difference_without_its_base(original, candidate)):
        parts.append(no_base)  # a side dropped says it already
    if language == "en" and (from_total := difference_from_a_total(original, candidate)):
        parts.append(from_total)
    if language == "en" and (regrouping := regrouped_number(original, candidate)):
        parts.append(regrouping)
    if language == "en" and (rate := moved_rate(original, candidate)):
        parts.append(rate)
    if dropped := dropped_answer_units(original, candidate):
        parts.append("drops the answer's unit " + ", ".join(f'"{unit}"' for unit in dropped))
    return "; ".join(parts) or None


def _listed(found: list[Mention]) -> str:
    shown: list[str] = []
    for mention in found:
        text = mention.written if len(mention.written) <= 40 else mention.written[:12] + "…"
        if f'"{text}"' not in shown:
            shown.append(f'"{text}"')
    return ", ".join(shown)
