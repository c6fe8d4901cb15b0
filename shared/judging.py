"""Reading a one-token YES/NO judge: the verdict of its reply and P(YES) from its first token's
alternatives (the verify service's paraphrase judge and the answer-equivalence judge)."""

from __future__ import annotations

import math
from typing import Literal

from steadfast.shared.contracts.gateway import TokenAlternative


def reply_verdict(reply: str) -> Literal["yes", "no"]:
    return "yes" if reply.strip().upper().startswith("Y") else "no"


def p_yes_from(alternatives: list[TokenAlternative] | None) -> float | None:
    """P(YES) / (P(YES) + P(NO)) over the first token's alternatives."""
    if not alternatives:
        return None
    mass = {"Y": 0.0, "N": 0.0}
    for alternative in alternatives:
        initial = alternative.token.strip().upper()[:1]
        if initial in mass:
            mass[initial] += math.exp(alternative.logprob)
    total = mass["Y"] + mass["N"]
    return mass["Y"] / total if total > 0 else None
