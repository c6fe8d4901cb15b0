"""Entailment from an NLI model served over HTTP with text-embeddings-inference's ``/predict``.

Request ``{"inputs": [[premise, hypothesis], ...]}``; response one list of ``{label, score}``
per pair (softmaxed). The label naming entailment (not "not_entailment") carries
P(premise ⇒ hypothesis).
"""

from __future__ import annotations

import re

import msgspec

from steadfast.shared.backoff import Backoff
from steadfast.shared.http_client import ServiceCallError, ServiceClient


class LabelScore(msgspec.Struct):
    """One label's score in an NLI server's ``/predict`` reply."""

    label: str
    score: float


#: a model server restarting or busy for a moment must not fail a round of candidates
NLI_RETRY = Backoff(attempts=3, base_delay_s=0.5)


def _worth_retrying(error: Exception) -> bool:
    if not isinstance(error, ServiceCallError):
        return False
    return error.unreachable or error.status == 429 or (error.status or 0) >= 500


class NliEndpoint:
    """An NLI model served by text-embeddings-inference: the entailment probability of
    text pairs (the ``nli`` check)."""

    def __init__(self, base_url: str, timeout_s: float = 60.0, retry: Backoff = NLI_RETRY) -> None:
        self._client = ServiceClient("nli", base_url, timeout_s)
        self._retry = retry

    async def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        body = {"inputs": [[premise, hypothesis] for premise, hypothesis in pairs]}
        scored = await self._retry.run(
            lambda: self._client.post("/predict", body, list[list[LabelScore]]),
            retryable=_worth_retrying,
        )
        if len(scored) != len(pairs):
            raise ValueError(f"NLI endpoint answered {len(scored)} results for {len(pairs)} pairs")
        return [_entailment_score(labels) for labels in scored]


def _entailment_score(labels: list[LabelScore]) -> float:
    """The score of the label that names entailment ("ENTAILMENT", "entails"...), not its
    negation: two-class models also have a "not_entailment" label."""
    for entry in labels:
        words = _LABEL_WORDS.split(entry.label.lower())
        entails = any(word.startswith("entail") for word in words)
        if entails and not _NEGATIONS.intersection(words):
            return entry.score
    raise ValueError(f"NLI endpoint gave no entailment label: {[e.label for e in labels]}")


_LABEL_WORDS = re.compile(r"[^a-z]+")
_NEGATIONS = {"not", "non", "no"}
