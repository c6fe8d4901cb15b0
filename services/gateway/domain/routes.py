"""Model routes: the names callers use, each mapped to a backend and its settings.

Routes come from the TOML file named by ``STEADFAST_MODELS_FILE`` (one ``[models.<name>]`` table
per route). Without a file the bundled local models are routed: ``local``, ``local-small`` and
``local-tiny``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from steadfast.shared.errors import field_from_message

BackendKind = Literal["openai", "gemini", "ollama", "local"]

PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0)]
#: written with floats: typing caches equal Annotated types, and an int bound here would
#: become the one the OpenAPI documents show for every share (`1` for `1.0`)
Share = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://127.0.0.1:11434",
}


class Route(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One route's settings. ``name`` is filled in from the table's key."""

    backend: BackendKind
    model: Annotated[str, msgspec.Meta(min_length=1)]
    name: str = ""
    base_url: str | None = None
    #: name of the environment variable holding the API key; the key itself is never stored
    api_key_env: str | None = None
    max_concurrency: Annotated[int, msgspec.Meta(ge=1, le=4096)] = 8
    requests_per_minute: Annotated[int, msgspec.Meta(ge=1)] | None = None
    #: one attempt's timeout
    timeout_s: PositiveFloat = 120.0
    max_retries: Annotated[int, msgspec.Meta(ge=0, le=20)] = 3
    #: total budget of one request: waiting for a slot, every attempt and every backoff
    deadline_s: PositiveFloat = 600.0
    #: first backoff; doubles per retry (jittered), capped by ``retry_max_s``
    retry_base_s: NonNegativeFloat = 0.5
    retry_max_s: NonNegativeFloat = 30.0
    # local backend only
    n_parallel: Annotated[int, msgspec.Meta(ge=1, le=64)] = 4
    n_ctx: Annotated[int, msgspec.Meta(ge=256)] = 8192
    #: llama.cpp threads; default: all cores but one. Threads of one model synchronise many times
    #: per token, so a thread that must share its core with other work stalls all of them.
    threads: Annotated[int, msgspec.Meta(ge=1, le=256)] | None = None
    #: the P(YES) threshold this route is held to as a judge, for the equivalence prompt and
    #: the audit's second prompt (docs/method.md §1.1); unset: its calibration, else METHOD's 0.5
    judge_threshold: Share | None = None
    audit_threshold: Share | None = None
    #: share of this route's plain chat completions checked in the background with paraphrases
    #: (unset: ``STEADFAST_GATEWAY_SHADOW_RATE``, 0 by default)
    shadow_rate: Share | None = None
    #: keep the questions and answers of checks that disagreed, readable with the admin key
    shadow_store: bool = False

    def resolved_base_url(self) -> str | None:
        return self.base_url or DEFAULT_BASE_URLS.get(self.backend)


class RoutesFileError(ValueError):
    """The routes file cannot be used; the message names the route and the key."""


BUILTIN_ROUTES: dict[str, Route] = {
    "local": Route(name="local", backend="local", model="qwen2.5-coder-1.5b-instruct"),
    "local-small": Route(name="local-small", backend="local", model="qwen2.5-coder-0.5b-instruct"),
    "local-tiny": Route(name="local-tiny", backend="local", model="smollm2-135m-instruct"),
}


def load_routes(path: str | Path | None) -> dict[str, Route]:
    """Routes of the file at ``path``, or the built-in routes when ``path`` is empty."""
    if not path:
        return dict(BUILTIN_ROUTES)
    file = Path(path)
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RoutesFileError(f"routes file {file}: cannot be read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RoutesFileError(f"routes file {file}: not valid TOML: {exc}") from exc
    return parse_routes(document, source=str(file))


def parse_routes(document: dict[str, object], source: str = "routes file") -> dict[str, Route]:
    tables = document.get("models")
    if not isinstance(tables, dict) or not tables:
        raise RoutesFileError(f"{source}: needs at least one [models.<name>] table")
    unknown = sorted(set(document) - {"models"})
    if unknown:
        raise RoutesFileError(f"{source}: unknown top-level key {unknown[0]!r}")
    return {name: _parse_route(name, table, source) for name, table in tables.items()}


def _parse_route(name: str, table: object, source: str) -> Route:
    if not isinstance(table, dict):
        raise RoutesFileError(f"{source}: route {name!r}: must be a table")
    if "name" in table:
        raise RoutesFileError(f"{source}: route {name!r}, key 'name': the table's key is the name")
    try:
        route = msgspec.convert({**table, "name": name}, type=Route)
    except msgspec.ValidationError as exc:
        key = field_from_message(str(exc)) or "?"
        raise RoutesFileError(f"{source}: route {name!r}, key {key!r}: {exc}") from exc
    if route.backend == "local":
        _check_local_model(route, source)
    return route


def _check_local_model(route: Route, source: str) -> None:
    from steadfast.services.gateway.adapters.local_models import BUNDLED_MODELS

    if route.model not in BUNDLED_MODELS:
        known = ", ".join(sorted(BUNDLED_MODELS))
        raise RoutesFileError(
            f"{source}: route {route.name!r}, key 'model': unknown local model "
            f"{route.model!r} (bundled: {known})"
        )
