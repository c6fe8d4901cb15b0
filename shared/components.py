"""Handlers name what they need in their signature; one typed object per service supplies it.

Each service gathers the objects its handlers use (its settings, stores, clients, domain
services) in one dataclass, its *components*. ``component_dependencies`` turns every field of
that dataclass into a Litestar dependency of the same name, so a handler that declares
``evaluations: Evaluations`` receives the running service's ``Evaluations``: what a handler
needs shows in its signature, and mypy checks how the components are built.

The components are set on the app once: by the app factory, or by a startup hook when they need
the database the app opens at startup (``set_components``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide

COMPONENTS = "components"

C = TypeVar("C")


def component_dependencies(components: type[Any]) -> dict[str, Provide]:
    """A dependency for each field of the dataclass ``components``, under the field's name."""
    return {
        field.name: Provide(_provider(field.name), sync_to_thread=False)
        for field in dataclasses.fields(components)
    }


def _provider(name: str) -> Callable[[State], Any]:
    def provide(state: State) -> Any:
        return getattr(state[COMPONENTS], name)

    provide.__name__ = f"provide_{name}"
    return provide


def set_components(app: Litestar, components: object) -> None:
    """Install the service's components (from a startup hook, once they can be built)."""
    app.state[COMPONENTS] = components


def components_of(state: State, kind: type[C]) -> C:
    """The service's components, for code that is not a handler (a guard, a readiness check)."""
    components = state[COMPONENTS]
    if not isinstance(components, kind):
        raise TypeError(f"the app's components are {type(components).__name__}, not {kind}")
    return components
