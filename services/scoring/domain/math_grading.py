"""Maths grading (docs/method.md §1.3): the final answer (last ``\\boxed{}``, else the last
number/expression) compared symbolically/numerically with the gold answer by math-verify, with a
sympy/value comparison where math-verify cannot parse either side.

math-verify bounds its parsing and verification time with ``SIGALRM``, which only works in a
process's main thread: :func:`grade_math` enables those timeouts only there (the service runs it
in worker processes, see ``adapters/math_pool.py``)."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from steadfast.shared.answers import extract_math_answer, normalize_math_value
from steadfast.shared.contracts.scoring import GradeResult

logger = logging.getLogger(__name__)


def _timeout(timeout_s: int) -> int | None:
    return timeout_s if threading.current_thread() is threading.main_thread() else None


def _parse(text: str, timeout_s: int) -> list[Any]:
    from math_verify import parse

    try:
        return list(parse(f"${text}$", parsing_timeout=_timeout(timeout_s)))
    except Exception:  # math-verify raises assorted errors on odd LaTeX
        logger.debug("math-verify could not parse %r", text, exc_info=True)
        return []


def _verify(gold: list[Any], prediction: list[Any], timeout_s: int) -> bool:
    from math_verify import verify

    try:
        return bool(verify(gold, prediction, timeout_seconds=_timeout(timeout_s)))
    except Exception:
        logger.debug("math-verify could not compare", exc_info=True)
        return False


#: what the sympy fallback reads: numbers, arithmetic, brackets, sqrt and pi. sympify runs
#: eval, and a model's answer is untrusted text: nothing else reaches it
_ARITHMETIC = re.compile(r"^(?:[0-9.+\-*/^()\s]|sqrt|pi)+$")
#: and nothing that could take sympy a long time (9^9^9^9, a thousand-digit number)
_MAX_ARITHMETIC_CHARS = 64
_MAX_POWERS = 2


def _readable_arithmetic(value: str) -> bool:
    return (
        len(value) <= _MAX_ARITHMETIC_CHARS
        and value.count("^") + value.count("**") <= _MAX_POWERS
        and _ARITHMETIC.match(value) is not None
    )


def _sympy_equal(gold: str, prediction: str) -> bool | None:
    """Numeric comparison of two normalised values with sympy; None when either is not plain
    arithmetic sympy can read."""
    import sympy

    if not (_readable_arithmetic(gold) and _readable_arithmetic(prediction)):
        return None
    try:
        left = sympy.sympify(gold.replace("^", "**"), rational=True)
        right = sympy.sympify(prediction.replace("^", "**"), rational=True)
        return bool(sympy.simplify(left - right) == 0)
    except (sympy.SympifyError, TypeError, ValueError, SyntaxError, AttributeError):
        return None


def values_equal(gold: str, prediction: str, timeout_s: int = 5) -> tuple[bool, str]:
    """Whether two final answers are equal, and which comparison decided it."""
    gold_parsed, predicted_parsed = _parse(gold, timeout_s), _parse(prediction, timeout_s)
    if gold_parsed and predicted_parsed:
        return _verify(gold_parsed, predicted_parsed, timeout_s), "math-verify"
    gold_value, predicted_value = normalize_math_value(gold), normalize_math_value(prediction)
    if gold_value is not None and gold_value == predicted_value:
        return True, "normalised value"
    if gold_value is not None and predicted_value is not None:
        equal = _sympy_equal(gold_value, predicted_value)
        if equal is not None:
            return equal, "sympy"
    return False, "normalised value"


def grade_math(answer_text: str, gold_answer: str, timeout_s: int = 5) -> GradeResult:
    extracted = extract_math_answer(answer_text)
    if extracted is None:
        return GradeResult(label="invalid", parsed=None, reason="no final answer found")
    value = normalize_math_value(extracted)
    if value is None:
        return GradeResult(label="invalid", parsed=extracted, reason="the final answer is empty")
    equal, method = values_equal(gold_answer, extracted, timeout_s)
    verdict = "equals" if equal else "differs from"
    return GradeResult(
        label="correct" if equal else "incorrect",
        parsed=extracted,
        normalized_value=value,
        reason=f"{extracted!r} {verdict} the gold answer {gold_answer!r} ({method})",
    )


def grade_math_batch(pairs: list[tuple[str, str]], timeout_s: int) -> list[GradeResult]:
    """Grade (answer text, gold answer) pairs; the unit of work sent to a worker process. An
    answer that cannot be graded is labelled invalid with the reason; the others stand."""
    return [_graded_or_invalid(answer, gold, timeout_s) for answer, gold in pairs]


def _graded_or_invalid(answer: str, gold: str, timeout_s: int) -> GradeResult:
    try:
        return grade_math(answer, gold, timeout_s)
    except Exception as exc:  # a model's text can trip any parser; one answer, not the batch
        logger.warning("a maths answer could not be graded", exc_info=True)
        reason = f"the answer could not be graded ({type(exc).__name__})"
        return GradeResult(label="invalid", parsed=None, reason=reason)
