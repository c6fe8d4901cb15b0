"""Grouping answers by an LLM judge's equivalence verdict, for answers whose normalised keys
differ but which may say the same thing ("Paris" / "It is Paris, France's capital")."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.gateway.domain.errors import GenerationFailed
from services.gateway.strategies import prompts
from shared.contracts.gateway import ChatMessage, GenerateRequest
from shared.metering import MeteredCaller


@dataclass
class Merge:
    #: every key mapped to the key of its group's first answer
    group_of: dict[str, str]
    notes: list[str] = field(default_factory=list)


async def merge_equivalent(
    model: MeteredCaller, judge: str, question: str, answers: dict[str, str], cache: bool = True
) -> Merge:
    """``answers`` maps each distinct key to a representative answer, in variant order; each key
    joins the first earlier group the judge calls equivalent."""
    merge = Merge(group_of={})
    leaders: list[str] = []
    for key, answer in answers.items():
        merge.group_of[key] = key
        for leader in leaders:
            if await _same(model, judge, question, (answers[leader], answer), cache, merge.notes):
                merge.group_of[key] = leader
                break
        else:
            leaders.append(key)
    return merge


async def _same(
    model: MeteredCaller,
    judge: str,
    question: str,
    pair: tuple[str, str],
    cache: bool,
    notes: list[str],
) -> bool:
    first, second = pair
    request = GenerateRequest(
        model=judge,
        messages=[
            ChatMessage(role="system", content=prompts.EQUIVALENCE_SYSTEM),
            ChatMessage(
                role="user",
                content=prompts.EQUIVALENCE_USER.format(
                    question=question, first=first, second=second
                ),
            ),
        ],
        max_tokens=3,
        cache=cache,
    )
    try:
        reply = await model.generate(request)
    except GenerationFailed as failure:
        notes.append(f"equivalence check failed, answers kept apart ({failure.outcome})")
        return False
    return reply.text.strip().upper().startswith("Y")
