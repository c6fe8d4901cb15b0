"""Model backends, registered by name; each module (and its SDK) is imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from steadfast.services.gateway.domain.backend import Backend
from steadfast.services.gateway.domain.routes import Route


@dataclass(frozen=True)
class BackendContext:
    """What backends may need beyond their route."""

    #: where the local backend assembles its GGUF files
    models_dir: Path
    #: llama.cpp threads of a local route that names none; None: all cores but one
    local_threads: int | None = None


BackendFactory = Callable[[Route, BackendContext], Backend]

#: backend name → "module:factory", imported lazily
_REGISTRY: dict[str, str | BackendFactory] = {
    "openai": "steadfast.services.gateway.adapters.backends.openai:OpenAIBackend",
    "gemini": "steadfast.services.gateway.adapters.backends.gemini:GeminiBackend",
    "ollama": "steadfast.services.gateway.adapters.backends.ollama:OllamaBackend",
    "local": "steadfast.services.gateway.adapters.backends.local:LocalBackend",
}


def create_backend(route: Route, context: BackendContext) -> Backend:
    try:
        entry = _REGISTRY[route.backend]
    except KeyError:
        raise ValueError(f"route {route.name!r}: unknown backend {route.backend!r}") from None
    if isinstance(entry, str):
        module_name, _, attribute = entry.partition(":")
        entry = getattr(importlib.import_module(module_name), attribute)
        _REGISTRY[route.backend] = entry
    return entry(route, context)
