"""Wire contracts shared by the services and their clients, written once as msgspec Structs."""

from steadfast.shared.contracts.base import (
    Contract,
    FieldError,
    HealthStatus,
    Problem,
    ReadinessStatus,
)

__all__ = ["Contract", "FieldError", "HealthStatus", "Problem", "ReadinessStatus"]
