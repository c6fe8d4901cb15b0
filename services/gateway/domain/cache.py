"""The response cache: its key and the storage interface."""

from __future__ import annotations

import hashlib
from typing import Protocol

import msgspec

from steadfast.services.gateway.domain.backend import Completion
from steadfast.services.gateway.domain.routes import Route
from steadfast.shared.contracts.gateway import GenerateRequest

KEY_VERSION = "v1"


def cache_key(route: Route, request: GenerateRequest) -> str:
    """Hash of the route, its backend model, every message and every output-affecting parameter.

    ``sample_index`` is part of it, so sampled requests (temperature > 0) are cached per sample
    and repeated samples stay independent.
    """
    material = [
        KEY_VERSION,
        route.name,
        route.backend,
        route.model,
        route.resolved_base_url(),
        [[message.role, message.content] for message in request.messages],
        request.temperature,
        request.max_tokens,
        request.seed,
        request.stop,
        request.top_logprobs,
        request.sample_index,
    ]
    if request.n > 1:  # the keys of single-sample requests stay as they were
        material.append(request.n)
    return hashlib.sha256(msgspec.json.encode(material)).hexdigest()


def is_cacheable(completion: Completion) -> bool:
    """Only complete answers with some text: "length" is complete for its ``max_tokens`` (part
    of the key); an empty answer is not stored (a thinking model that spent the budget on
    thoughts, a reply whose content was null: worth asking again); neither are refusals and
    unknown endings."""
    texts = completion.samples or (completion.text,)
    if not all(text.strip() for text in texts):  # every sample, when there are several
        return False
    return completion.finish_reason in ("stop", "length")


class ResponseCache(Protocol):
    """Where the gateway keeps completions by request key, to answer a repeated request without
    an upstream call."""

    async def get(self, key: str) -> Completion | None: ...

    async def put(self, key: str, route: Route, completion: Completion) -> None: ...

    async def close(self) -> None:
        """Finish the stores in flight."""
