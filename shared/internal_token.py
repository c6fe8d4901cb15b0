"""The token the services send each other: with ``STEADFAST_INTERNAL_TOKEN`` set, perturb,
verify, scoring and the gateway's internal endpoints answer only the calls that carry it (a
401 otherwise, ``shared/guards.py``), so they may listen beyond 127.0.0.1 without being open
to whoever reaches them. Unset, they are open, as on one machine."""

from __future__ import annotations

INTERNAL_TOKEN_HEADER = "X-Steadfast-Internal-Token"
#: the OpenAPI security scheme of the endpoints that ask for it
INTERNAL_TOKEN_SCHEME = "internalToken"


def internal_headers(token: str) -> dict[str, str]:
    """The header a call to another service carries (none in the open local mode)."""
    return {INTERNAL_TOKEN_HEADER: token} if token else {}
