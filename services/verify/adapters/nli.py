"""Entailment from an NLI model served over HTTP with text-embeddings-inference's ``/predict``.

Request ``{"inputs": [[premise, hypothesis], ...]}``; response one list of ``{label, score}``
per pair (softmaxed). The label naming entailment (not "not_entailment") carries
P(premise ⇒ hypothesis).
"""

from __future__ import annotations

import re

import msgspec

from shared.http_client import ServiceClient


class LabelScore(msgspec.Struct):
    label: str
    score: float


class NliEndpoint:
    def __init__(self, base_url: str, timeout_s: float = 60.0) -> None:
        self._client = ServiceClient("nli", base_url, timeout_s)

    async def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        body = {"inputs": [[premise, hypothesis] for premise, hypothesis in pairs]}
        scored = await self._client.post("/predict", body, list[list[LabelScore]])
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
