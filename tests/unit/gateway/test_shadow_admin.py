"""Who may read stored shadow disagreements: the admin key only, and nobody when none is set."""

from __future__ import annotations

from typing import Any

import pytest

from steadfast.services.gateway.controllers.admin import require_admin
from steadfast.services.gateway.settings import GatewaySettings
from steadfast.shared.problems import ProblemError


class _Request:
    def __init__(self, authorization: str | None) -> None:
        self.headers = {"authorization": authorization} if authorization else {}


@pytest.mark.parametrize(
    ("key", "sent", "status"),
    [
        (None, "Bearer anything", 403),
        ("", "Bearer ", 403),
        ("secret", None, 401),
        ("secret", "Bearer wrong", 401),
        ("secret", "secret-but-no-bearer", 401),
    ],
)
def test_without_the_admin_key_disagreements_are_refused(
    key: str | None, sent: str | None, status: int
) -> None:
    settings = GatewaySettings(admin_key=key)
    with pytest.raises(ProblemError) as refused:
        require_admin(_Request(sent), settings)  # type: ignore[arg-type]
    assert refused.value.status == status and refused.value.field == "Authorization"


def test_the_admin_key_reads_them() -> None:
    request: Any = _Request("Bearer secret")
    assert require_admin(request, GatewaySettings(admin_key="secret")) is None
